"""When the controller stays unready or crash-loops, install's wait, `status`, `verify` and the
support bundle's diagnosis read its log through the real API server and name the cause in one
line; install stops waiting as soon as the cause is one that will not heal (exit 1), not at its
time-out (exit 4).

The pod and its log are the test's (tests/support/fake_kubelet.py: a Node whose kubelet endpoint
serves canned container logs, proxied by kube-apiserver's own pods/log route); the decode log is
what the real v2.2.0 controller wrote (tests/support/controller_logs), the others the shapes the
real parts write (client-go's reflector through klog, Trainer's config loader, the API server's
RBAC message). What the reader does with them is real: the TrainJobs it
lists, the SubjectAccessReview it asks, the RBAC the install applied. The real controllers failing
for these causes are the e2e cluster's."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from tests.support.actions import install
from tests.support.cluster import kubeflow_objects
from tests.support.fake_kubelet import FakeKubelet, controller_pod, crash_looping, running_not_ready
from tests.support.waiting import finishes_within, wait_until
from trainerctl.cluster.install import InstallOptions, RunFailed
from trainerctl.cluster.manager.session import Session
from trainerctl.cluster.status import status, status_text
from trainerctl.cluster.trainer import support
from trainerctl.cluster.trainer.verify import Verify
from trainerctl.errors import EXIT_FAILED, EXIT_TIMEOUT
from trainerctl.owner_label import DEFAULT_OWNER_LABEL
from trainerctl.settings import FIELD_MANAGER

pytestmark = pytest.mark.cluster

NS = "kubeflow-system"
MANAGER = "kubeflow-trainer-controller-manager"
SA_USER = f"system:serviceaccount:{NS}:{MANAGER}"
TIMEOUT = 120  # the install's wait: a cause that will not heal must end it long before
DECODE = ("failed to list *v1alpha1.TrainJob: json: cannot unmarshal string into Go struct field "
          "Trainer.items.spec.trainer.numProcPerNode of type int32")
# What the real v2.2.0 controller logs over such a TrainJob (tests/support/controller_logs/README.md).
REAL_DECODE = Path(__file__).resolve().parents[1] / "support" / "controller_logs" / "cannot-decode-v2.2.0.log"


def _klog_forbidden(resource: str, group: str) -> str:
    """client-go's reflector through klog, as an unready controller logs a list it may not make."""
    plural = f"{resource}.{group}" if group else resource
    err = (f'failed to list *v1.Node: {plural} is forbidden: User "{SA_USER}" cannot list resource "{resource}" '
           f'in API group "{group}" at the cluster scope')
    return (f'E0821 09:40:14.123456       1 reflector.go:204] "Failed to watch" err={json.dumps(err)} '
            'logger="UnhandledError" reflector="pkg/mod/k8s.io/client-go@v0.35.2/tools/cache/reflector.go:289" '
            'type="*v1.Node"')


def _zap(msg: str, error: str, logger: str = "UnhandledError") -> str:
    return json.dumps({"level": "error", "ts": "2026-08-21T09:40:14.1Z", "logger": logger, "caller": "x.go:1",
                       "msg": msg, "error": error, "stacktrace": "main.main\n\t/workspace/main.go:96"})


def _with_controller(env, kubelet: FakeKubelet, state: dict, log: str, previous: bool = False) -> None:
    """Once install has applied the controller's Deployment: its pod, in `state`, logging `log`
    (played beside the install, as the controllers would; its failure fails the test)."""
    failed: list[BaseException] = []

    def play() -> None:
        try:
            path = f"/apis/apps/v1/namespaces/{NS}/deployments/{MANAGER}"
            wait_until(lambda: env.get(path), TIMEOUT, f"install to apply Deployment {MANAGER}")
            pod = f"{MANAGER}-fake-0"
            kubelet.logs[(NS, pod, "manager", previous)] = "I0821 09:40:12.000000 1 main.go:91] start\n" + log + "\n"
            controller_pod(env.cluster, NS, MANAGER, state)
        except BaseException as exc:  # noqa: BLE001 - handed to the test below
            failed.append(exc)

    thread = threading.Thread(target=play, daemon=True)
    thread.start()
    kubelet.players.append((thread, failed))


def _install_fails(env, kubelet: FakeKubelet, objects: list[dict], version: str, timeout: float = TIMEOUT) -> RunFailed:
    def run() -> None:
        install(objects, cluster=env.cluster, namespace=NS, source={"trainer_version": version},
                options=InstallOptions(timeout=timeout, lock_timeout=5))

    with pytest.raises(RunFailed) as failed:
        finishes_within(timeout + 60, "install", run)
    for thread, errors in kubelet.players:
        thread.join(5)
        assert not errors, errors
    return failed.value


def test_a_stored_trainjob_the_new_controller_cannot_decode_is_named_by_install_status_and_verify(env):
    """Trainer 2.1's CRD took numProcPerNode "auto"; 2.2's controller decodes it as an int32."""
    crds = [o for o in kubeflow_objects("v2.1.0") if o["kind"] == "CustomResourceDefinition"]  # no webhook yet
    install(crds, cluster=env.cluster, namespace=NS, source={"trainer_version": "2.1.0"}, options=InstallOptions())
    env.cluster.request("POST", "/api/v1/namespaces", body={"metadata": {"name": "bar-s"}})
    for name, nproc in (("tj-auto", "auto"), ("tj-two", 2)):
        env.cluster.request("POST", "/apis/trainer.kubeflow.org/v1alpha1/namespaces/bar-s/trainjobs", body={
            "apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob", "metadata": {"name": name},
            "spec": {"runtimeRef": {"name": "torch-distributed"}, "suspend": True,
                     "trainer": {"numProcPerNode": nproc}}})
    line = ("the controller cannot read TrainJob bar-s/tj-auto: spec.trainer.numProcPerNode is \"auto\", the v2.2.0 "
            "API wants an integer (`trainerctl upgrade-check`)")
    with FakeKubelet(env.cluster) as kubelet:
        _with_controller(env, kubelet, running_not_ready(), REAL_DECODE.read_text())
        failed = _install_fails(env, kubelet, kubeflow_objects("v2.2.0"), "2.2.0")
        assert failed.exit_code == EXIT_FAILED, str(failed)
        assert f"Deployment {NS}/{MANAGER}: {line}, which will not recover by itself (its log names the cause)" \
               in str(failed), str(failed)
        [cause] = [c for d in failed.report.diagnosis for c in d["causes"] if c["kind"] == "log"][:1]
        assert (cause["reason"], cause["message"], cause["final"]) == ("CannotDecode", line, True)
        assert cause["log"] == [DECODE]

        session = Session(env.cluster, NS, DEFAULT_OWNER_LABEL, FIELD_MANAGER)
        st = status(session)
        [dep] = [d for d in st["deployments"] if d["name"] == MANAGER]
        assert dep["causes"][0]["message"] == line and line in status_text(st)

        bundle = support.collect(session, status=lambda c: {})
        diagnosed = [c for d in bundle.files["diagnosis.json"].data for c in d["causes"] if c["kind"] == "log"]
        assert [c["message"] for c in diagnosed] == [line]

        report = Verify(timeout=10).run(session)
        first = report.first_problem
        assert (first.tier, first.check, first.status) == ("controllers", f"Deployment {NS}/{MANAGER}", "fail")
        assert first.message == f"not available: {line}", report.text()


def test_a_permission_the_controller_lacks_ends_the_wait_and_one_it_has_by_now_does_not(env):
    """RBAC drift: the log's forbidden list is named once the ServiceAccount still lacks it (a
    SubjectAccessReview); a forbidden line for a permission the installed ClusterRole grants (a
    binding that had not reached the authorizer yet) is no cause, and the wait goes on."""
    line = (f"the controller may not list nodes at the cluster scope (user {SA_USER}): its RBAC lacks the "
            "permission")
    with FakeKubelet(env.cluster) as kubelet:
        _with_controller(env, kubelet, running_not_ready(), _klog_forbidden("nodes", ""))
        failed = _install_fails(env, kubelet, kubeflow_objects("v2.2.0"), "2.2.0")
    assert failed.exit_code == EXIT_FAILED, str(failed)
    assert f"Deployment {NS}/{MANAGER}: {line}, which will not recover by itself" in str(failed), str(failed)


def test_a_forbidden_line_the_serviceaccount_is_granted_by_now_is_no_cause(env):
    with FakeKubelet(env.cluster) as kubelet:
        _with_controller(env, kubelet, running_not_ready(), _klog_forbidden("trainjobs", "trainer.kubeflow.org"))
        failed = _install_fails(env, kubelet, kubeflow_objects("v2.2.0"), "2.2.0", timeout=12)
        assert failed.exit_code == EXIT_TIMEOUT, str(failed)
        assert not [c for d in failed.report.diagnosis for c in d["causes"] if c["kind"] == "log"]
        assert any("/containerLogs/" in asked for asked in kubelet.asked), "the log was read"


def test_a_configuration_the_controller_rejects_ends_the_wait_at_its_first_crash(env):
    """The odh-3.5.0 image reading stable's config: its loader's strict decoding error, exit 1."""
    error = 'failed to decode config file: strict decoding error: unknown field "statusServer"'
    line = ('the controller rejects its configuration file: unknown field "statusServer", which its release does not '
            'know (are its image and its config from different releases?)')
    with FakeKubelet(env.cluster) as kubelet:
        _with_controller(env, kubelet, crash_looping(restarts=1), _zap("Unable to load configuration", error, "setup"),
                         previous=True)
        failed = _install_fails(env, kubelet, kubeflow_objects("v2.2.0"), "2.2.0")
    assert failed.exit_code == EXIT_FAILED, str(failed)
    assert f"Deployment {NS}/{MANAGER}: {line}, which will not recover by itself" in str(failed), str(failed)
    [cause] = [c for d in failed.report.diagnosis for c in d["causes"] if c["kind"] == "log"][:1]
    assert (cause["reason"], cause["restarts"], cause["exitCode"], cause["log"]) == ("ConfigRejected", 1, 1, [error])
