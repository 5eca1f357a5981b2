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

With `tls=True` it serves https with a throwaway CA (`ca_pem`), so credentials are sent to it (kubectl
and trainerctl send none over plain http). Every request is recorded (method, path, headers).
"""

from __future__ import annotations

import datetime as dt
import email.utils
import http.server
import json
import socket
import ssl
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

MODES = ("garbage", "null", "array", "string", "number", "deep", "truncated", "drip", "drip-body", "silent",
         "close", "huge", "huge-error", "escapes", "redirect", "429-seconds", "429-date", "429-forever",
         "bad-status", "wrong-shape", "500-json-list")

ESCAPES = ("\x1b[31mRED\x1b[0m \x1b]0;pwned-title\x07 \x1b]52;c;ZXZpbA==\x07 \x1b]8;;http://evil/\x1b\\link\x1b]8;;\x1b\\"
           "\nerror: forged second line\r\u202eevil\u202c \x9b2J \x00nul")


@dataclass
class Recorded:
    method: str
    path: str
    headers: dict[str, str]


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
                 drip_seconds: float = 2.0, throttle_count: int = 2, redirect_to: str = ""):
        if mode not in MODES + ("healthy",):
            raise ValueError(mode)
        self.mode = mode
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
            self._httpd.socket = ctx.wrap_socket(self._httpd.socket, server_side=True)
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
        with self._lock:
            self.requests.append(Recorded(h.command, h.path, {k.lower(): v for k, v in h.headers.items()}))
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
