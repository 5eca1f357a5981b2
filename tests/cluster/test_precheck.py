"""The precheck asks the API server what the current user may do before anything is applied.

On the base test cluster, whose restricted user has no RBAC grant at all.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import subprocess
import sys
from pathlib import Path

import pytest

from trainerctl.cluster.client.client import connect
from trainerctl.cluster.operations import access
from trainerctl.cluster.operations.access import Need, Permission
from trainerctl.cluster.trainer import preflight
from trainerctl.cluster.trainer.dependencies import AVAILABLE, DependencyState

NEEDS = [Need(Permission("patch", "apiextensions.k8s.io", "customresourcedefinitions"), "CRD a"),
         Need(Permission("patch", "apiextensions.k8s.io", "customresourcedefinitions"), "CRD b"),
         Need(Permission("get", "", "configmaps", "default"), "the inventory")]


def test_the_admin_lacks_nothing(test_cluster):
    assert access.missing(connect(str(test_cluster.admin_kubeconfig)), NEEDS) == []


def test_the_restricted_user_lacks_each_permission_once_in_order(test_cluster):
    cluster = connect(str(test_cluster.restricted_kubeconfig))
    lacking = access.missing(cluster, NEEDS)
    assert [n.why for n in lacking] == ["CRD a", "the inventory"]
    finding = preflight.permissions(cluster, NEEDS)
    assert finding.failed and finding.message == (
        "user testenv-restricted may not patch customresourcedefinitions.apiextensions.k8s.io (cluster-scoped), "
        "which this install needs for CRD a; 1 more permission(s) missing (nothing was applied; "
        "`trainerctl check` lists them all)")
    assert finding.details == ["patch customresourcedefinitions.apiextensions.k8s.io (cluster-scoped) (for CRD a)",
                               "get configmaps in namespace default (for the inventory)"]


def _trainerctl(*args: str, kubeconfig) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "KUBECONFIG"}
    return subprocess.run([sys.executable, "-m", "trainerctl", *args, "--kubeconfig", str(kubeconfig)],
                          capture_output=True, text=True, env=env, stdin=subprocess.DEVNULL)


@pytest.fixture(scope="module")
def rendered(tmp_path_factory, upstream, remotes) -> Path:
    """kubeflow/trainer v2.3.0 overlays/manager as trainerctl renders it (JobSet included)."""
    source = upstream / "kubeflow-trainer" / "v2.3.0"
    proc = subprocess.run([sys.executable, "-m", "trainerctl", "render", "--source", str(source), "--overlay",
                           "overlays/manager", *[a for m in remotes.mirrors for a in ("--remote-mirror", m)]],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    path = tmp_path_factory.mktemp("precheck") / "trainer.yaml"
    path.write_text(proc.stdout)
    return path


@pytest.mark.parametrize("dry_run", [False, True])
def test_install_refuses_a_user_without_permissions_before_the_first_apply(test_cluster, rendered, dry_run):
    namespace = f"precheck-{secrets.token_hex(3)}"
    proc = _trainerctl("install", "-f", str(rendered), "-n", namespace, *(["--dry-run"] if dry_run else []),
                       kubeconfig=test_cluster.restricted_kubeconfig)
    assert proc.returncode == 3, proc.stderr
    assert proc.stderr.count("\n") == 1 and proc.stdout == "", proc.stderr
    assert proc.stderr.startswith("error: user testenv-restricted may not patch "
                                  "customresourcedefinitions.apiextensions.k8s.io (cluster-scoped), which this "
                                  "install needs for CustomResourceDefinition "), proc.stderr
    admin = connect(str(test_cluster.admin_kubeconfig))
    assert admin.get_or_none(f"/api/v1/namespaces/{namespace}") is None  # nothing was applied


def test_check_lists_every_missing_permission_and_exits_3(test_cluster, rendered):
    proc = _trainerctl("check", "-f", str(rendered), "-n", "opendatahub", "-o", "json",
                       kubeconfig=test_cluster.restricted_kubeconfig)
    assert proc.returncode == 3, proc.stderr
    report = json.loads(proc.stdout)
    permissions = next(f for f in report["findings"] if f["check"] == "permissions")
    assert permissions["status"] == "fail"
    details = "\n".join(permissions["details"])
    for needed in ("patch clusterroles.rbac.authorization.k8s.io (cluster-scoped)",
                   "patch validatingwebhookconfigurations.admissionregistration.k8s.io (cluster-scoped)",
                   "patch deployments.apps in namespace opendatahub",
                   "create customresourcedefinitions.apiextensions.k8s.io (cluster-scoped)"):
        assert needed in details, details
    assert not report["ok"] and proc.stderr.startswith("error: ")


def test_check_passes_for_the_admin(test_cluster, rendered):
    proc = _trainerctl("check", "-f", str(rendered), "-n", "precheck-admin", kubeconfig=test_cluster.admin_kubeconfig)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "ok    permissions:" in proc.stdout and "ok    kubernetes: Kubernetes v1.37" in proc.stdout, proc.stdout


def test_a_reader_who_may_not_write_is_refused_after_reading_naming_the_first_write(test_cluster, rendered, tmp_path):
    """Every read succeeds (a cluster-wide read-only role), so the review asks for what this run
    would write, and names the first: the CRDs' apply."""
    admin = connect(str(test_cluster.admin_kubeconfig))
    name = f"reader-{secrets.token_hex(3)}"
    admin.request("POST", "/api/v1/namespaces/default/serviceaccounts", body={"metadata": {"name": name}})
    admin.request("POST", "/apis/rbac.authorization.k8s.io/v1/clusterroles", body={
        "metadata": {"name": name}, "rules": [{"apiGroups": ["*"], "resources": ["*"], "verbs": ["get", "list"]}]})
    admin.request("POST", "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", body={
        "metadata": {"name": name}, "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                                                "name": name},
        "subjects": [{"kind": "ServiceAccount", "name": name, "namespace": "default"}]})
    token = admin.request("POST", f"/api/v1/namespaces/default/serviceaccounts/{name}/token",
                          body={"spec": {"expirationSeconds": 600}})["status"]["token"]
    kubeconfig = tmp_path / "reader.kubeconfig"
    config = json.loads(test_cluster.admin_kubeconfig.read_text())
    config["users"][0]["user"] = {"token": token}
    kubeconfig.write_text(json.dumps(config))
    proc = _trainerctl("install", "-f", str(rendered), "-n", name, kubeconfig=kubeconfig)
    assert proc.returncode == 3, proc.stderr
    # create when this cluster has no Trainer CRDs yet, patch when another test installed them
    assert re.match(f"error: user system:serviceaccount:default:{name} may not (create|patch) "
                    r"customresourcedefinitions\.apiextensions\.k8s\.io \(cluster-scoped\)", proc.stderr), proc.stderr
    assert admin.get_or_none(f"/api/v1/namespaces/{name}") is None  # nothing was applied


def test_a_server_below_the_release_floor_is_refused_naming_where_the_floor_comes_from():
    too_old = preflight.kubernetes(("v1.30.4", (1, 30)), "2.3.0")
    assert too_old.failed and too_old.message.startswith(
        "server version v1.30.4 is too old: Trainer 2.3 needs Kubernetes 1.31 or newer (kubeflow/trainer v2.3.0 ")
    assert not preflight.kubernetes(("v1.30.4", (1, 30)), "2.0.0").failed  # 2.0 documents 1.29


def test_a_jobset_older_than_the_release_works_with_is_refused(test_cluster):
    """JobSet installed by the cluster (not rendered): its controller's image tag is its version."""
    admin = connect(str(test_cluster.admin_kubeconfig))
    namespace = f"jobset-{secrets.token_hex(3)}"
    admin.request("POST", "/api/v1/namespaces", body={"metadata": {"name": namespace}})
    labels = {"app.kubernetes.io/part-of": "jobset", "control-plane": "controller-manager"}
    admin.request("POST", f"/apis/apps/v1/namespaces/{namespace}/deployments", body={
        "metadata": {"name": "jobset-controller-manager", "labels": labels},
        "spec": {"selector": {"matchLabels": labels}, "template": {"metadata": {"labels": labels}, "spec": {
            "containers": [{"name": "manager", "image": "registry.k8s.io/jobset/jobset:v0.10.1"}]}}}})
    try:
        deps = DependencyState(AVAILABLE, "JobSet is installed", "cluster")
        old = preflight.jobset_version(admin, deps, "2.3.0")
        assert old.failed and old.message.startswith(
            f"JobSet v0.10.1 runs here (Deployment {namespace}/jobset-controller-manager image "
            "registry.k8s.io/jobset/jobset:v0.10.1), but Trainer 2.3 needs JobSet 0.12.0 or newer")
        assert not preflight.jobset_version(admin, deps, "2.1.0").failed
        rendered = DependencyState(AVAILABLE, "JobSet comes with the render", "render")
        assert not preflight.jobset_version(admin, rendered, "2.3.0").failed
    finally:
        admin.request("DELETE", f"/api/v1/namespaces/{namespace}")


def test_an_istio_injection_label_warns_unless_the_controller_pods_opt_out():
    deployment = {"kind": "Deployment", "metadata": {"name": "manager"}, "spec": {"template": {"metadata": {}}}}
    assert preflight.istio("ns", {}, [deployment]).status == "ok"
    warned = preflight.istio("ns", {"istio-injection": "enabled"}, [deployment])
    assert warned.status == "warn" and "webhook port of manager" in warned.message
    assert preflight.istio("ns", {"istio-injection": "disabled"}, [deployment]).status == "ok"
    deployment["spec"]["template"]["metadata"]["annotations"] = {"sidecar.istio.io/inject": "false"}
    assert preflight.istio("ns", {"istio.io/rev": "canary"}, [deployment]).status == "ok"
