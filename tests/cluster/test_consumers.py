"""Consumers before install: with Kueue's controller Deployment on a real API server, `check` and
`install` refuse a Trainer older than that Kueue needs (exit 3, both versions and the thread named;
--allow-breaking goes ahead), and after an install `status` and verify's consumers tier still warn,
from the same reading (trainerctl/cluster/trainer/consumers.py). Kueue need not run: the check
reads its Deployment's image tag, as on a real cluster."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
import yaml

from tests.support.actions import install
from tests.support.actions import session
from tests.support.cluster import kubeflow_objects
from trainerctl.cluster.install import InstallOptions, RunFailed
from trainerctl.cluster.status import status
from trainerctl.cluster.trainer.verify.consumers import check as verify_consumers_tier
from trainerctl.errors import EXIT_PREFLIGHT

pytestmark = pytest.mark.cluster

KUEUE_NS = "kueue-system"
THREAD = "https://github.com/kubernetes-sigs/kueue/pull/10127"
LINE = ("Kueue v0.17.3 (Deployment kueue-system/kueue-controller-manager) needs Trainer v2.2.0 or later, and this "
        f"install is Trainer v2.1.0 ({THREAD})")


def _kueue(cluster, image: str = "registry.k8s.io/kueue/kueue:v0.17.3") -> None:
    """Kueue's controller Deployment as its release manifests name it, with a kube-rbac-proxy
    sidecar listed first (older releases ran one): the version is Kueue's own image's."""
    cluster.request("POST", "/api/v1/namespaces", body={"metadata": {"name": KUEUE_NS}})
    labels = {"control-plane": "controller-manager", "app.kubernetes.io/name": "kueue"}
    cluster.request("POST", f"/apis/apps/v1/namespaces/{KUEUE_NS}/deployments", body={
        "metadata": {"name": "kueue-controller-manager", "labels": labels},
        "spec": {"selector": {"matchLabels": labels}, "template": {"metadata": {"labels": labels}, "spec": {
            "containers": [{"name": "kube-rbac-proxy", "image": "quay.io/brancz/kube-rbac-proxy:v0.18.1"},
                           {"name": "manager", "image": image}]}}}})


def _check(env, path, *args: str) -> subprocess.CompletedProcess:
    env_vars = {k: v for k, v in os.environ.items() if k != "KUBECONFIG"}
    return subprocess.run([sys.executable, "-m", "trainerctl", "check", "-f", str(path), "-n", "kubeflow-system",
                           "--kubeconfig", env.kubeconfig, *args], capture_output=True, text=True, env=env_vars,
                          stdin=subprocess.DEVNULL)


def test_check_refuses_a_v2_1_target_while_kueue_v0_17_runs_and_allow_breaking_goes_ahead(env, tmp_path):
    """The rendered file says only its controller image (v2.1.0): that is the target's version."""
    rendered = tmp_path / "trainer-v2.1.0.yaml"
    rendered.write_text(yaml.safe_dump_all(kubeflow_objects("v2.1.0")))
    before = _check(env, rendered)
    assert before.returncode == 0, before.stdout + before.stderr
    assert "ok    consumers: no consumer of Trainer with a version floor found (Kueue)" in before.stdout
    _kueue(env.cluster)
    proc = _check(env, rendered)
    assert proc.returncode == EXIT_PREFLIGHT, proc.stdout + proc.stderr
    assert f"FAIL  consumers: {LINE}: install a Trainer release it works with, or pass --allow-breaking" in proc.stdout
    assert "1 check(s) failed, first: consumers: " + LINE in proc.stderr, proc.stderr
    allowed = _check(env, rendered, "--allow-breaking")
    assert allowed.returncode == 0, allowed.stdout + allowed.stderr
    assert f"WARN  consumers: {LINE} (--allow-breaking: installing it anyway)" in allowed.stdout


def test_install_refuses_before_its_first_write_then_status_and_verify_still_warn(env):
    _kueue(env.cluster)
    objects = kubeflow_objects("v2.1.0")
    source = {"trainer_version": "v2.1.0"}
    with pytest.raises(RunFailed) as refused:
        install(objects, cluster=env.cluster, namespace="kubeflow-system", source=source,
                options=InstallOptions(wait=False))
    assert refused.value.exit_code == EXIT_PREFLIGHT and not refused.value.report.objects
    assert str(refused.value).startswith(LINE), str(refused.value)
    # A guard, not advice: --skip-preflight does not skip it.
    with pytest.raises(RunFailed) as skipped:
        install(objects, cluster=env.cluster, namespace="kubeflow-system", source=source,
                options=InstallOptions(wait=False, skip_preflight=True))
    assert skipped.value.exit_code == EXIT_PREFLIGHT and str(skipped.value).startswith(LINE)
    assert not skipped.value.report.objects
    # A dry-run shows its plan, then ends with the same refusal.
    with pytest.raises(RunFailed) as dry:
        install(objects, cluster=env.cluster, namespace="kubeflow-system", source=source,
                options=InstallOptions(wait=False, dry_run=True))
    assert dry.value.exit_code == EXIT_PREFLIGHT and str(dry.value).startswith(LINE)
    assert dry.value.report.objects, "the dry-run's plan"

    report = install(objects, cluster=env.cluster, namespace="kubeflow-system", source=source,
                     options=InstallOptions(wait=False, allow_breaking=True))
    assert not report.failed
    warned = [c for c in status(session(env.cluster, "kubeflow-system"))["consumers"] if c["status"] == "warn"]
    kueue = [c for c in warned if c["check"].startswith("Kueue")]
    assert kueue == [{"tier": "consumers", "check": "Kueue v0.17.3 (Deployment kueue-system/kueue-controller-manager)",
                      "status": "warn", "message": f"needs Trainer v2.2.0 or later, Trainer v2.1.0 is installed ({THREAD})"}]
    assert [r.to_dict() for r in verify_consumers_tier(session(env.cluster, "kubeflow-system"))
            if r.check.startswith("Kueue")] == kueue
