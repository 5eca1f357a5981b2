"""A node for the base test cluster whose kubelet endpoint serves container logs, and the pods of
a Deployment in the state a failing controller leaves them (tests/cluster/test_controller_log.py).

The base cluster has no kubelet and no controllers (tests/testenv/cluster.py). A Node object
whose InternalIP and kubelet port point at `FakeKubelet`'s TLS server makes kube-apiserver's own
pods/log route work: `GET .../pods/NAME/log` (and `?previous=true`) is proxied by the API server
to `/containerLogs/NS/POD/CONTAINER` here, exactly as to a kubelet (the base cluster gives the API
server no kubelet CA, so it does not verify the node's certificate, as a cluster without
--kubelet-certificate-authority does not). What a controller logged is the test's canned text;
everything between trainerctl and that text is the real API server.

`controller_pod` plays the deployment and ReplicaSet controllers and the kubelet's status for
one pod: a ReplicaSet owned by the Deployment (its selector's labels, revision 1), a Pod owned by
it on the node, and the container status given (running but not ready, or waiting in
CrashLoopBackOff after a crash).
"""

from __future__ import annotations

import http.server
import ssl
import tempfile
import threading
from pathlib import Path
from urllib.parse import parse_qs, urlparse

from tests.support.cluster import _make_certs, host_ip
from trainerctl.cluster.client.client import ApiError, Cluster
from tests.support.tls_listen import listen_tls

NODE = "fake-node"
MERGE = "application/merge-patch+json"


class _LogHandler(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 (http.server API)
        url = urlparse(self.path)
        parts = url.path.strip("/").split("/")
        previous = parse_qs(url.query).get("previous") == ["true"]
        text = None
        if len(parts) == 4 and parts[0] == "containerLogs":
            text = self.server.logs.get((parts[1], parts[2], parts[3], previous))  # type: ignore[attr-defined]
        self.server.asked.append(self.path)  # type: ignore[attr-defined]
        body = (text or "").encode()
        self.send_response(200 if text is not None else 404)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args) -> None:
        pass


class FakeKubelet:
    """A TLS server answering the kubelet's log requests, and the Node that points at it.
    `logs[(namespace, pod, container, previous)] = text`."""

    def __init__(self, cluster: Cluster):
        self.cluster = cluster
        self.logs: dict[tuple[str, str, str, bool], str] = {}
        self.asked: list[str] = []
        self.players: list = []  # what a test plays beside it (threads, and their errors)
        _, cert, key = _make_certs([NODE])
        tmp = Path(tempfile.mkdtemp(prefix="fake-kubelet-"))
        (tmp / "tls.crt").write_bytes(cert)
        (tmp / "tls.key").write_bytes(key)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(tmp / "tls.crt", tmp / "tls.key")
        self.ip = host_ip()  # a Node's address, as an EndpointSlice's, may not be loopback
        self.server = http.server.ThreadingHTTPServer((self.ip, 0), _LogHandler)
        listen_tls(self.server, context)
        self.server.daemon_threads = True
        self.server.logs = self.logs  # type: ignore[attr-defined]
        self.server.asked = self.asked  # type: ignore[attr-defined]

    def __enter__(self) -> "FakeKubelet":
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.cluster.request("POST", "/api/v1/nodes", body={"metadata": {"name": NODE}})
        self.cluster.request("PATCH", f"/api/v1/nodes/{NODE}/status", content_type=MERGE, body={"status": {
            "addresses": [{"type": "InternalIP", "address": self.ip}],
            "daemonEndpoints": {"kubeletEndpoint": {"Port": self.server.server_address[1]}}}})
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()


def running_not_ready(restarts: int = 0) -> dict:
    return {"ready": False, "started": True, "restartCount": restarts,
            "state": {"running": {"startedAt": "2026-08-21T09:40:12Z"}}}


def crash_looping(restarts: int, exit_code: int = 1) -> dict:
    return {"ready": False, "restartCount": restarts,
            "state": {"waiting": {"reason": "CrashLoopBackOff", "message": "back-off 10s restarting failed container"}},
            "lastState": {"terminated": {"exitCode": exit_code, "reason": "Error",
                                         "startedAt": "2026-08-21T09:40:12Z", "finishedAt": "2026-08-21T09:40:13Z"}}}


def controller_pod(cluster: Cluster, namespace: str, deployment: str, state: dict) -> str:
    """The ReplicaSet and Pod of a Deployment that exists, the pod's container (its first) in
    `state` (running_not_ready, crash_looping); returns the pod's name."""
    dep = cluster.request("GET", f"/apis/apps/v1/namespaces/{namespace}/deployments/{deployment}")
    labels = dep["spec"]["selector"]["matchLabels"]
    template = dep["spec"]["template"]["spec"]
    container = template["containers"][0]
    account = template.get("serviceAccountName") or "default"
    try:  # the pod's ServiceAccount: the ServiceAccount admission plugin requires it
        cluster.request("POST", f"/api/v1/namespaces/{namespace}/serviceaccounts", body={"metadata": {"name": account}})
    except ApiError as exc:
        if exc.status != 409:
            raise
    owner = lambda kind, obj: [{"apiVersion": "apps/v1", "kind": kind, "name": obj["metadata"]["name"],  # noqa: E731
                                "uid": obj["metadata"]["uid"], "controller": True}]
    rs = cluster.request("POST", f"/apis/apps/v1/namespaces/{namespace}/replicasets", body={
        "metadata": {"name": f"{deployment}-fake", "labels": labels, "ownerReferences": owner("Deployment", dep),
                     "annotations": {"deployment.kubernetes.io/revision": "1"}},
        "spec": {"replicas": 1, "selector": {"matchLabels": labels},
                 "template": {"metadata": {"labels": labels}, "spec": {"containers": [
                     {"name": container["name"], "image": container["image"]}]}}}})
    name = f"{deployment}-fake-0"
    cluster.request("POST", f"/api/v1/namespaces/{namespace}/pods", body={
        "metadata": {"name": name, "labels": labels, "ownerReferences": owner("ReplicaSet", rs)},
        "spec": {"nodeName": NODE, "serviceAccountName": account, "automountServiceAccountToken": False,
                 "containers": [{"name": container["name"], "image": container["image"]}]}})
    cluster.request("PATCH", f"/api/v1/namespaces/{namespace}/pods/{name}/status", content_type=MERGE, body={"status": {
        "phase": "Running", "conditions": [{"type": t, "status": v, "lastTransitionTime": "2026-08-21T09:40:12Z"}
                                           for t, v in (("PodScheduled", "True"), ("Ready", "False"))],
        "containerStatuses": [{"name": container["name"], "image": container["image"], "imageID": "",
                               **state}]}})
    return name
