"""Play the missing controllers: mark Deployments available or failed, make Services ready.

The test cluster has no kube-controller-manager and no kubelet, so nothing ever updates a
Deployment's status or fills an EndpointSlice. Tests call these to let install waits succeed
(or leave them alone, or mark failure, to exercise time-outs and failure reporting).
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path

MERGE_PATCH = "application/merge-patch+json"


def _client(kubeconfig: Path):
    from kubernetes import config

    return config.new_client_from_config(config_file=str(kubeconfig))


def _now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _condition(type_: str, status: bool, reason: str, message: str) -> dict:
    now = _now()
    return {
        "type": type_,
        "status": "True" if status else "False",
        "reason": reason,
        "message": message,
        "lastUpdateTime": now,
        "lastTransitionTime": now,
    }


def _read_deployment(apps, namespace: str, name: str) -> dict:
    response = apps.read_namespaced_deployment(name, namespace, _preload_content=False)
    return json.loads(response.data)


def _patch_status(kubeconfig: Path, namespace: str, name: str, build_status) -> dict:
    from kubernetes import client

    apps = client.AppsV1Api(_client(kubeconfig))
    deployment = _read_deployment(apps, namespace, name)
    replicas = deployment.get("spec", {}).get("replicas", 1)
    status = build_status(replicas, deployment["metadata"]["generation"], name)
    # A merge patch replaces the whole conditions list, so stale conditions never linger.
    response = apps.patch_namespaced_deployment_status(
        name, namespace, {"status": status}, _content_type=MERGE_PATCH, _preload_content=False
    )
    return json.loads(response.data)


def mark_deployment_available(kubeconfig: Path, namespace: str, name: str) -> dict:
    """Give the Deployment the status a controller reports once all replicas of the new ReplicaSet are up."""

    def status(replicas: int, generation: int, name: str) -> dict:
        return {
            "observedGeneration": generation,
            "replicas": replicas,
            "updatedReplicas": replicas,
            "readyReplicas": replicas,
            "availableReplicas": replicas,
            "conditions": [
                _condition("Available", True, "MinimumReplicasAvailable", "Deployment has minimum availability."),
                _condition("Progressing", True, "NewReplicaSetAvailable",
                           f'ReplicaSet "{name}-testenv" has successfully progressed.'),
            ],
        }

    return _patch_status(kubeconfig, namespace, name, status)


def mark_deployment_failed(kubeconfig: Path, namespace: str, name: str) -> dict:
    """Give the Deployment the status a controller reports when progressDeadlineSeconds ran out."""

    def status(replicas: int, generation: int, name: str) -> dict:
        return {
            "observedGeneration": generation,
            "replicas": replicas,
            "updatedReplicas": replicas,
            # None deletes the field in a merge patch, undoing an earlier mark_deployment_available.
            "readyReplicas": None,
            "availableReplicas": None,
            "unavailableReplicas": replicas,
            "conditions": [
                _condition("Available", False, "MinimumReplicasUnavailable",
                           "Deployment does not have minimum availability."),
                _condition("Progressing", False, "ProgressDeadlineExceeded",
                           f'ReplicaSet "{name}-testenv" has timed out progressing.'),
            ],
        }

    return _patch_status(kubeconfig, namespace, name, status)


# The API server rejects loopback endpoint addresses, so use a documentation address
# (RFC 5737). Nothing dials it: kube-apiserver reaches webhooks through the Service's ClusterIP.
ENDPOINT_ADDRESS = "192.0.2.1"


def make_endpointslice_ready(
    kubeconfig: Path, namespace: str, service_name: str, port: int = 9443, ready: bool = True,
    address: str = ENDPOINT_ADDRESS,
) -> dict:
    """Create (or replace) an EndpointSlice for the Service with one endpoint.

    ready=False makes the endpoint present but not ready, as while a webhook pod starts.
    """
    from kubernetes import client
    from kubernetes.client.exceptions import ApiException

    api = _client(kubeconfig)
    port_entry = {"port": port, "protocol": "TCP"}
    try:
        service = json.loads(client.CoreV1Api(api).read_namespaced_service(
            service_name, namespace, _preload_content=False).data)
        service_ports = service.get("spec", {}).get("ports") or []
        if service_ports and service_ports[0].get("name"):
            port_entry["name"] = service_ports[0]["name"]
    except ApiException as exc:
        if exc.status != 404:
            raise
    name = f"{service_name}-testenv"
    body = {
        "apiVersion": "discovery.k8s.io/v1",
        "kind": "EndpointSlice",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "labels": {
                "kubernetes.io/service-name": service_name,
                "endpointslice.kubernetes.io/managed-by": "testenv.trainerctl",
            },
        },
        "addressType": "IPv4",
        "endpoints": [
            {"addresses": [address], "conditions": {"ready": ready, "serving": ready, "terminating": False}}
        ],
        "ports": [port_entry],
    }
    discovery = client.DiscoveryV1Api(api)
    try:
        response = discovery.create_namespaced_endpoint_slice(namespace, body, _preload_content=False)
    except ApiException as exc:
        if exc.status != 409:
            raise
        response = discovery.replace_namespaced_endpoint_slice(name, namespace, body, _preload_content=False)
    return json.loads(response.data)


def webhook_dial_address(kubeconfig: Path, namespace: str, service_name: str, port: int = 443) -> tuple[str, int]:
    """The (ip, port) kube-apiserver connects to for a webhook served by this Service.

    The test cluster's ClusterIPs are loopback (127.100.0.0/16), so a test can run a real webhook
    server by listening on exactly this address (TLS with the caBundle of the webhook config).
    """
    from kubernetes import client

    service = json.loads(client.CoreV1Api(_client(kubeconfig)).read_namespaced_service(
        service_name, namespace, _preload_content=False).data)
    return service["spec"]["clusterIP"], port
