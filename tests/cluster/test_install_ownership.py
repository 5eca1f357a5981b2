"""Other managers' fields survive; conflicts are named; takeovers migrate fields."""

from __future__ import annotations

import base64
import copy
import subprocess
import time

import pytest
import yaml

from tests.support.cluster import CERT_ROTATOR, FakeController, ODH_NS, apply_raw, odh_objects, prepare_cluster_for_odh
from tests.support.kubectl import kubectl_binary
from tests.support.actions import install
from trainerctl.cluster.install import InstallOptions, RunFailed

VWC = "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/validator.trainer.kubeflow.org"
SECRET = f"/api/v1/namespaces/{ODH_NS}/secrets/kubeflow-trainer-webhook-cert"
DEPLOY = f"/apis/apps/v1/namespaces/{ODH_NS}/deployments/kubeflow-trainer-controller-manager"
CONFIG = f"/api/v1/namespaces/{ODH_NS}/configmaps/kubeflow-trainer-config"


def annotated(objects: list[dict], value: str) -> list[dict]:
    """A render that differs in every object, so a re-install really re-applies each one."""
    out = copy.deepcopy(objects)
    for o in out:
        o["metadata"].setdefault("annotations", {})["test/render"] = value
    return out


def kubectl(env, *args: str, stdin: str | None = None) -> str:
    return subprocess.run([kubectl_binary(), "--kubeconfig", env.kubeconfig, *args], input=stdin, check=True,
                          capture_output=True, text=True).stdout


def test_cabundle_secret_data_and_scale_survive_reinstalls(env):
    prepare_cluster_for_odh(env.cluster)
    objects = odh_objects()
    with FakeController(env, objects) as fake:
        install(objects, cluster=env.cluster, namespace=ODH_NS, options=InstallOptions(timeout=60))
        kubectl(env, "scale", "-n", ODH_NS, "deployment/kubeflow-trainer-controller-manager", "--replicas=3")
        ca = base64.b64encode(fake.ca).decode()
        for render in (objects, annotated(objects, "2")):
            report = install(render, cluster=env.cluster, namespace=ODH_NS, options=InstallOptions(timeout=60))
            assert not report.failed
            assert all(h["clientConfig"].get("caBundle") == ca for h in env.get(VWC)["webhooks"])
            assert base64.b64decode(env.get(SECRET)["data"]["tls.crt"]) == fake.cert
            assert env.get(DEPLOY)["spec"]["replicas"] == 3
        assert env.get(VWC)["metadata"]["annotations"]["test/render"] == "2"  # it was really re-applied
    secret_managers = {e["manager"] for e in env.get(SECRET)["metadata"]["managedFields"]}
    assert CERT_ROTATOR in secret_managers and "trainerctl" in secret_managers


def test_conflict_names_the_other_manager_and_force_conflicts_takes_over(env, tmp_path, capsys):
    from trainerctl.cli import main

    prepare_cluster_for_odh(env.cluster)
    objects = odh_objects()
    rendered = tmp_path / "render.yaml"
    rendered.write_text(yaml.safe_dump_all(objects))
    with FakeController(env, objects):
        install(objects, cluster=env.cluster, namespace=ODH_NS, options=InstallOptions(timeout=60))
        theirs = {"apiVersion": "v1", "kind": "ConfigMap",
                  "metadata": {"name": "kubeflow-trainer-config", "namespace": ODH_NS},
                  "data": {"controller_manager_config.yaml": "owned: elsewhere\n"}}
        apply_raw(env.cluster, theirs, "gitops-controller")
        code = main(["install", "-f", str(rendered), "--kubeconfig", env.kubeconfig, "-n", ODH_NS])
        err = capsys.readouterr().err
        assert code == 1
        assert 'conflict with field manager "gitops-controller" on .data.controller_manager_config.yaml' in err
        assert "--force-conflicts" in err
        assert "owned: elsewhere" in env.get(CONFIG)["data"]["controller_manager_config.yaml"]
        code = main(["install", "-f", str(rendered), "--kubeconfig", env.kubeconfig, "-n", ODH_NS, "--force-conflicts"])
        assert code == 0, capsys.readouterr().err
    assert "owned: elsewhere" not in env.get(CONFIG)["data"]["controller_manager_config.yaml"]


def _with_legacy_field(objects: list[dict]) -> list[dict]:
    out = copy.deepcopy(objects)
    for o in out:
        if o["kind"] in ("ConfigMap", "Service", "ServiceAccount", "Deployment"):
            o["metadata"]["labels"]["legacy-installer-only"] = "yes"
    return out


def test_takeover_of_client_side_kubectl_apply_then_dropped_field_is_removed(env):
    prepare_cluster_for_odh(env.cluster)
    objects = odh_objects()
    # A client-side `kubectl apply` install (CRDs are too big for its last-applied annotation,
    # so the old install had applied those server-side; runtimes need the webhook).
    legacy = [o for o in _with_legacy_field(objects)
              if o["kind"] in ("Namespace", "ServiceAccount", "ConfigMap", "Service", "Deployment", "ClusterRole",
                               "ClusterRoleBinding", "Secret")]
    kubectl(env, "create", "namespace", ODH_NS)
    kubectl(env, "apply", "-f", "-", stdin=yaml.safe_dump_all(legacy))
    cm = env.get(CONFIG)
    assert "kubectl.kubernetes.io/last-applied-configuration" in cm["metadata"]["annotations"]
    with FakeController(env, objects):
        report = install(objects, cluster=env.cluster, namespace=ODH_NS, options=InstallOptions(timeout=60))
    taken = [o for o in report.objects if o.took_over_from]
    assert {o.name for o in taken} >= {"kubeflow-trainer-config", "kubeflow-trainer-controller-manager"}
    assert all(o.took_over_from == ["kubectl-client-side-apply"] for o in taken)
    for path in (CONFIG, DEPLOY):
        obj = env.get(path)
        assert "legacy-installer-only" not in obj["metadata"]["labels"]
        assert "kubectl.kubernetes.io/last-applied-configuration" not in (obj["metadata"].get("annotations") or {})
        assert "kubectl-client-side-apply" not in {e["manager"] for e in obj["metadata"]["managedFields"]}


def test_takeover_of_the_go_operator(env):
    prepare_cluster_for_odh(env.cluster)
    objects = odh_objects()
    env.cluster.request("POST", "/api/v1/namespaces", body={"metadata": {"name": ODH_NS}})
    for o in _with_legacy_field(objects):
        if o["kind"] in ("ConfigMap", "Service", "ServiceAccount"):
            apply_raw(env.cluster, o, "trainer-module-controller")
    with FakeController(env, objects):
        report = install(objects, cluster=env.cluster, namespace=ODH_NS, options=InstallOptions(timeout=60))
    taken = {o.name: o.took_over_from for o in report.objects if o.took_over_from}
    assert taken.get("kubeflow-trainer-config") == ["trainer-module-controller"]
    cm = env.get(CONFIG)
    assert "legacy-installer-only" not in cm["metadata"]["labels"]
    assert {e["manager"] for e in cm["metadata"]["managedFields"]} == {"trainerctl"}
