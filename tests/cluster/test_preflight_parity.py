"""Refusal parity: every refusal `install` can make before its first write, `check` reports too,
as the same check with the same exit code (they run one list, cluster/trainer/checklist.py).

Each case builds the refusing state on a real API server, runs `install` and then `check` over
kubeflow/trainer v2.3.0 `overlays/manager`, and compares. Cases that change cluster-wide state
(a Helm release record, which is listed cluster-wide, the Go operator's cluster-scoped CR, a JobSet
controller found in any namespace) take a fresh API server; the rest use the session's, each in a
namespace of its own. The Kubernetes floor is the one input not on the cluster: the floors table
is raised above the test cluster's version for that case.
"""

from __future__ import annotations

import base64
import os
import re
import secrets
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.support.cluster import apply_raw, jobset_crd, kubeflow_objects, wait_served
from tests.support.fake_operator import trainer_crd
from tests.support.helm_records import encode_payload
from trainerctl.cluster.check import Check
from trainerctl.cluster.client.client import connect
from tests.support.actions import install
from tests.support.actions import session
from trainerctl.cluster.install import InstallOptions, RunFailed
from trainerctl.cluster.manager import inventory_configmap
from trainerctl.cluster.manager.session import Session
from trainerctl.cluster.operations import helm_releases, install_lock
from trainerctl.cluster.trainer import floors
from trainerctl.cluster.trainer.go_operator import TRAINER_API, TRAINER_CR
from trainerctl.errors import EXIT_PREFLIGHT, EXIT_TIMEOUT
from trainerctl.owner_label import DEFAULT_OWNER_LABEL
from trainerctl.settings import FIELD_MANAGER
from trainerctl.upgrade import guard

pytestmark = pytest.mark.cluster

SOURCE = {"trainer_version": "2.3.0"}
CHARTS = Path(__file__).resolve().parents[3] / "shared" / "charts"


@pytest.fixture(scope="module")
def objects() -> list[dict]:
    return kubeflow_objects("v2.3.0")


def _both(cluster, objects: list[dict], namespace: str, source: dict = SOURCE, **asked):
    """(install's refusal, check's report): install as a CI step would run it, check after it;
    `asked`: more of the install's options (the image check)."""
    options = InstallOptions(upgrade_guard=guard, lock_timeout=1, wait=False, **asked)
    with pytest.raises(RunFailed) as refused:
        install(objects, cluster=cluster, namespace=namespace, source=source, options=options)
    report = Check(options).run(Session(cluster, namespace, DEFAULT_OWNER_LABEL, FIELD_MANAGER), objects, source)
    return refused.value, report


def _assert_same(refusal: RunFailed, report, name: str, exit_code: int) -> None:
    assert refusal.exit_code == exit_code, str(refusal)
    assert not refusal.report.objects, "install refused after writing"
    assert report.failed, report.text()
    first = report.failed[0]
    assert (first.check, first.exit_code) == (name, exit_code), report.text()
    if name == "lock":  # install waited for it, check says it would: the same holder, named alike
        holder = re.compile(r"held by (.+?) since ")
        assert holder.search(str(refusal)).group(1) == holder.search(first.message).group(1)
    else:  # the same reason in the same words (check counts more missing permissions: it asks for all)
        assert str(refusal).split(";")[0] == first.message.split(";")[0]


def _namespace(prefix: str) -> str:
    return f"{prefix}-{secrets.token_hex(3)}"


def _helm_record(cluster, ns: str, release: dict) -> None:
    """Revision 1 of release kubeflow-trainer, as Helm's Secret driver stores it."""
    cluster.request("POST", f"/api/v1/namespaces/{ns}/secrets", body={
        "apiVersion": "v1", "kind": "Secret", "type": helm_releases.RELEASE_TYPE,
        "metadata": {"name": "sh.helm.release.v1.kubeflow-trainer.v1", "namespace": ns,
                     "labels": {"owner": "helm", "name": "kubeflow-trainer", "status": "deployed", "version": "1"}},
        "data": {"release": base64.b64encode(encode_payload(release).encode()).decode()}})


# -- on a fresh API server (cluster-wide state) -------------------------------------------------
def test_a_helm_release_of_the_chart_is_refused_by_both(env, objects, tmp_path):
    chart = yaml.safe_load((CHARTS / "kubeflow-trainer-2.3.0" / "Chart.yaml").read_text())
    ns = "kubeflow-system"
    env.cluster.request("POST", "/api/v1/namespaces", body={"metadata": {"name": ns}})
    release = {"name": "kubeflow-trainer", "namespace": ns, "version": 1, "info": {"status": "deployed"},
               "chart": {"metadata": {"name": chart["name"], "version": chart["version"]}},
               "manifest": "", "hooks": []}
    _helm_record(env.cluster, ns, release)
    refusal, report = _both(env.cluster, objects, ns)
    _assert_same(refusal, report, "helm", EXIT_PREFLIGHT)
    assert "kubeflow-trainer" in report.failed[0].message and "--take-over-helm" in report.failed[0].message
    rendered = tmp_path / "trainer.yaml"  # and as a user runs it: exit 3, naming the release
    rendered.write_text(yaml.safe_dump_all(objects))
    env_vars = {k: v for k, v in os.environ.items() if k != "KUBECONFIG"}
    proc = subprocess.run([sys.executable, "-m", "trainerctl", "check", "-f", str(rendered), "-n", ns,
                           "--kubeconfig", env.kubeconfig], capture_output=True, text=True, env=env_vars,
                          stdin=subprocess.DEVNULL)
    assert proc.returncode == EXIT_PREFLIGHT, proc.stdout + proc.stderr
    assert "FAIL  helm: Trainer here was installed by Helm (" in proc.stdout and "first: helm:" in proc.stderr


def test_a_helm_record_that_does_not_fit_is_refused_by_both(env, objects):
    """A record whose release holds `info` as a string: its chart is unknown, so whether Helm holds
    Trainer cannot be judged; both refuse with the record's line (exit 3)."""
    ns = "kubeflow-system"
    env.cluster.request("POST", "/api/v1/namespaces", body={"metadata": {"name": ns}})
    release = {"name": "kubeflow-trainer", "namespace": ns, "version": 1, "info": "deployed",
               "chart": {"metadata": {"name": "kubeflow-trainer", "version": "2.3.0"}}, "manifest": ""}
    _helm_record(env.cluster, ns, release)
    refusal, report = _both(env.cluster, objects, ns)
    _assert_same(refusal, report, "helm", EXIT_PREFLIGHT)
    assert str(refusal).startswith(f"unreadable Secret {ns}/sh.helm.release.v1.kubeflow-trainer.v1: release.info: "
                                   "expected a mapping, got 'deployed'; whether Helm installed Trainer here cannot be "
                                   "judged"), str(refusal)


def test_the_go_operator_is_refused_by_both(env, objects):
    crd = trainer_crd()
    apply_raw(env.cluster, crd, "test-setup")
    wait_served(env.cluster, crd)
    env.cluster.request("POST", "/apis/components.platform.opendatahub.io/v1alpha1/trainers", body={
        "apiVersion": TRAINER_API[0], "kind": TRAINER_API[1], "metadata": {"name": TRAINER_CR},
        "spec": {"appNamespace": "opendatahub"}})
    refusal, report = _both(env.cluster, objects, "opendatahub")
    _assert_same(refusal, report, "go-operator", EXIT_PREFLIGHT)


def test_a_jobset_below_the_floor_is_refused_by_both(env, objects):
    """JobSet installed by the cluster (its CRD and its controller at v0.10.1), not rendered."""
    crd = jobset_crd()
    apply_raw(env.cluster, crd, "test-setup")
    wait_served(env.cluster, crd)
    ns = "jobset-system"
    env.cluster.request("POST", "/api/v1/namespaces", body={"metadata": {"name": ns}})
    labels = {"app.kubernetes.io/part-of": "jobset", "control-plane": "controller-manager"}
    env.cluster.request("POST", f"/apis/apps/v1/namespaces/{ns}/deployments", body={
        "metadata": {"name": "jobset-controller-manager", "labels": labels},
        "spec": {"selector": {"matchLabels": labels}, "template": {"metadata": {"labels": labels}, "spec": {
            "containers": [{"name": "manager", "image": "registry.k8s.io/jobset/jobset:v0.10.1"}]}}}})
    without_jobset = [o for o in objects if not (o["kind"] == "CustomResourceDefinition"
                                                  and o["metadata"]["name"] == crd["metadata"]["name"])]
    refusal, report = _both(env.cluster, without_jobset, "kubeflow-system")
    _assert_same(refusal, report, "jobset", EXIT_PREFLIGHT)


def test_a_consumer_that_needs_a_newer_trainer_is_refused_by_both(env, objects):
    """Kueue v0.17.3 runs (found in any namespace); the target says it is Trainer 2.1.0."""
    ns = "kueue-system"
    env.cluster.request("POST", "/api/v1/namespaces", body={"metadata": {"name": ns}})
    labels = {"control-plane": "controller-manager"}
    env.cluster.request("POST", f"/apis/apps/v1/namespaces/{ns}/deployments", body={
        "metadata": {"name": "kueue-controller-manager", "labels": labels},
        "spec": {"selector": {"matchLabels": labels}, "template": {"metadata": {"labels": labels}, "spec": {
            "containers": [{"name": "manager", "image": "registry.k8s.io/kueue/kueue:v0.17.3"}]}}}})
    refusal, report = _both(env.cluster, objects, "kubeflow-system", source={"trainer_version": "2.1.0"})
    _assert_same(refusal, report, "consumers", EXIT_PREFLIGHT)
    assert "Kueue v0.17.3" in str(refusal) and "Trainer 2.1.0" in str(refusal) and "kueue/pull/10127" in str(refusal)


# -- on the session's API server, each in a namespace of its own --------------------------------
def test_kubernetes_below_the_release_floor_is_refused_by_both(test_cluster, objects, monkeypatch):
    real = floors.table()
    raised = {k: floors.Floors(v.release, (1, 99), v.kubernetes_source, v.jobset, v.jobset_source)
              for k, v in real.items()}
    monkeypatch.setattr(floors, "table", lambda: raised)
    refusal, report = _both(connect(str(test_cluster.admin_kubeconfig)), objects, _namespace("floor"))
    _assert_same(refusal, report, "kubernetes", EXIT_PREFLIGHT)


def test_missing_permissions_are_refused_by_both(test_cluster, objects):
    refusal, report = _both(connect(str(test_cluster.restricted_kubeconfig)), objects, _namespace("rbac"))
    _assert_same(refusal, report, "permissions", EXIT_PREFLIGHT)


def test_an_unsupported_upgrade_path_is_refused_by_both(test_cluster, objects):
    """Trainer 2.1 installed; the target skips 2.3, whose controller migrates stored objects."""
    cluster = connect(str(test_cluster.admin_kubeconfig))
    ns = _namespace("path")
    cluster.request("POST", "/api/v1/namespaces", body={"metadata": {"name": ns}})
    session(cluster, ns, field_manager=FIELD_MANAGER).resources.write_inventory(
        inventory_configmap.Inventory(ns, {"trainer_version": "2.1.0"}, {}, complete=True))
    refusal, report = _both(cluster, objects, ns, source={"trainer_version": "2.4.0"})
    _assert_same(refusal, report, "upgrade-path", EXIT_PREFLIGHT)


def test_a_held_lock_is_refused_by_both(test_cluster, objects):
    cluster = connect(str(test_cluster.admin_kubeconfig))
    ns = _namespace("lock")
    with install_lock.take(session(cluster, ns, field_manager=FIELD_MANAGER), "install", timeout=0):
        refusal, report = _both(cluster, objects, ns)
    _assert_same(refusal, report, "lock", EXIT_TIMEOUT)


class _MissingImage:
    """The checklist's image check (images.pinning.ImageCheck) as a registry that lacks one image answers it."""

    flag = "--check-images"

    def __init__(self):
        self.asked: list[list[dict]] = []

    def __call__(self, objects: list[dict]) -> list[str]:
        self.asked.append(objects)
        return ["missing: registry.example/trainer:gone: not found at registry.example (used by Deployment x)"]


def test_a_missing_image_is_refused_by_both_before_the_lock(test_cluster, objects):
    """The image check is a check of the one list: install (--check-images) and check (--images)
    refuse with the same line and code; it reads no cluster, so install asks it before the lock,
    and a held lock hides it from neither."""
    cluster = connect(str(test_cluster.admin_kubeconfig))
    ns = _namespace("images")
    images = _MissingImage()
    with install_lock.take(session(cluster, ns, field_manager=FIELD_MANAGER), "install", timeout=0):
        refusal, report = _both(cluster, objects, ns, image_check=images)
    _assert_same(refusal, report, "images", EXIT_PREFLIGHT)
    assert str(refusal).startswith("--check-images: 1 image(s) missing or not checkable: missing: registry.example")
    assert report.findings[0].check == "images" and report.findings[0].details == images(objects)
    assert [f.check for f in report.failed] == ["images", "lock"]  # check goes on and lists the lock too
    assert len(images.asked) == 3  # once each, and once above


def test_no_image_check_unless_asked(test_cluster, objects):
    cluster = connect(str(test_cluster.admin_kubeconfig))
    ns = _namespace("noimages")
    with install_lock.take(session(cluster, ns, field_manager=FIELD_MANAGER), "install", timeout=0):
        refusal, report = _both(cluster, objects, ns)
    assert "images" not in [f.check for f in report.findings]
    _assert_same(refusal, report, "lock", EXIT_TIMEOUT)
