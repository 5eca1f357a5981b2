"""verify's pure parts: the webhook an API server error names and its cause, in the API server's
own words (k8s.io/apiserver admission/plugin/webhook/errors, net's dial errors), and the exit
code a set of results adds up to."""

from __future__ import annotations

from hypothesis import given, strategies as st

from trainerctl.cluster.client.views import Unreadable
from trainerctl.cluster.trainer.verify import runtimes, views, webhooks
from trainerctl.cluster.trainer.verify.result import ERROR, FAIL, OK, TIMEOUT, WARN, Result, VerifyReport

CALL = ('Internal error occurred: failed calling webhook "defaulter.trainjob.trainer.kubeflow.org": failed to call '
        'webhook: Post "https://kubeflow-trainer-controller-manager.kubeflow-system.svc:443/mutate?timeout=10s": ')
CAUSES = {
    "tls: failed to verify certificate: x509: certificate signed by unknown authority": webhooks.UNKNOWN_AUTHORITY,
    'tls: failed to verify certificate: x509: certificate signed by unknown authority (possibly because of '
    '"crypto/rsa: verification error" while trying to verify candidate authority certificate "ca")':
        webhooks.UNKNOWN_AUTHORITY,
    "tls: failed to verify certificate: x509: certificate has expired or is not yet valid: current time "
    "2026-12-05T09:00:00Z is after 2026-12-01T00:00:00Z": webhooks.EXPIRED,
    "tls: failed to verify certificate: x509: certificate is valid for a.b.svc, not "
    "kubeflow-trainer-controller-manager.kubeflow-system.svc": webhooks.WRONG_NAME,
    "tls: failed to verify certificate: x509: certificate is not valid for any names, but wanted to match "
    "kubeflow-trainer-controller-manager.kubeflow-system.svc": webhooks.WRONG_NAME,
    "tls: failed to verify certificate: x509: cannot validate certificate because it has no SANs":
        webhooks.CERTIFICATE,
    'no endpoints available for service "kubeflow-trainer-controller-manager"': webhooks.NO_ENDPOINTS,
    "dial tcp 127.101.0.12:443: connect: connection refused": webhooks.REFUSED,
    "context deadline exceeded": webhooks.TIMED_OUT,
    "dial tcp 10.0.0.1:443: i/o timeout": webhooks.TIMED_OUT,
    "EOF": webhooks.RESET,
    "read tcp 127.0.0.1:1->127.0.0.2:443: read: connection reset by peer": webhooks.RESET,
    'service "x" not found': "unreachable",
}


def test_each_dial_error_is_named():
    for error, cause in CAUSES.items():
        found = webhooks.parse(CALL + error)
        assert found is not None and found.webhook == "defaulter.trainjob.trainer.kubeflow.org"
        assert webhooks.dial_cause(found.error) == cause, error


def test_a_denial_keeps_the_webhook_message():
    found = webhooks.parse('admission webhook "validator.trainjob.trainer.kubeflow.org" denied the request: '
                           'spec.runtimeRef: runtime "x" not found')
    assert found.denied and found.webhook == "validator.trainjob.trainer.kubeflow.org"
    assert found.line() == ('webhook validator.trainjob.trainer.kubeflow.org denied it: spec.runtimeRef: '
                            'runtime "x" not found')


@given(st.text(max_size=200))
def test_an_error_no_webhook_wrote_is_not_a_webhook_failure(text):
    if "webhook \"" not in text:
        assert webhooks.parse(text) is None


def test_a_failure_beats_a_timeout_beats_an_error():
    def report(*statuses):
        return VerifyReport([Result("t", f"c{i}", s, s) for i, s in enumerate(statuses)])

    assert report(OK, WARN).exit_code == 0
    assert report(ERROR, TIMEOUT, FAIL).exit_code == 1
    assert report(ERROR, TIMEOUT).exit_code == 4
    assert report(OK, ERROR).exit_code == 3
    assert report(OK, TIMEOUT, FAIL).error_line() == "verify t: c2: fail"


class _Listing:
    """A cluster whose webhook configurations are `items` (what a confused server may answer)."""

    def __init__(self, items):
        self._items = items

    def items(self, path):
        return self._items


_JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=5),
                     lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=5), c, max_size=3),
                     max_leaves=12)


@given(st.lists(st.dictionaries(st.sampled_from(["webhooks", "metadata"]), _JSON, max_size=2) | _JSON, max_size=3))
def test_webhook_configurations_of_any_shape_give_services_or_nothing(items):
    for svc in webhooks.services_for(_Listing(items), "trainer.kubeflow.org"):
        assert isinstance(svc[0], str) and isinstance(svc[1], str) and isinstance(svc[2], int)


def test_a_webhook_that_is_not_a_mapping_is_skipped():
    hook = {"name": "h", "rules": [{"apiGroups": ["trainer.kubeflow.org"]}],
            "clientConfig": {"service": {"namespace": "ns", "name": "svc"}}}
    assert webhooks.services_for(_Listing([{"webhooks": ["junk", hook, hook]}]), "trainer.kubeflow.org") == \
        [("ns", "svc", 443)]


# -- the Trainer objects verify reads, through their views ------------------------------------------
RUNTIME = {"metadata": {"name": "torch-distributed", "labels": {"trainer.kubeflow.org/framework": "torch"}},
           "spec": {"template": {"spec": {"replicatedJobs": [{"name": "node", "template": {"spec": {"template": {
               "metadata": {"labels": {"a": "b"}}, "spec": {"containers": [{"name": "node"}]}}}}}]}}}}
TRAINJOB = {"metadata": {"name": "j", "namespace": "ns", "uid": "u"}, "status": {"conditions": [
    {"type": "Failed", "status": "True", "reason": "Boom", "message": "the node crashed"}]}}


def test_a_runtime_and_a_trainjob_are_read_by_their_views():
    runtime = runtimes.Runtime.read(RUNTIME)
    assert (runtime.display, runtime.framework) == ("ClusterTrainingRuntime torch-distributed", "torch")
    assert runtime.pod_templates() == [("node", RUNTIME["spec"]["template"]["spec"]["replicatedJobs"][0]
                                        ["template"]["spec"]["template"])]
    job = views.TrainJob.read(TRAINJOB)
    assert (job.meta.uid, job.failed, job.complete) == ("u", "the node crashed", False)


def test_a_runtime_that_does_not_fit_is_skipped_with_its_line():
    bad = {"metadata": {"name": "bad"}, "spec": {"template": {"spec": {"replicatedJobs": ["junk"]}}}}

    class Listing:
        def items(self, path, query=None):
            return [bad, RUNTIME] if "clustertrainingruntimes" in path else []

    unreadable: list[str] = []
    assert [r.name for r in runtimes.listed(Listing(), None, unreadable)] == ["torch-distributed"]
    assert unreadable == ["unreadable ClusterTrainingRuntime bad: spec.template.spec.replicatedJobs[0]: expected a "
                          "mapping, got 'junk'"]


@given(st.sampled_from(["runtime", "trainjob"]), _JSON)
def test_any_json_for_a_trainer_view_gives_the_view_or_one_unreadable_line(which, raw):
    read = runtimes.Runtime.read if which == "runtime" else views.TrainJob.read
    for doc in (raw, {**(RUNTIME if which == "runtime" else TRAINJOB), "spec": raw, "status": raw}):
        try:
            read(doc)
        except Unreadable as exc:
            assert str(exc).startswith("unreadable ") and "\n" not in str(exc)
