"""The test cluster behaves like a real API server: CRDs, SSA, RBAC, dry-run, restarts, helpers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from tests.support.waiting import wait_until
from tests.testenv.readiness import (
    make_endpointslice_ready,
    mark_deployment_available,
    mark_deployment_failed,
    webhook_dial_address,
)

APPLY = "application/apply-patch+yaml"
MANAGER = "trainerctl-testenv-smoke"
ODH_BASE = Path("upstream/opendatahub-trainer/odh-3.5.0/manifests/base")


def _docs(path: Path) -> list[dict]:
    # libyaml: the pure-Python loader needs seconds for the 2 MB of CRDs.
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    return [doc for doc in yaml.load_all(path.read_text(), Loader=loader) if doc]


def _crd_docs(shared_dir: Path) -> list[dict]:
    files = sorted((shared_dir / ODH_BASE / "crds").glob("trainer.kubeflow.org_*.yaml"))
    return [doc for f in files for doc in _docs(f)]


def _runtime(shared_dir: Path) -> dict:
    (doc,) = _docs(shared_dir / ODH_BASE / "runtimes" / "torch_distributed.yaml")
    return doc


def _apply_crds(api_client, crds: list[dict]) -> None:
    from kubernetes import client

    ext = client.ApiextensionsV1Api(api_client)
    for crd in crds:
        ext.patch_custom_resource_definition(
            crd["metadata"]["name"], crd, field_manager=MANAGER, force=True, _content_type=APPLY,
            _preload_content=False,
        )


def _wait_established(api_client, names: list[str], timeout: float = 60) -> None:
    from kubernetes import client

    ext = client.ApiextensionsV1Api(api_client)
    pending = set(names)

    def all_established() -> bool:
        for name in sorted(pending):
            crd = json.loads(ext.read_custom_resource_definition(name, _preload_content=False).data)
            conditions = {c["type"]: c["status"] for c in (crd.get("status") or {}).get("conditions") or []}
            if conditions.get("Established") == "True":
                pending.discard(name)
        return not pending

    wait_until(all_established, timeout, f"CRDs {sorted(pending)} to be Established")


def _apply_runtime(api_client, runtime: dict, dry_run: str | None = None) -> dict:
    from kubernetes import client

    group, version = runtime["apiVersion"].split("/")
    response = client.CustomObjectsApi(api_client).patch_cluster_custom_object(
        group, version, "clustertrainingruntimes", runtime["metadata"]["name"], runtime,
        field_manager=MANAGER, force=True, dry_run=dry_run, _content_type=APPLY, _preload_content=False,
    )
    return json.loads(response.data)


@pytest.fixture(scope="module")
def trainer_crds(test_cluster, shared_dir) -> list[str]:
    crds = _crd_docs(shared_dir)
    assert len(crds) == 3, [c["metadata"]["name"] for c in crds]
    names = [c["metadata"]["name"] for c in crds]
    _apply_crds(test_cluster.api_client(), crds)
    _wait_established(test_cluster.api_client(), names)
    return names


def test_trainer_crds_and_runtime_apply_and_read_back(test_cluster, shared_dir, trainer_crds):
    from kubernetes import client

    runtime = _runtime(shared_dir)
    applied = _apply_runtime(test_cluster.api_client(), runtime)
    assert applied["metadata"]["managedFields"][0]["manager"] == MANAGER

    got = json.loads(client.CustomObjectsApi(test_cluster.api_client()).get_cluster_custom_object(
        "trainer.kubeflow.org", "v1alpha1", "clustertrainingruntimes", runtime["metadata"]["name"],
        _preload_content=False).data)
    assert got["spec"]["mlPolicy"] == runtime["spec"]["mlPolicy"]
    assert got["metadata"]["labels"] == runtime["metadata"]["labels"]


def test_restricted_user_gets_403_on_the_same_apply(test_cluster, shared_dir, trainer_crds):
    from kubernetes.client.exceptions import ApiException

    with pytest.raises(ApiException) as err:
        _apply_runtime(test_cluster.api_client(restricted=True), _runtime(shared_dir))
    assert err.value.status == 403
    with pytest.raises(ApiException) as err:
        _apply_crds(test_cluster.api_client(restricted=True), [_docs(
            shared_dir / ODH_BASE / "crds" / "trainer.kubeflow.org_clustertrainingruntimes.yaml")[0]])
    assert err.value.status == 403


def test_server_side_dry_run_persists_nothing(test_cluster, shared_dir, trainer_crds):
    from kubernetes import client
    from kubernetes.client.exceptions import ApiException

    runtime = _runtime(shared_dir)
    runtime["metadata"]["name"] = "dry-run-only"
    assert _apply_runtime(test_cluster.api_client(), runtime, dry_run="All")["metadata"]["name"] == "dry-run-only"
    with pytest.raises(ApiException) as err:
        client.CustomObjectsApi(test_cluster.api_client()).get_cluster_custom_object(
            "trainer.kubeflow.org", "v1alpha1", "clustertrainingruntimes", "dry-run-only")
    assert err.value.status == 404


def test_discovery_lists_the_trainer_group(test_cluster, trainer_crds):
    groups = json.loads(test_cluster.get("/apis"))
    assert "trainer.kubeflow.org" in {g["name"] for g in groups["groups"]}
    resources = json.loads(test_cluster.get("/apis/trainer.kubeflow.org/v1alpha1"))["resources"]
    assert {"clustertrainingruntimes", "trainingruntimes", "trainjobs"} <= {r["name"] for r in resources}


def test_webhook_without_backend_fails_fast_on_loopback(test_cluster, namespace):
    """A webhook configuration is stored as in any cluster; calling it hits a loopback ClusterIP,
    where a test could listen (webhook_dial_address)."""
    import socket

    from kubernetes import client
    from kubernetes.client.exceptions import ApiException

    api = test_cluster.api_client()
    service = json.loads(client.CoreV1Api(api).create_namespaced_service(namespace, {
        "metadata": {"name": "webhook"}, "spec": {"ports": [{"port": 443, "targetPort": 9443}]},
    }, _preload_content=False).data)
    assert service["spec"]["clusterIP"].startswith("127.100.")
    name = f"testenv-smoke-{namespace}"
    webhook = {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingWebhookConfiguration",
        "metadata": {"name": name},
        "webhooks": [{
            "name": "vsmoke.testenv.trainerctl.io",
            "clientConfig": {"service": {"name": "webhook", "namespace": namespace, "path": "/validate"}},
            "rules": [{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"],
                       "resources": ["configmaps"]}],
            "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": namespace}},
            "failurePolicy": "Fail",
            "timeoutSeconds": 2,
            "sideEffects": "None",
            "admissionReviewVersions": ["v1"],
        }],
    }
    admission = client.AdmissionregistrationV1Api(api)
    admission.patch_validating_webhook_configuration(name, webhook, field_manager=MANAGER,
                                                     _content_type=APPLY, _preload_content=False)

    def create_probe() -> str:
        def refused() -> str | None:  # the webhook configuration reaches the admission plugin asynchronously
            try:
                client.CoreV1Api(api).create_namespaced_config_map(
                    namespace, {"metadata": {"generateName": "probe-"}}, _preload_content=False)
            except ApiException as exc:
                assert exc.status == 500, exc.body
                assert "failed calling webhook" in exc.body, exc.body
                return exc.body
            return None

        return wait_until(refused, 30, "the API server to call the webhook")

    try:
        assert "dial tcp 127.100." in create_probe()
        address = webhook_dial_address(test_cluster.admin_kubeconfig, namespace, "webhook")
        with socket.create_server(address) as listener:
            listener.settimeout(10)
            body = create_probe()  # connects, then fails TLS against a listener that never answers
            conn, _ = listener.accept()
            conn.close()
        assert "dial tcp" not in body, body
    finally:
        admission.delete_validating_webhook_configuration(name)


def test_readiness_helpers_set_deployment_status_and_endpoints(test_cluster, namespace):
    from kubernetes import client

    api = test_cluster.api_client()
    apps = client.AppsV1Api(api)
    labels = {"app": "smoke"}
    apps.create_namespaced_deployment(namespace, {
        "metadata": {"name": "smoke"},
        "spec": {"replicas": 2, "selector": {"matchLabels": labels}, "template": {
            "metadata": {"labels": labels},
            "spec": {"containers": [{"name": "c", "image": "example.invalid/smoke:1"}]}}},
    }, _preload_content=False)

    status = mark_deployment_available(test_cluster.admin_kubeconfig, namespace, "smoke")["status"]
    conditions = {c["type"]: (c["status"], c["reason"]) for c in status["conditions"]}
    assert conditions == {"Available": ("True", "MinimumReplicasAvailable"),
                          "Progressing": ("True", "NewReplicaSetAvailable")}
    assert status["availableReplicas"] == status["readyReplicas"] == 2
    assert status["observedGeneration"] == 1

    status = mark_deployment_failed(test_cluster.admin_kubeconfig, namespace, "smoke")["status"]
    conditions = {c["type"]: (c["status"], c["reason"]) for c in status["conditions"]}
    assert conditions["Progressing"] == ("False", "ProgressDeadlineExceeded")
    assert "availableReplicas" not in status

    client.CoreV1Api(api).create_namespaced_service(namespace, {
        "metadata": {"name": "webhook"},
        "spec": {"selector": labels, "ports": [{"name": "https", "port": 443, "targetPort": 9443}]},
    }, _preload_content=False)
    make_endpointslice_ready(test_cluster.admin_kubeconfig, namespace, "webhook", ready=False)
    made = make_endpointslice_ready(test_cluster.admin_kubeconfig, namespace, "webhook")
    assert made["endpoints"][0]["conditions"]["ready"] is True
    slices = json.loads(client.DiscoveryV1Api(api).list_namespaced_endpoint_slice(
        namespace, label_selector="kubernetes.io/service-name=webhook", _preload_content=False).data)
    assert [(s["ports"][0]["name"], s["ports"][0]["port"]) for s in slices["items"]] == [("https", 9443)]


def test_restart_apiserver_keeps_data_and_port(test_cluster, trainer_crds):
    from kubernetes import client

    server = test_cluster.server
    test_cluster.restart_apiserver()
    assert test_cluster.server == server
    ext = client.ApiextensionsV1Api(test_cluster.api_client())
    assert ext.read_custom_resource_definition(trainer_crds[0], _preload_content=False).status == 200


@pytest.mark.parametrize("ci, code", [("", 0), ("true", 1)])
def test_build_without_go_explains_and_fails_only_under_ci(tmp_path, ci, code):
    import os
    import subprocess
    import sys

    env = {**os.environ, "TRAINERCTL_GO": str(tmp_path / "no-go"), "XDG_CACHE_HOME": str(tmp_path / "cache"),
           "CI": ci}
    script = Path(__file__).resolve().parents[1] / "testenv" / "build.py"
    proc = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True)
    assert proc.returncode == code
    assert proc.stderr.startswith("error: Go is needed to build the test cluster")
    assert proc.stdout == ""


def test_fresh_namespace_accepts_pods(test_cluster, namespace):
    from kubernetes import client

    pod = json.loads(client.CoreV1Api(test_cluster.api_client()).create_namespaced_pod(namespace, {
        "metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "example.invalid/p:1"}]},
    }, _preload_content=False).data)
    assert pod["spec"]["serviceAccountName"] == "default"
