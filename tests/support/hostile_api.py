"""A loopback fake API server that misbehaves on purpose, to test trainerctl against untrusted servers.

It answers like a tiny, empty Kubernetes API (version, discovery, empty lists, 404 for objects,
server-side apply echoing the body) for its first `healthy_requests` requests, then every request
gets the hostile `mode`:

  garbage    200 with an HTML page          null / array / string / number   200 with that JSON
  deep       200 with JSON nested 100,000 deep
  truncated  Content-Length larger than the body, then the connection closes
  drip       the status line and headers one byte every `drip_seconds`
  drip-body  a valid start, then the body one byte every `drip_seconds`
  silent     reads the request, never answers       close   closes without answering
  huge       200 with an endless chunked body       huge-error   500 with a 5 MB message
  escapes    403 whose message holds ANSI/OSC escapes, a forged second line, bidi controls
  redirect   302 to `redirect_to` (another server that records what it receives)
  429-seconds / 429-date   429 with Retry-After in seconds or as an HTTP date, `throttle_count` times, then healthy
  429-forever  always 429 with Retry-After: 1
  bad-status   not HTTP at all          wrong-shape   discovery documents of the wrong types
  500-json-list  500 whose body is a JSON list
  endless-list   every list answers no items and a new continue token: it never ends
  same-continue  every list answers no items and the same continue token
  many-groups    /apis lists 1,001 API group versions (no aggregated discovery)
  stored-versions  a CRD's status.storedVersions lists 20,000 versions (v1 served and stored, the
                 rest gone), its objects a page of 1 and remainingItemCount 41

The world modes answer like a small cluster with Trainer installed (an inventory listing the
Deployment d1, which is not available: a crash-looping pod, its ReplicaSet, events, logs, a node,
CRDs; JobSet there), every request of them, except that one kind is what a confused controller,
an old cluster or anyone allowed to create it in the namespace could write:

  bad-lease    the install lock's Lease: `variant` picks one of LEASE_VARIANTS (a duration of
               "abc" or 1e400, a list as holder, an acquire time without a zone, a create answer
               without resourceVersion)
  bad-pods     pods whose restart count is "5", whose statuses are not mappings, whose container
               has no name; a ReplicaSet with revision "abc" and one with spec.replicas null; a
               Node and a CRD without metadata.name
  bad-events   events with times without a zone, a series that is a list, a count of "3"
  bad-helm     Helm release records with info a string, chart a list, a 5000-digit revision,
               JSON and YAML nested past any limit, a gzip bomb
  endless-log  every container log is endless         drip-log   a container log drips a byte a second
  planted      `planted` values (secrets) everywhere a support bundle reads: an owned Secret's data
               and stringData, and, in plain, JSON-escaped and base64 form, an owned ConfigMap, the
               Deployment's annotations and env, the recorded source, events, logs, a node, a CRD
  bad-names    the inventory lists objects named `../../../../tmp/pwned` (and in such a namespace,
               of such a kind), and the server answers each GET with an object named so
  bad-answers  one answer a command decides by has a field of the wrong type: `variant` picks one
               of ANSWER_VARIANTS (an access review, /version, the Go operator's CR)
  talkative    every text the world holds is one of the `planted` messages (long, each holding a
               secret where the test put it): conditions, container states, events, logs, the
               recorded source, two install-history records; Trainer's runtime API is there, and
               a dry-run TrainJob is denied by a webhook, an apply answered 422, a DELETE 500,
               each with such a message

With `tls=True` it serves https with a throwaway CA (`ca_pem`), so credentials are sent to it (kubectl
and trainerctl send none over plain http). Every request is recorded (method, path, headers).
"""

from __future__ import annotations

import base64
import datetime as dt
import email.utils
import functools
import gzip
import http.server
import json
import urllib.parse
import socket
import ssl
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from tests.support.tls_listen import listen_tls

WORLD_MODES = ("bad-lease", "bad-pods", "bad-events", "bad-helm", "endless-log", "drip-log", "planted", "bad-names",
               "bad-answers", "talkative")
MODES = ("garbage", "null", "array", "string", "number", "deep", "truncated", "drip", "drip-body", "silent",
         "close", "huge", "huge-error", "escapes", "redirect", "429-seconds", "429-date", "429-forever",
         "bad-status", "wrong-shape", "500-json-list", "endless-list", "same-continue", "many-groups",
         "stored-versions", *WORLD_MODES)
LEASE_VARIANTS = ("duration-abc", "duration-1e400", "holder-list", "acquire-no-zone", "create-no-rv")
# What a command decides by, answered with a field of the wrong type (mode bad-answers).
ANSWER_VARIANTS = {"review-allowed-string": "an access review: status.allowed is the string \"false\"",
                   "review-denied-string": "an access review: allowed, and status.denied is the string \"true\"",
                   "whoami-list": "access reviews deny, and who the user is (SelfSubjectReview) is a list",
                   "version-numbers": "/version: major and minor are numbers",
                   "operator-namespace-list": "the Go operator's Trainer CR: spec.appNamespace is a list"}

ESCAPES = ("\x1b[31mRED\x1b[0m \x1b]0;pwned-title\x07 \x1b]52;c;ZXZpbA==\x07 \x1b]8;;http://evil/\x1b\\link\x1b]8;;\x1b\\"
           "\nerror: forged second line\r\u202eevil\u202c \x9b2J \x00nul")


@dataclass
class Recorded:
    method: str
    path: str
    headers: dict[str, str]
    body: object = None  # the JSON body, when it was one


def self_signed() -> tuple[bytes, bytes]:
    """A throwaway certificate (for 127.0.0.1 and localhost) and its unencrypted PEM key."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID
    import ipaddress

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "hostile-api")])
    now = dt.datetime.now(dt.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - dt.timedelta(days=1))
            .not_valid_after(now + dt.timedelta(days=2))
            .add_extension(x509.SubjectAlternativeName([x509.DNSName("localhost"),
                                                        x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), False)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), True)
            .sign(key, hashes.SHA256()))
    return (cert.public_bytes(serialization.Encoding.PEM),
            key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                              serialization.NoEncryption()))


_DISCOVERY_CORE = {"kind": "APIVersions", "versions": ["v1"]}
_DISCOVERY_GROUPS = {"kind": "APIGroupList", "apiVersion": "v1", "groups": [
    {"name": "apps", "versions": [{"groupVersion": "apps/v1", "version": "v1"}],
     "preferredVersion": {"groupVersion": "apps/v1", "version": "v1"}},
    {"name": "apiextensions.k8s.io", "versions": [{"groupVersion": "apiextensions.k8s.io/v1", "version": "v1"}]},
]}
_RESOURCES = {
    "/api/v1": [("namespaces", "Namespace", False), ("configmaps", "ConfigMap", True),
                ("secrets", "Secret", True), ("serviceaccounts", "ServiceAccount", True)],
    "/apis/apps/v1": [("deployments", "Deployment", True)],
    "/apis/apiextensions.k8s.io/v1": [("customresourcedefinitions", "CustomResourceDefinition", False)],
}


class HostileServer:
    def __init__(self, mode: str = "garbage", *, healthy_requests: int = 0, tls: bool = False,
                 drip_seconds: float = 2.0, throttle_count: int = 2, redirect_to: str = "", variant: str = "",
                 planted: tuple[str, ...] = ("planted-secret-value-0123",)):
        if mode not in MODES + ("healthy",):
            raise ValueError(mode)
        if variant and variant not in (*LEASE_VARIANTS, *ANSWER_VARIANTS):
            raise ValueError(variant)
        self.mode = mode
        self.variant = variant or (next(iter(ANSWER_VARIANTS)) if mode == "bad-answers" else LEASE_VARIANTS[0])
        self.planted = tuple(planted)
        self.healthy_requests = healthy_requests
        self.drip_seconds = drip_seconds
        self.throttle_count = throttle_count
        self.redirect_to = redirect_to
        self.requests: list[Recorded] = []
        self._lock = threading.Lock()
        self._throttled = 0
        self._stop = threading.Event()
        self.ca_pem = b""
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args) -> None:
                pass

            def _any(self) -> None:
                outer._handle(self)

            do_GET = do_POST = do_PATCH = do_PUT = do_DELETE = _any

        self._httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        if tls:
            cert, key = self_signed()
            self.ca_pem = cert
            with tempfile.TemporaryDirectory() as tmp:
                (Path(tmp) / "c.pem").write_bytes(cert)
                (Path(tmp) / "k.pem").write_bytes(key)
                ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
                ctx.load_cert_chain(Path(tmp) / "c.pem", Path(tmp) / "k.pem")
            listen_tls(self._httpd, ctx)
        self.port = self._httpd.server_address[1]
        self.url = f"{'https' if tls else 'http'}://127.0.0.1:{self.port}"
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)
        self._thread.start()

    # -- life cycle ---------------------------------------------------------------------------
    def close(self) -> None:
        self._stop.set()
        self._httpd.shutdown()
        self._httpd.server_close()

    def __enter__(self) -> "HostileServer":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def kubeconfig(self, path: Path, user: dict | None = None, *, token: str | None = "hostile-token") -> Path:
        """A kubeconfig pointing at this server (the CA inline when it serves https)."""
        import base64

        cluster = {"server": self.url}
        if self.ca_pem:
            cluster["certificate-authority-data"] = base64.b64encode(self.ca_pem).decode()
        path.write_text(json.dumps({
            "apiVersion": "v1", "kind": "Config", "current-context": "hostile",
            "clusters": [{"name": "hostile", "cluster": cluster}],
            "users": [{"name": "u", "user": user if user is not None else ({"token": token} if token else {})}],
            "contexts": [{"name": "hostile", "context": {"cluster": "hostile", "user": "u"}}]}))
        return path

    # -- answering ----------------------------------------------------------------------------
    def _handle(self, h: http.server.BaseHTTPRequestHandler) -> None:
        length = int(h.headers.get("Content-Length") or 0)
        body = h.rfile.read(length) if length else b""
        try:
            h.trainerctl_body = json.loads(body) if body else None
        except ValueError:
            h.trainerctl_body = None
        with self._lock:
            self.requests.append(Recorded(h.command, h.path, {k.lower(): v for k, v in h.headers.items()},
                                          h.trainerctl_body))
            hostile = len(self.requests) > self.healthy_requests and self.mode != "healthy"
        try:
            if hostile:
                self._hostile(h)
            else:
                self._healthy(h, body)
        except (BrokenPipeError, ConnectionResetError, ssl.SSLError, OSError):
            h.close_connection = True

    def _send(self, h, status: int, body: bytes, content_type: str = "application/json",
              headers: dict | None = None) -> None:
        h.send_response(status)
        h.send_header("Content-Type", content_type)
        h.send_header("Content-Length", str(len(body)))
        for k, v in (headers or {}).items():
            h.send_header(k, v)
        h.end_headers()
        h.wfile.write(body)

    def _json(self, h, status: int, doc) -> None:
        self._send(h, status, json.dumps(doc).encode())

    def _healthy(self, h, body: bytes) -> None:
        path = h.path.split("?", 1)[0]
        if path == "/version":
            return self._json(h, 200, {"major": "1", "minor": "37", "gitVersion": "v1.37.2"})
        if path == "/api":
            return self._json(h, 200, _DISCOVERY_CORE)
        if path == "/apis":
            return self._json(h, 200, _DISCOVERY_GROUPS)
        if path in _RESOURCES:
            return self._json(h, 200, {"kind": "APIResourceList", "groupVersion": path.split("/", 2)[-1],
                                       "resources": [{"name": n, "kind": k, "namespaced": ns,
                                                      "verbs": ["get", "list", "patch", "delete", "create"]}
                                                     for n, k, ns in _RESOURCES[path]]})
        if h.command == "PATCH":
            try:
                obj = json.loads(body or b"{}")
            except ValueError:
                obj = {}
            if isinstance(obj, dict):
                obj.setdefault("metadata", {}).update(resourceVersion="1", uid="u-1")
            return self._json(h, 201, obj)
        if h.command == "DELETE":
            return self._json(h, 404, {"kind": "Status", "status": "Failure", "reason": "NotFound",
                                       "message": "not found", "code": 404})
        last = path.rstrip("/").rsplit("/", 1)[-1]
        if h.command == "GET" and any(path.endswith("/" + r) for rs in _RESOURCES.values() for r, _, _ in rs):
            return self._json(h, 200, {"kind": "List", "apiVersion": "v1", "metadata": {}, "items": []})
        return self._json(h, 404, {"kind": "Status", "status": "Failure", "reason": "NotFound",
                                   "message": f"{last} not found", "code": 404})

    def _hostile(self, h) -> None:
        mode = self.mode
        if mode in WORLD_MODES:
            return (Talkative if mode == "talkative" else World)(self, h).answer()
        if mode == "garbage":
            return self._send(h, 200, b"<html><body>Welcome to nginx!</body></html>", "text/html")
        if mode in ("null", "array", "string", "number"):
            return self._send(h, 200, {"null": b"null", "array": b"[]", "string": b'"x"', "number": b"42"}[mode])
        if mode == "deep":
            return self._send(h, 200, b'{"a":' * 100000 + b"1" + b"}" * 100000)
        if mode == "500-json-list":
            return self._send(h, 500, b'["not", "a", "status"]')
        if mode == "truncated":
            h.send_response(200)
            h.send_header("Content-Type", "application/json")
            h.send_header("Content-Length", "100000")
            h.end_headers()
            h.wfile.write(b'{"kind": "APIVersions", "vers')
            h.wfile.flush()
            h.close_connection = True
            return
        if mode in ("drip", "drip-body"):
            head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n"
            if mode == "drip-body":
                h.wfile.write(head)
                head = b'{"kind": "APIVersions"' + b" " * 99978
            for byte in head:
                if self._stop.wait(self.drip_seconds):
                    return
                h.wfile.write(bytes([byte]))
                h.wfile.flush()
            return
        if mode == "silent":
            self._stop.wait(600)
            return
        if mode == "close":
            h.close_connection = True
            h.connection.shutdown(socket.SHUT_RDWR)
            return
        if mode == "bad-status":
            h.wfile.write(b"SSH-2.0-OpenSSH_9.6\r\n\r\n")
            h.close_connection = True
            return
        if mode == "huge":
            h.send_response(200)
            h.send_header("Content-Type", "application/json")
            h.send_header("Transfer-Encoding", "chunked")
            h.end_headers()
            chunk = b" " * 65536
            line = f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n"
            h.wfile.write(f"{1:x}\r\n{{\r\n".encode())
            while not self._stop.is_set():
                h.wfile.write(line)
            return
        if mode == "huge-error":
            message = "x" * (5 * 1024 * 1024)
            return self._json(h, 500, {"kind": "Status", "status": "Failure", "message": message, "code": 500})
        if mode == "escapes":
            return self._json(h, 403, {"kind": "Status", "status": "Failure", "reason": "Forbidden\x1b[2J",
                                       "message": ESCAPES, "code": 403,
                                       "details": {"causes": ["not-a-mapping", {"message": ESCAPES}]}})
        if mode == "redirect":
            return self._send(h, 302, b"", headers={"Location": self.redirect_to + h.path})
        if mode in ("429-seconds", "429-date", "429-forever"):
            with self._lock:
                self._throttled += 1
                again = mode == "429-forever" or self._throttled <= self.throttle_count
            if again:
                when = "1" if mode != "429-date" else email.utils.formatdate(time.time() + 1, usegmt=True)
                return self._send(h, 429, json.dumps({"kind": "Status", "reason": "TooManyRequests",
                                                      "message": "slow down", "code": 429}).encode(),
                                  headers={"Retry-After": when})
            return self._healthy(h, b"")
        if mode in ("endless-list", "same-continue"):
            path = h.path.split("?", 1)[0]
            if h.command != "GET" or not any(path.endswith("/" + r) for rs in _RESOURCES.values() for r, _, _ in rs):
                return self._healthy(h, b"")
            with self._lock:
                token = "again" if mode == "same-continue" else f"page-{len(self.requests)}"
            return self._json(h, 200, {"kind": "List", "apiVersion": "v1", "metadata": {"continue": token},
                                       "items": []})
        if mode == "many-groups" and h.path.split("?", 1)[0] == "/apis":
            return self._json(h, 200, {"kind": "APIGroupList", "apiVersion": "v1", "groups": [
                {"name": f"g{i}.example.com", "versions": [{"groupVersion": f"g{i}.example.com/v1", "version": "v1"}]}
                for i in range(1001)]})
        if mode == "many-groups":
            return self._healthy(h, b"")
        if mode == "stored-versions":
            path = h.path.split("?", 1)[0]
            name = path.rsplit("/", 1)[-1]
            if "/customresourcedefinitions/" in path:
                group, plural = name.split(".", 1)[1], name.split(".", 1)[0]
                return self._json(h, 200, {
                    "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
                    "metadata": {"name": name, "uid": "u", "resourceVersion": "1"},
                    "spec": {"group": group, "scope": "Namespaced",
                             "names": {"plural": plural, "singular": plural, "kind": "Widget"},
                             "versions": [{"name": "v1", "served": True, "storage": True}]},
                    "status": {"storedVersions": [f"v{i}" for i in range(1, 20001)]}})
            return self._json(h, 200, {"kind": "List", "apiVersion": "v1",
                                       "metadata": {"continue": "more", "remainingItemCount": 41},
                                       "items": [{"metadata": {"name": "w"}}]})
        if mode == "wrong-shape":
            path = h.path.split("?", 1)[0]
            if path == "/api":
                return self._json(h, 200, {"kind": "APIVersions", "versions": "v1"})
            if path == "/apis":
                return self._json(h, 200, {"kind": "APIGroupDiscoveryList", "items": [
                    {"metadata": "x", "versions": [{"version": 1, "resources": [{"resource": None}]}]}, 7]})
            if path == "/version":
                return self._json(h, 200, {"major": ["1"], "minor": {"x": 1}})
            return self._json(h, 200, {"kind": "List", "items": "not-a-list", "metadata": []})
        raise AssertionError(mode)


# -- a small installed world, for the world modes ------------------------------------------------
NS = "opendatahub"
_WORLD_RESOURCES = {
    "/api/v1": [("namespaces", "Namespace", False), ("configmaps", "ConfigMap", True), ("secrets", "Secret", True),
                ("serviceaccounts", "ServiceAccount", True), ("pods", "Pod", True), ("events", "Event", True),
                ("nodes", "Node", False), ("services", "Service", True)],
    "/apis/apps/v1": [("deployments", "Deployment", True), ("replicasets", "ReplicaSet", True)],
    "/apis/apiextensions.k8s.io/v1": [("customresourcedefinitions", "CustomResourceDefinition", False)],
    "/apis/coordination.k8s.io/v1": [("leases", "Lease", True)],
    "/apis/jobset.x-k8s.io/v1alpha2": [("jobsets", "JobSet", True)],
}
_WORLD_GROUPS = {"kind": "APIGroupList", "apiVersion": "v1", "groups": [
    {"name": path.split("/")[2], "versions": [{"groupVersion": path[len("/apis/"):], "version": path.rsplit("/", 1)[1]}]}
    for path in _WORLD_RESOURCES if path.startswith("/apis/")]}
_T = "2026-01-01T00:00:00Z"
_MICRO = "2026-01-01T00:00:00.000000Z"
INF = "__1e400__"  # written as the JSON number 1e400 (Python reads it as inf)


def _meta(name, ns=NS, **more):
    return {"name": name, "namespace": ns, "uid": f"uid-{name}", "resourceVersion": "1", "creationTimestamp": _T,
            **more}


HOSTILE_NAME = "../../../../tmp/pwned"
# What the bad-names world's inventory lists besides d1: keys group/Kind/namespace/name.
BAD_NAME_KEYS = (f"/ConfigMap/{NS}/{HOSTILE_NAME}", "/ConfigMap/../x", f"/ConfigMap/{NS}/..",
                 f"/ConfigMap/{NS}/.", "/ConfigMap/-/\x00nul", "/Secret/..%2F..%2Fetc/passwd",
                 f"/ConfigMap/{NS}/" + "Ä" * 300)


def _inventory(mode: str = "", planted: tuple[str, ...] = ()):
    entry = {"api_version": "apps/v1", "resource": "deployments", "namespaced": True, "stage": "controllers"}
    core = {"api_version": "v1", "namespaced": True, "stage": "config"}
    objects = {f"apps/Deployment/{NS}/d1": entry}
    images = {"busybox": "the upstream manifests"}
    if mode == "planted":
        objects.update({f"/Secret/{NS}/s1": {**core, "resource": "secrets"},
                        f"/ConfigMap/{NS}/c1": {**core, "resource": "configmaps"}})
        images.update({f"image-{i}": value for i, value in enumerate(planted)})
    if mode == "bad-names":
        objects.update({key: {**core, "resource": "secrets" if "/Secret/" in key else "configmaps"}
                        for key in BAD_NAME_KEYS})
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": _meta("trainerctl-inventory"), "data": {
        "complete": "true", "objects": json.dumps(objects),
        "source": json.dumps({"url": "https://example.invalid/trainer.git", "ref": "v2.2.0",
                              "trainer_version": "2.2.0", "images": images})}}


# The objects a test installs into the world (`-f`): the world's own ConfigMap c1 and Deployment d1.
OBJECTS = """apiVersion: v1
kind: ConfigMap
metadata: {name: c1, namespace: opendatahub}
data: {a: b}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: d1, namespace: opendatahub}
spec:
  replicas: 1
  selector: {matchLabels: {a: b}}
  template:
    metadata: {labels: {a: b}}
    spec: {containers: [{name: c, image: busybox}]}
"""


def strings(value):
    """Every string inside a JSON-shaped value, mapping keys too (where a planted secret may hide
    once JSON's escapes or YAML's folds are read back)."""
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, str):
            yield node
        elif isinstance(node, dict):
            stack.extend(node.keys())
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)


def planted_forms(values: tuple[str, ...]) -> str:
    """Each value as a log line or a message may hold it: plain, JSON-escaped (both ways), base64."""
    return " | ".join(f"{v} {json.dumps(v)} {json.dumps(v, ensure_ascii=False)} "
                      f"{base64.b64encode(v.encode()).decode()}" for v in values)


def _planted_secret(values: tuple[str, ...]):
    return {"apiVersion": "v1", "kind": "Secret", "metadata": _meta("s1"), "type": "Opaque",
            "data": {f"k{i}": base64.b64encode(v.encode()).decode() for i, v in enumerate(values)},
            "stringData": {f"s{i}": v for i, v in enumerate(values)}}


def _planted_configmap(values: tuple[str, ...]):
    text = planted_forms(values)
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": _meta("c1", annotations={"note": text}),
            "data": {"config.yaml": "a long line that YAML will fold: " + "word " * 30 + text,
                     **{f"v{i}": v for i, v in enumerate(values)}}}


def _deployment(planted: tuple[str, ...] = ()):
    more = {"annotations": {f"planted-{i}": v for i, v in enumerate(planted)}} if planted else {}
    env = [{"name": f"PLANTED_{i}", "value": v} for i, v in enumerate(planted)]
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": _meta("d1", generation=1, **more),
            "spec": {"replicas": 1, "selector": {"matchLabels": {"a": "b"}}, "template": {
                "metadata": {"labels": {"a": "b"}}, "spec": {"containers": [{"name": "c", "image": "busybox",
                                                                             **({"env": env} if env else {})}]}}},
            "status": {"observedGeneration": 1, "replicas": 1, "updatedReplicas": 1, "availableReplicas": 0,
                       "conditions": [{"type": "Available", "status": "False", "reason": "MinimumReplicasUnavailable",
                                       "message": "Deployment does not have minimum availability.",
                                       "lastTransitionTime": _T}]}}


def _owned(uid):
    return [{"apiVersion": "apps/v1", "kind": "Deployment" if uid == "uid-d1" else "ReplicaSet", "name": "x",
             "uid": uid, "controller": True}]


def _replicaset(name="d1-5f7c9", revision="1", **spec):
    return {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": _meta(
        name, ownerReferences=_owned("uid-d1"), labels={"a": "b"},
        annotations={"deployment.kubernetes.io/revision": revision}),
        "spec": {"replicas": 1, **spec}, "status": {"replicas": 1}}


def _pod(name="d1-5f7c9-x2k4q", *, statuses=None, containers=None):
    crash = {"name": "c", "image": "busybox", "ready": False, "restartCount": 5,
             "state": {"waiting": {"reason": "CrashLoopBackOff", "message": "back-off 5m0s"}},
             "lastState": {"terminated": {"exitCode": 1, "reason": "Error", "finishedAt": _T}}}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": _meta(name, ownerReferences=_owned("uid-d1-5f7c9"),
                                                                  labels={"a": "b"}),
            "spec": {"containers": containers if containers is not None else [{"name": "c", "image": "busybox"}]},
            "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "False"}],
                       "containerStatuses": statuses if statuses is not None else [crash]}}


def _event(name, **fields):
    return {"apiVersion": "v1", "kind": "Event", "metadata": _meta(name),
            "involvedObject": {"kind": "Pod", "name": "d1-5f7c9-x2k4q", "namespace": NS, "uid": "uid-d1-5f7c9-x2k4q"},
            "reason": "BackOff", "message": "Back-off restarting failed container c", "type": "Warning",
            "count": 3, "firstTimestamp": _T, "lastTimestamp": _T, "source": {"component": "kubelet"}, **fields}


def _node(name="n1"):
    meta = {"name": name, "uid": "uid-node", "labels": {"topology.kubernetes.io/zone": "z1"}} if name else \
        {"uid": "uid-nameless-node"}
    return {"apiVersion": "v1", "kind": "Node", "metadata": meta,
            "status": {"conditions": [{"type": "Ready", "status": "True"}],
                       "nodeInfo": {"kubeletVersion": "v1.37.2", "machineID": "m-123"}, "allocatable": {"cpu": "4"}}}


def _crd(name, group, kind, plural):
    meta = {"name": name, "uid": f"uid-{name}"} if name else {"uid": "uid-nameless-crd"}
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition", "metadata": meta,
            "spec": {"group": group, "scope": "Namespaced", "names": {"kind": kind, "plural": plural},
                     "versions": [{"name": "v1alpha2", "served": True, "storage": True}]},
            "status": {"storedVersions": ["v1alpha2"], "conditions": [
                {"type": "Established", "status": "True"}, {"type": "NamesAccepted", "status": "True"}]}}


def _lease(**spec):
    return {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": _meta("trainerctl-lock"),
            "spec": {"holderIdentity": "someone@elsewhere pid 1 (install) #0123456789ab", "leaseDurationSeconds": 20,
                     "acquireTime": _MICRO, "renewTime": _MICRO, "leaseTransitions": 0, **spec}}


def helm_record(name: str, revision: str, payload: bytes | str, *, kind: str = "Secret") -> dict:
    """A Helm release record as the API shows it (`payload`: Helm's own text, base64; a Secret's
    data is base64 once more)."""
    text = payload.decode("ascii") if isinstance(payload, bytes) else payload
    record = {"apiVersion": "v1", "kind": kind, "metadata": _meta(
        f"sh.helm.release.v1.{name}.v{revision}", labels={"owner": "helm", "name": name, "status": "deployed",
                                                           "version": revision[:10]}),
        "data": {"release": base64.b64encode(text.encode()).decode() if kind == "Secret" else text}}
    if kind == "Secret":
        record["type"] = "helm.sh/release.v1"
    return record


def helm_payload(release) -> bytes:
    """Helm's own encoding, before the API's base64: base64 of gzip of JSON."""
    raw = release if isinstance(release, bytes) else json.dumps(release).encode()
    return base64.b64encode(gzip.compress(raw, 1))


@functools.lru_cache(maxsize=4)
def gzip_bomb(size: int) -> bytes:
    """gzip data that expands to `size` zero bytes (a multiple of 16 MiB): one 16 MiB member of
    about 16 KB, repeated; so 4 GiB take 4 MB, made in a moment."""
    return gzip.compress(bytes(1 << 24), 9) * (size >> 24)


@functools.lru_cache(maxsize=1)
def _bad_helm_records() -> list[dict]:
    good = {"name": "r", "namespace": NS, "version": 1, "info": {"status": "deployed"},
            "chart": {"metadata": {"name": "other-chart", "version": "1.0.0"}}, "manifest": ""}
    deep = b'{"name": "deep", "info": ' + b"[" * 100000 + b"]" * 100000 + b"}"
    return [helm_record("info-string", "1", helm_payload({**good, "info": "deployed"})),
            helm_record("chart-list", "1", helm_payload({**good, "chart": ["kubeflow-trainer"]})),
            helm_record("long-revision", "9" * 5000, helm_payload(good)),
            helm_record("revision-digits", "1", helm_payload({**good, "version": int("9" * 400)})),
            helm_record("deep-json", "1", helm_payload(deep)),
            helm_record("deep-yaml", "1", helm_payload({**good, "manifest": "a: " + "[" * 20000})),
            helm_record("bomb", "1", base64.b64encode(gzip_bomb(1 << 30))),
            helm_record("not-base64", "1", "%%%"),
            helm_record("in-a-configmap", "1", helm_payload({**good, "info": 7}).decode(), kind="ConfigMap")]


class World:
    """One answer of the world modes (HostileServer._hostile hands them over)."""

    def __init__(self, server: "HostileServer", h):
        self.server, self.h = server, h
        self.mode, self.variant = server.mode, server.variant
        self.path = h.path.split("?", 1)[0].rstrip("/")
        self.query = h.path.partition("?")[2]

    def json(self, status: int, doc) -> None:
        body = json.dumps(doc).replace(f'"{INF}"', "1e400").encode()
        self.server._send(self.h, status, body)

    def items(self, kind: str, items: list) -> None:
        self.json(200, {"kind": f"{kind}List", "apiVersion": "v1", "metadata": {"resourceVersion": "1"},
                        "items": items})

    def missing(self) -> None:
        self.json(404, {"kind": "Status", "status": "Failure", "reason": "NotFound", "code": 404,
                        "message": f"{self.path.rsplit('/', 1)[-1]} not found"})

    def answer(self) -> None:
        h, path, method = self.h, self.path, self.h.command
        if path == "/version":
            if self.mode == "bad-answers" and self.variant == "version-numbers":
                return self.json(200, {"major": 1, "minor": 37, "gitVersion": "v1.37.2"})
            return self.json(200, {"major": "1", "minor": "37", "gitVersion": "v1.37.2", "platform": "linux/amd64"})
        if path == "/api":
            return self.json(200, _DISCOVERY_CORE)
        if path == "/apis":
            return self.json(200, _WORLD_GROUPS)
        if path.endswith("/trainers/default-trainer") and self.variant == "operator-namespace-list" \
                and self.mode == "bad-answers" and method == "GET":
            return self.json(200, {"apiVersion": "components.platform.opendatahub.io/v1alpha1", "kind": "Trainer",
                                   "metadata": {"name": "default-trainer", "uid": "uid-cr", "resourceVersion": "1"},
                                   "spec": {"appNamespace": ["opendatahub", "kube-system"]}})
        if path in _WORLD_RESOURCES:
            return self.json(200, {"kind": "APIResourceList", "groupVersion": path.split("/", 2)[-1], "resources": [
                {"name": n, "kind": k, "namespaced": ns, "verbs": ["get", "list", "patch", "delete", "create", "update"]}
                for n, k, ns in _WORLD_RESOURCES[path]]})
        if path.endswith("/log"):
            return self.log()
        if "/leases" in path:
            return self.lease(method)
        if method == "DELETE":
            return self.json(200, {"kind": "Status", "status": "Success"})
        if method in ("PATCH", "PUT", "POST"):
            return self.echo()
        return self.get(path)

    def echo(self) -> None:
        doc = getattr(self.h, "trainerctl_body", None) or {}
        if self.path.endswith(("/selfsubjectaccessreviews", "/selfsubjectreviews")):  # every access is granted
            status = {"allowed": True, "userInfo": {"username": "hostile-admin"}}
            if self.mode == "bad-answers" and self.variant.startswith("review-"):
                status = {"allowed": "false"} if self.variant == "review-allowed-string" else \
                    {"allowed": True, "denied": "true"}
            if self.mode == "bad-answers" and self.variant == "whoami-list":
                status = {"allowed": False, "userInfo": {"username": ["admin", "root"]}}
            return self.json(201, {**doc, "status": status})
        if isinstance(doc, dict):
            doc.setdefault("metadata", {}).update(resourceVersion="2", uid="uid-applied")
        self.json(201 if self.h.command == "POST" else 200, doc)

    def lease(self, method: str) -> None:
        exists = self.mode == "bad-lease" and self.variant != "create-no-rv"
        if method == "POST" and exists:  # as the API server answers a create of a Lease that is there
            return self.json(409, {"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": "AlreadyExists",
                                   "code": 409, "message": 'leases.coordination.k8s.io "trainerctl-lock" already exists'})
        if method == "POST":
            doc = getattr(self.h, "trainerctl_body", None) or {}
            if self.mode == "bad-lease" and self.variant == "create-no-rv":
                doc.get("metadata", {}).pop("resourceVersion", None)
            else:
                doc.setdefault("metadata", {})["resourceVersion"] = "2"
            return self.json(201, doc)
        if method == "PUT":
            return self.echo()
        if method == "DELETE":
            return self.json(200, {"kind": "Status", "status": "Success"})
        if not exists:
            return self.missing()
        return self.json(200, _lease(**{
            "duration-abc": {"leaseDurationSeconds": "abc"}, "duration-1e400": {"leaseDurationSeconds": INF},
            "holder-list": {"holderIdentity": ["someone"]},
            "acquire-no-zone": {"acquireTime": "2026-08-21T09:40:12"}}[self.variant]))

    def get(self, path: str) -> None:
        ns = f"/namespaces/{NS}"
        lists = {
            f"/api/v1{ns}/pods": ("Pod", self.pods),
            f"/apis/apps/v1{ns}/replicasets": ("ReplicaSet", self.replicasets),
            f"/api/v1{ns}/events": ("Event", self.events),
            "/api/v1/nodes": ("Node", self.nodes),
            "/apis/apiextensions.k8s.io/v1/customresourcedefinitions": ("CustomResourceDefinition", self.crds),
            "/api/v1/secrets": ("Secret", lambda: self.helm("Secret")),
            f"/api/v1{ns}/secrets": ("Secret", lambda: self.helm("Secret")),
            "/api/v1/configmaps": ("ConfigMap", lambda: self.helm("ConfigMap")),
        }
        if path in lists:
            kind, make = lists[path]
            return self.items(kind, make())
        planted = self.server.planted if self.mode == "planted" else ()
        one = {f"/api/v1{ns}/configmaps/trainerctl-inventory": lambda: _inventory(self.mode, planted),
               f"/apis/apps/v1{ns}/deployments/d1": lambda: _deployment(planted),
               "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/jobsets.jobset.x-k8s.io":
                   lambda: _crd("jobsets.jobset.x-k8s.io", "jobset.x-k8s.io", "JobSet", "jobsets"),
               f"/api/v1/namespaces/{NS}": lambda: {"apiVersion": "v1", "kind": "Namespace",
                                                    "metadata": {"name": NS, "uid": "uid-ns", "resourceVersion": "1"}}}
        if planted:
            one.update({f"/api/v1{ns}/secrets/s1": lambda: _planted_secret(planted),
                        f"/api/v1{ns}/configmaps/c1": lambda: _planted_configmap(planted)})
        if path in one:
            return self.json(200, one[path]())
        if self.mode == "bad-names" and ("/configmaps/" in path or "/secrets/" in path):
            kind = "Secret" if "/secrets/" in path else "ConfigMap"
            return self.json(200, {"apiVersion": "../../v1", "kind": "../../" + kind, "data": {"a": "b"},
                                   "metadata": {"name": HOSTILE_NAME, "namespace": HOSTILE_NAME}})
        if method_is_list(path):
            return self.items("", [])
        return self.missing()

    def pods(self) -> list:
        if self.mode != "bad-pods":
            return [_pod()]
        return [_pod(), _pod("d1-5f7c9-string", statuses=[{**_pod()["status"]["containerStatuses"][0],
                                                          "restartCount": "5"}]),
                _pod("d1-5f7c9-scalars", statuses=["not-a-mapping", 7]),
                _pod("d1-5f7c9-nameless", containers=[{"image": "busybox"}]),
                _pod("../../../../tmp/pwned")]

    def replicasets(self) -> list:
        if self.mode != "bad-pods":
            return [_replicaset()]
        return [_replicaset(replicas=None), _replicaset("d1-abc", revision="abc")]

    def events(self) -> list:
        if self.mode == "planted":
            return [_event("e1", message=f"Back-off: {planted_forms(self.server.planted)}")]
        if self.mode != "bad-events":
            return [_event("e1")]
        return [_event("e1"), _event("e-no-zone", lastTimestamp="2026-01-01T00:00:00"),
                _event("e-series", series=[{"count": 2}]), _event("e-count", count="3"),
                _event("e-micro", eventTime="yesterday", lastTimestamp=None),
                _event("e-source", source="kubelet"), "not-an-event"]

    def nodes(self) -> list:
        if self.mode == "planted":
            node = _node()
            node["spec"] = {"taints": [{"key": "k", "value": v, "effect": "NoSchedule"} for v in self.server.planted]}
            node["status"]["nodeInfo"]["kernelVersion"] = planted_forms(self.server.planted)
            return [node]
        return [_node(), _node("")] if self.mode == "bad-pods" else [_node()]

    def crds(self) -> list:
        found = [_crd("jobsets.jobset.x-k8s.io", "jobset.x-k8s.io", "JobSet", "jobsets"),
                 _crd("trainjobs.trainer.kubeflow.org", "trainer.kubeflow.org", "TrainJob", "trainjobs")]
        if self.mode == "planted":
            found[1]["metadata"]["labels"] = {f"planted-{i}": v for i, v in enumerate(self.server.planted)}
        return found + [_crd("", "trainer.kubeflow.org", "X", "xs")] if self.mode == "bad-pods" else found

    def helm(self, kind: str) -> list:
        if self.mode != "bad-helm" or "owner%3Dhelm" not in self.query:
            return []
        return [r for r in _bad_helm_records() if r["kind"] == kind]

    def log(self) -> None:
        h = self.h
        if self.mode == "planted":
            text = f"starting\nconnecting with {planted_forms(self.server.planted)}\n"
            return self.server._send(h, 200, text.encode(), "text/plain; charset=utf-8")
        if self.mode not in ("endless-log", "drip-log"):
            return self.server._send(h, 200, b"starting\nerror: flag provided but not defined: -x\n", "text/plain")
        h.send_response(200)
        h.send_header("Content-Type", "text/plain")
        h.send_header("Transfer-Encoding", "chunked")
        h.end_headers()
        chunk = b"E0101 12:00:00 reconcile failed: the same line again\n" * (1 if self.mode == "drip-log" else 2000)
        while not self.server._stop.is_set():
            h.wfile.write(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
            h.wfile.flush()
            if self.mode == "drip-log" and self.server._stop.wait(self.server.drip_seconds):
                return


_TRAINER = "/apis/trainer.kubeflow.org/v1alpha1"
_OURS = "platform.opendatahub.io/part-of"  # the default ownership label's key


class Talkative(World):
    """The talkative world: the installed world, with each text one of the server's `planted`
    messages (taken in turn), and Trainer's runtime API for verify."""

    _turn = 0  # which message is next, over every answer of every server (the handlers' threads share it)

    def talk(self) -> str:
        messages = self.server.planted
        with self.server._lock:
            Talkative._turn += 1
            return messages[Talkative._turn % len(messages)]

    def failure(self, status: int, reason: str, message: str) -> None:
        self.json(status, {"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": reason,
                           "code": status, "message": message})

    def answer(self) -> None:
        path, method = self.path, self.h.command
        if path == "/apis":
            return self.json(200, {**_WORLD_GROUPS, "groups": [*_WORLD_GROUPS["groups"], {
                "name": "trainer.kubeflow.org", "versions": [{"groupVersion": "trainer.kubeflow.org/v1alpha1",
                                                              "version": "v1alpha1"}]}]})
        if path == _TRAINER:
            return self.json(200, {"kind": "APIResourceList", "groupVersion": "trainer.kubeflow.org/v1alpha1",
                                   "resources": [{"name": n, "kind": k, "namespaced": ns,
                                                  "verbs": ["get", "list", "create", "delete"]}
                                                 for n, k, ns in (("clustertrainingruntimes", "ClusterTrainingRuntime",
                                                                   False), ("trainingruntimes", "TrainingRuntime", True),
                                                                  ("trainjobs", "TrainJob", True))]})
        if path.endswith("/trainjobs") and method == "POST":
            return self.failure(400, "BadRequest", 'admission webhook "validator.trainjob.trainer.kubeflow.org" '
                                                   f"denied the request: {self.talk()}")
        if path == f"{_TRAINER}/clustertrainingruntimes":
            return self.items("ClusterTrainingRuntime", [{
                "apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "ClusterTrainingRuntime",
                "metadata": {"name": "torch-distributed", "uid": "uid-rt", "resourceVersion": "1",
                             "labels": {"trainer.kubeflow.org/framework": "torch"}}, "spec": {}}])
        if path.startswith(_TRAINER) and method == "GET":  # no TrainJob, no namespaced runtime
            return self.items("", [])
        if path == f"/api/v1/namespaces/{NS}/configmaps" and "history" in self.query:
            return self.items("ConfigMap", [self.record(1), self.record(2)])
        if path == f"/apis/apps/v1/namespaces/{NS}/deployments" and method == "GET" \
                and _OURS in urllib.parse.unquote(self.query):
            return self.items("Deployment", [self.ours()])  # what uninstall finds, and fails to delete
        if method == "DELETE" and "/leases" not in path:
            return self.failure(500, "InternalError", self.talk())
        if method == "PATCH" and "/configmaps/" in path:
            return self.failure(422, "Invalid", self.talk())
        return super().answer()

    def record(self, revision: int) -> dict:
        source = {"url": "https://example.invalid/trainer.git", "ref": self.talk(), "trainer_version": "2.2.0"}
        return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": _meta(
            f"trainerctl-history.v{revision}", labels={"trainerctl.io/history": "true"}), "data": {
            "revision": str(revision), "time": _T, "who": self.talk(), "version": "0.1.0", "action": "install",
            "description": self.talk(), "source": json.dumps(source), "render": json.dumps({"overlay": self.talk()}),
            "objects": json.dumps({f"apps/Deployment/{NS}/d1": {"api_version": "apps/v1", "resource": "deployments",
                                                                "namespaced": True, "stage": "controllers"}})}}

    def ours(self) -> dict:
        deployment = _deployment()
        deployment["metadata"]["labels"] = {_OURS: "trainer"}
        deployment["status"]["conditions"][0]["message"] = self.talk()
        return deployment

    def get(self, path: str) -> None:
        if path == f"/apis/apps/v1/namespaces/{NS}/deployments/d1":
            return self.json(200, self.ours())
        if path == f"/api/v1/namespaces/{NS}/configmaps/trainerctl-inventory":
            inventory = _inventory()
            inventory["data"]["source"] = json.dumps({"url": "https://example.invalid/trainer.git",
                                                      "ref": self.talk(), "trainer_version": "2.2.0"})
            return self.json(200, inventory)
        return super().get(path)

    def pods(self) -> list:
        pod = _pod()
        status = pod["status"]
        status["containerStatuses"][0]["state"]["waiting"]["message"] = self.talk()
        status["containerStatuses"][0]["lastState"]["terminated"]["message"] = self.talk()
        status.update(reason="Evicted", message=self.talk())
        return [pod]

    def events(self) -> list:
        return [_event("e1", message=self.talk()), _event("e2", reason="FailedMount", message=self.talk())]

    def log(self) -> None:
        text = f"starting\nerror: {self.talk()}\n"
        self.server._send(self.h, 200, text.encode(), "text/plain; charset=utf-8")


def method_is_list(path: str) -> bool:
    """A collection path (its last segment a resource name) rather than one object."""
    parts = path.strip("/").split("/")
    if len(parts) >= 2 and parts[-2] == "namespaces":
        return False
    return parts[-1] in {r for rows in _WORLD_RESOURCES.values() for r, _, _ in rows}


class MutatingProxy:
    """An https proxy in front of a real API server that corrupts its JSON answers: with
    probability `rate`, one value somewhere in an answer is replaced by a value of another type
    (null, a number, a string, a list, a mapping). Seeded, so a failure can be replayed."""

    def __init__(self, upstream: str, upstream_ca: bytes, token: str, *, seed: int, rate: float = 0.3,
                 spare_discovery: bool = False):
        import random
        import urllib.request

        self._rng = random.Random(seed)
        self._rate = rate
        self._spare_discovery = spare_discovery  # let discovery through, to corrupt what comes later
        self._lock = threading.Lock()
        self.mutations: list[str] = []
        ctx = ssl.create_default_context(cadata=upstream_ca.decode())
        opener = urllib.request.build_opener(urllib.request.HTTPSHandler(context=ctx))
        outer = self
        self._server = HostileServer("healthy", tls=True)

        def handle(h, body: bytes) -> None:
            req = urllib.request.Request(upstream + h.path, data=body or None, method=h.command)
            for name in ("Accept", "Content-Type"):
                if h.headers.get(name):
                    req.add_header(name, h.headers[name])
            req.add_header("Authorization", f"Bearer {token}")
            try:
                resp = opener.open(req, timeout=60)
                status, data, ctype = resp.status, resp.read(), resp.headers.get("Content-Type", "")
            except urllib.error.HTTPError as exc:
                status, data, ctype = exc.code, exc.read(), exc.headers.get("Content-Type", "")
            if data and "json" in ctype:
                data = outer._mutate(h.path, data)
            self._server._send(h, status, data, ctype or "application/json")

        self._server._healthy = handle
        self.url, self.ca_pem = self._server.url, self._server.ca_pem
        self.kubeconfig = self._server.kubeconfig

    def _mutate(self, path: str, data: bytes) -> bytes:
        try:
            doc = json.loads(data)
        except ValueError:
            return data
        bare = path.split("?", 1)[0].rstrip("/")
        if self._spare_discovery and (bare in ("/api", "/apis", "/version") or bare.count("/") <= 3 and
                                      bare.startswith(("/api/", "/apis/")) and "namespaces" not in bare
                                      and doc.get("kind") == "APIResourceList"):
            return data
        with self._lock:
            if self._rng.random() >= self._rate:
                return data
            nodes = []
            stack = [(doc, "")]
            while stack:
                node, where = stack.pop()
                items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
                for key, child in items:
                    nodes.append((node, key, f"{where}.{key}"))
                    if isinstance(child, (dict, list)) and len(nodes) < 20000:
                        stack.append((child, f"{where}.{key}"))
            if not nodes:
                return data
            parent, key, where = self._rng.choice(nodes)
            value = self._rng.choice([None, 7, -1, "x", [], {}, True, [1, "a"], {"k": None}])
            parent[key] = value
            self.mutations.append(f"{path}: {where} = {value!r}")
        return json.dumps(doc).encode()

    def close(self) -> None:
        self._server.close()

    def __enter__(self) -> "MutatingProxy":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class LyingProxy(MutatingProxy):
    """An https proxy in front of a real API server that answers as it does, except what
    `lie(path, answer)` makes of each JSON answer (`path` with its query): a list holding items
    outside its selector or namespace, objects of names no server allows. What is really there
    stays the real server's, so what a command then deletes is what the real server deleted; every
    request is recorded (`requests`)."""

    def __init__(self, upstream: str, upstream_ca: bytes, token: str, lie):
        super().__init__(upstream, upstream_ca, token, seed=0, rate=0.0)
        self._lie = lie

    @property
    def requests(self) -> list[Recorded]:
        return self._server.requests

    def _mutate(self, path: str, data: bytes) -> bytes:
        try:
            doc = json.loads(data)
        except ValueError:
            return data
        return json.dumps(self._lie(path, doc)).encode()
