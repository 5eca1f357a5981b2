"""Every write that passes admission retries a webhook that cannot answer yet (a rollout resets its
connections, a certificate rotation is half done), and nothing else."""

from __future__ import annotations

import pytest

from trainerctl.cluster.manager import webhook_retry
from trainerctl.cluster.manager.apply import ApplyOptions, Planned, apply_one
from trainerctl.cluster.manager.delete import remove_finalizer
from trainerctl.cluster.client.client import ApiError
from trainerctl.cluster.client.discovery import Resource
from trainerctl.cluster.manager.objects import Ref
from trainerctl.cluster.manager.session import Session
from trainerctl.errors import WaitTimeout

TRANSIENTS = [
    'Internal error occurred: failed calling webhook "v.example.org": failed to call webhook: Post "https://svc:443/v": '
    "read tcp 127.0.0.1:1->127.0.0.2:443: read: connection reset by peer",
    'Internal error occurred: failed calling webhook "v.example.org": failed to call webhook: tls: failed to verify '
    "certificate: x509: certificate signed by unknown authority",
    'Internal error occurred: failed calling webhook "v.example.org": failed to call webhook: Post "https://svc:443/v": '
    'no endpoints available for service "svc"',
    # A CRD's conversion webhook answers reads and writes of every stored version alike.
    'conversion webhook for trainer.kubeflow.org/v1alpha1, Kind=ClusterTrainingRuntime failed: Post '
    '"https://svc:443/convert?timeout=30s": dial tcp 127.0.0.2:443: connect: connection refused',
]
META = {"name": "r", "resourceVersion": "7", "finalizers": ["a", "x/legacy"],
        "managedFields": [{"manager": "helm", "operation": "Update", "apiVersion": "v1",
                           "fieldsV1": {"f:spec": {}}}]}


class FlakyCluster:
    """Answers every request with `failures` webhook errors first, then with `answer`."""

    def __init__(self, message: str, failures: int, answer: dict):
        self.message, self.failures, self.answer, self.calls = message, failures, answer, 0

    def _next(self):
        self.calls += 1
        if self.calls <= self.failures:
            raise ApiError(500, "InternalError", self.message)
        return self.answer

    def request(self, method, path, body=None, **kwargs):
        return self._next()

    def call(self, method, path, body=None, **kwargs):
        return 201, self._next()


@pytest.fixture(autouse=True)
def no_sleep(monkeypatch):
    monkeypatch.setattr(webhook_retry.time, "sleep", lambda s: None)


def _planned() -> Planned:
    res = Resource(group="example.org", version="v1", resource="things", kind="Thing", namespaced=False)
    return Planned(Ref("example.org", "Thing", "", "r"), res, {"kind": "Thing"}, "admitted", "h")


WRITES = {
    "apply": lambda c, deadline: apply_one(c, _planned(), ApplyOptions(field_manager="trainerctl", timeout=30),
                                           deadline).action,
    "managed-fields takeover": lambda c, deadline: Session(c, "ns", "a=b", "trainerctl").resources.take_over(
        "/apis/example.org/v1/things/r", META, "v1", ("helm",), deadline),
    "finalizer removal": lambda c, deadline: remove_finalizer(c, "/apis/example.org/v1/things/r", META, "x/legacy",
                                                              deadline),
}


@pytest.mark.parametrize("message", TRANSIENTS)
@pytest.mark.parametrize("write", sorted(WRITES))
def test_each_admitted_write_retries_a_webhook_that_cannot_answer_yet(write, message):
    cluster = FlakyCluster(message, 3, {"metadata": {"resourceVersion": "8"}})
    assert WRITES[write](cluster, float("inf"))
    assert cluster.calls == 4


@pytest.mark.parametrize("write", sorted(WRITES))
def test_the_retry_ends_at_the_deadline_naming_the_webhook(write, monkeypatch):
    cluster = FlakyCluster(TRANSIENTS[0], 10**6, {})
    clock = iter(range(0, 10**6, 5))
    monkeypatch.setattr(webhook_retry.time, "monotonic", lambda: next(clock))
    with pytest.raises(WaitTimeout, match="admission webhook still unreachable at the time-out"):
        WRITES[write](cluster, 60)
    assert 1 < cluster.calls < 20


@pytest.mark.parametrize("status,message", [(500, "etcdserver: request timed out"), (422, "invalid: spec.x"),
                                           (403, 'admission webhook "v" denied the request: no')])
def test_other_errors_are_not_retried(status, message):
    calls = []

    def call():
        calls.append(1)
        raise ApiError(status, "Error", message)

    with pytest.raises(ApiError):
        webhook_retry.until_webhook_answers(call, "thing", deadline=float("inf"))
    assert calls == [1]
