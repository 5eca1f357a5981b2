"""When the rollout fails, install, `status` and the live progress line name the cause, read from
what the real parts of the e2e cluster wrote; then the fault is fixed and a re-run converges.

The causes come from the real kube-scheduler (FailedScheduling), the real ReplicaSet controller
and ResourceQuota admission (FailedCreate), and the process kubelet (tests/testenv/kubelet.py),
which fails like a kubelet where it cannot run a pod: an image tag with no build is ErrImagePull
then ImagePullBackOff, a controller that exits crash-loops with back-off, a missing ConfigMap key
is CreateContainerConfigError, and the previous container's log is served through the API server.

The tests share one namespace: the first installs from nothing (with a quota that forbids every
pod), each later one faults the converged install (fixture `converged`, which installs only when
the test runs alone) and converges it again. The module leaves no Trainer behind.
"""

from __future__ import annotations

import base64
import json
import tarfile
from pathlib import Path

import pytest
import yaml

from tests.support import e2e as h
from tests.support.e2e import KF_NS
from tests.support import json_schema
from tests.testenv.api import ApiError
from trainerctl.cluster.manager.diagnose import CRASH_LOOP_RESTARTS

TRAINER_IMAGE = "ghcr.io/kubeflow/trainer/trainer-controller-manager"
FAULT_TIMEOUT = "20"  # long enough for the real parts to show the cause, short enough to wait out
QUOTA = "e2e-no-pods"


@pytest.fixture(scope="module", autouse=True)
def slate(tctl, api):
    h.cleanup_trainer(tctl, api)
    yield
    h.cleanup_trainer(tctl, api)


def _install(tctl, *args: str, expect: int):
    """install v2.3.0 with `args` (the fault), waiting FAULT_TIMEOUT seconds."""
    return tctl.run("install", *tctl.source_args("v2.3.0"), "--timeout", FAULT_TIMEOUT, *args, expect=expect)


def _converge(tctl) -> None:
    report = tctl.install("v2.3.0")
    assert report["summary"].get("failed", 0) == 0, report
    tctl.run("status", "-n", KF_NS)  # exit 0: Ready


@pytest.fixture
def converged(tctl) -> None:
    """A converged install to fault: the one the previous test left, else a fresh one."""
    if tctl.run("status", "-n", KF_NS, expect=None).returncode != 0:
        _converge(tctl)


def _error_line(proc) -> str:
    lines = [line for line in proc.stderr.splitlines() if line.startswith("error: ")]
    assert len(lines) == 1, proc.stderr
    return lines[0]


def _patched_render(tctl, tmp_path, patch) -> str:
    objects = tctl.render("v2.3.0")
    manager = next(o for o in objects if o["kind"] == "Deployment" and o["metadata"]["name"] == h.TRAINER_DEPLOYMENT)
    patch(manager["spec"]["template"]["spec"]["containers"][0])
    path = tmp_path / "patched.yaml"
    path.write_text(yaml.safe_dump_all(objects))
    return str(path)


def _status_json(tctl) -> dict:
    proc = tctl.run("status", "-n", KF_NS, "-o", "json", expect=1)
    data = json.loads(proc.stdout)
    schema = json.loads((Path(__file__).resolve().parents[2] / "trainerctl" / "data" / "status.schema.json").read_text())
    assert json_schema.errors(data, schema) == []
    return data


def _trainer_causes(status: dict) -> list[dict]:
    dep = next(d for d in status["deployments"] if d["name"] == h.TRAINER_DEPLOYMENT)
    assert not dep["available"]
    return dep["causes"]


def test_1_a_quota_that_forbids_the_pods_is_named_then_lifting_it_converges(tctl, api):
    h.create_namespace(api, KF_NS)
    api.request("POST", f"/api/v1/namespaces/{KF_NS}/resourcequotas", {
        "apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": QUOTA}, "spec": {"hard": {"pods": "0"}}})
    proc = _install(tctl, expect=4)
    error = _error_line(proc)
    assert "pods cannot be created (FailedCreate)" in error, error
    assert f"exceeded quota: {QUOTA}" in proc.stderr, proc.stderr
    # The live progress line said so while waiting, before the time-out.
    waiting = [line for line in proc.stderr.splitlines() if line.startswith("waiting for ")]
    assert any("FailedCreate" in line for line in waiting), waiting
    api.request("DELETE", f"/api/v1/namespaces/{KF_NS}/resourcequotas/{QUOTA}")
    _converge(tctl)


def test_2_a_bad_image_tag_names_the_image_where_it_came_from_and_the_registry_answer(converged, tctl, api):
    bad = f"{TRAINER_IMAGE}:v2.3.0-typo"
    proc = _install(tctl, "--image", f"{TRAINER_IMAGE}={bad}", expect=4)
    error = _error_line(proc)
    assert f"image {bad} (from --image {TRAINER_IMAGE}) cannot be pulled" in error, error
    assert f"{bad}: not found" in proc.stderr, proc.stderr
    status = tctl.run("status", "-n", KF_NS, expect=1)
    assert f"image {bad} (from --image {TRAINER_IMAGE}) cannot be pulled" in status.stdout, status.stdout
    [cause] = _trainer_causes(_status_json(tctl))
    assert cause["kind"] == "image" and cause["image"] == bad and cause["reason"] in ("ErrImagePull", "ImagePullBackOff")
    assert cause["imageOrigin"] == f"--image {TRAINER_IMAGE}" and not cause["final"]
    _converge(tctl)


def test_3_a_controller_that_crashes_on_an_unknown_flag_fails_the_install_early_with_its_log(converged, tctl, api,
                                                                                              tmp_path):
    manifest = _patched_render(tctl, tmp_path, lambda c: c["args"].append("--no-such-flag"))
    proc = tctl.run("install", "-f", manifest, "-n", KF_NS, "--timeout", "240", expect=1)
    error = _error_line(proc)
    assert "container manager crashes (CrashLoopBackOff, exit code 2" in error, error
    assert "will not recover by itself" in error, error
    assert "flag provided but not defined: -no-such-flag" in proc.stderr, proc.stderr
    report = json.loads(tctl.run("install", "-f", manifest, "-n", KF_NS, "--timeout", "240", "-o", "json",
                                 expect=1).stdout)
    crash = next(c for d in report["diagnosis"] for c in d["causes"] if c["kind"] == "crash")
    assert crash["final"] and crash["restarts"] >= CRASH_LOOP_RESTARTS and crash["exitCode"] == 2
    _converge(tctl)


def test_4_an_unmatched_node_selector_names_the_scheduler_message(converged, tctl, api):
    proc = _install(tctl, "--set", "manager.nodeSelector.disktype=ssd", expect=4)
    error = _error_line(proc)
    assert "pod cannot be scheduled (FailedScheduling)" in error, error
    assert "node(s) didn't match Pod's node affinity/selector" in proc.stderr, proc.stderr
    [cause] = _trainer_causes(_status_json(tctl))
    assert cause["kind"] == "unschedulable" and "0/3 nodes are available" in cause["message"]
    _converge(tctl)


def test_5_a_missing_configmap_key_names_the_configmap_and_key(converged, tctl, api, tmp_path):
    def missing_key(container: dict) -> None:
        container.setdefault("env", []).append({"name": "E2E_SETTING", "valueFrom": {"configMapKeyRef": {
            "name": "kubeflow-trainer-public", "key": "no-such-key"}}})

    manifest = _patched_render(tctl, tmp_path, missing_key)
    proc = tctl.run("install", "-f", manifest, "-n", KF_NS, "--timeout", FAULT_TIMEOUT, expect=4)
    error = _error_line(proc)
    assert "container manager cannot start (CreateContainerConfigError)" in error, error
    assert f"couldn't find key no-such-key in ConfigMap {KF_NS}/kubeflow-trainer-public" in proc.stderr
    _converge(tctl)


PLANTED = "e2e-planted-secret-value-5f3a9c"


def test_6_support_bundle_holds_what_a_ticket_needs_and_no_secret(converged, tctl, api, e2e_cluster, tmp_path):
    secret_path = f"/api/v1/namespaces/{KF_NS}/secrets/{h.TRAINER_SECRET}"
    api.request("PATCH", secret_path, {"stringData": {"planted": PLANTED}},
                content_type="application/merge-patch+json")
    tls_key = api.request("GET", secret_path)["data"]["tls.key"]
    # A controller that quotes a Secret in an error: the value must not leak through the event.
    api.request("POST", f"/api/v1/namespaces/{KF_NS}/events", {
        "apiVersion": "v1", "kind": "Event", "metadata": {"name": "e2e-planted"},
        "involvedObject": {"kind": "Secret", "namespace": KF_NS, "name": h.TRAINER_SECRET},
        "reason": "Planted", "message": f"value was {PLANTED}", "type": "Warning", "count": 1,
        "source": {"component": "e2e"}})
    out = tmp_path / "bundle.tar.gz"
    tctl.run("support-bundle", "-n", KF_NS, "--output-file", str(out))
    assert (out.stat().st_mode & 0o777) == 0o600
    with tarfile.open(out) as tar:
        members = {m.name.split("/", 1)[1]: tar.extractfile(m).read() for m in tar.getmembers() if m.isfile()}
    for required in ("README.txt", "manifest.json", "versions.json", "inventory.json", "status.json",
                     "diagnosis.json", f"events/{KF_NS}.json", "crds.json", "workloads.json", "nodes.json"):
        assert required in members, sorted(members)
    assert any(name.startswith("logs/") and name.endswith("/manager.log") for name in members), sorted(members)
    secret_file = f"objects/core/Secret/{KF_NS}/{h.TRAINER_SECRET}.yaml"
    assert set(yaml.safe_load(members[secret_file])["data"]) >= {"tls.key", "tls.crt", "planted"}
    everything = b"".join(members.values())
    forbidden = {PLANTED, base64.b64encode(PLANTED.encode()).decode(), tls_key, base64.b64decode(tls_key).decode(),
                 e2e_cluster.admin_token}
    forbidden |= {line for line in base64.b64decode(tls_key).decode().splitlines() if len(line) > 20}
    for value in forbidden:
        assert value.encode() not in everything, f"the bundle holds a secret value ({value[:12]}...)"
    assert b"caBundle: <elided>" in everything
    versions = json.loads(members["versions.json"])
    assert versions["server"]["gitVersion"].startswith("v1.37") and versions["jobset"]["running"] == "v0.12.0"

    # A read-only troubleshooter (the `view` role in the namespace) gets a bundle too, told what it missed.
    api.request("POST", f"/apis/rbac.authorization.k8s.io/v1/namespaces/{KF_NS}/rolebindings", {
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding", "metadata": {"name": "e2e-view"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "view"},
        "subjects": [{"kind": "User", "name": "testenv-restricted", "apiGroup": "rbac.authorization.k8s.io"}]})
    viewer = h.Trainerctl(str(e2e_cluster.restricted_kubeconfig), tctl.shared, tctl.mirrors, tctl.workdir)
    out2 = tmp_path / "viewer.tar.gz"
    viewer.run("support-bundle", "-n", KF_NS, "--output-file", str(out2))
    with tarfile.open(out2) as tar:
        readme = next(tar.extractfile(m).read().decode() for m in tar.getmembers() if m.name.endswith("README.txt"))
        names = [m.name for m in tar.getmembers()]
    assert "Could not read" in readme and "nodes: HTTP 403" in readme, readme
    assert any(n.endswith("/manager.log") for n in names), names
    try:
        api.request("DELETE", f"/apis/rbac.authorization.k8s.io/v1/namespaces/{KF_NS}/rolebindings/e2e-view")
    except ApiError:
        pass
