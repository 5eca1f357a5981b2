"""Real registries for the `images` tests (tests/testenv/build.py builds them from the Go module proxy).

`crane registry serve` (go-containerregistry v0.22.1) holds the images, pushed by the tests with
`crane`. In front of it, as a mirror registry stands in front of its upstream, three distribution
registries (v3.0.0) run as pull-through proxies, each over TLS with a throwaway CA:
  tls    no auth (anonymous)
  mtls   no auth, but a client certificate signed by the CA is required
  basic  htpasswd Basic auth (alice)
  token  Docker token auth: its realm is TokenServer below, whose RS256 JWTs (x5c chained to the
         CA) the distribution registry verifies itself; distribution issues no tokens. The
         server speaks the Docker token protocol: GET with Basic credentials or anonymously,
         POST grant_type=refresh_token (an identity token). Anonymous users get pull access
         except under `private/`.
"""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
import http.server
import json
import os
import re
import secrets
import ssl
import subprocess
import tarfile
import threading
import time
import uuid
from dataclasses import dataclass, field
from io import BytesIO
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

from tests.support.waiting import wait_until
from tests.support.tls_listen import listen_tls

USERS = {"alice": "alice-s3cret-pass", "bob": "bob-t0ken-pass"}
IDENTITY_TOKENS = {"refresh-token-for-bob-0123456789": "bob"}
SERVICE = "trainerctl-test-registry"
ISSUER = "trainerctl-test-token-server"


@dataclass
class Pki:
    """A throwaway CA, a server certificate for 127.0.0.1 and localhost, and a token signer."""

    ca_pem: bytes
    cert_pem: bytes
    key_pem: bytes
    signer_key: object
    signer_der: bytes
    client_cert_pem: bytes = b""  # a client certificate (for the `mtls` registry) and its key
    client_key_pem: bytes = b""


def make_pki() -> Pki:
    import ipaddress

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec, rsa
    from cryptography.x509.oid import NameOID

    now = dt.datetime.now(dt.timezone.utc)

    def name(cn: str) -> x509.Name:
        return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)])

    def signed(subject: str, key, extensions) -> x509.Certificate:
        builder = (x509.CertificateBuilder().subject_name(name(subject)).issuer_name(name("trainerctl test registry CA"))
                   .public_key(key.public_key()).serial_number(x509.random_serial_number())
                   .not_valid_before(now - dt.timedelta(minutes=5)).not_valid_after(now + dt.timedelta(days=1)))
        for ext, critical in extensions:
            builder = builder.add_extension(ext, critical=critical)
        return builder.sign(ca_key, hashes.SHA256())

    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca = signed("trainerctl test registry CA", ca_key, [(x509.BasicConstraints(ca=True, path_length=None), True)])
    server_key = ec.generate_private_key(ec.SECP256R1())
    server = signed("127.0.0.1", server_key, [(x509.SubjectAlternativeName(
        [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), False)])
    signer_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    signer = signed("token signer", signer_key, [])
    client_key = ec.generate_private_key(ec.SECP256R1())
    client = signed("trainerctl test client", client_key,
                    [(x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.CLIENT_AUTH]), False)])
    pem = serialization.Encoding.PEM

    def private(key) -> bytes:
        return key.private_bytes(pem, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())

    return Pki(ca.public_bytes(pem), server.public_bytes(pem), private(server_key), signer_key,
               signer.public_bytes(serialization.Encoding.DER), client.public_bytes(pem), private(client_key))


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _serve(handler, pki: Pki | None, files: Path | None, bind: str = "127.0.0.1") -> http.server.ThreadingHTTPServer:
    """A loopback server on a thread of its own; https with the CA's server certificate when `pki`
    is given (its cert and key are written to `files`.crt and `files`.key)."""
    httpd = http.server.ThreadingHTTPServer((bind, 0), handler)
    if pki is not None:
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        files.with_suffix(".crt").write_bytes(pki.cert_pem)
        files.with_suffix(".key").write_bytes(pki.key_pem)
        context.load_cert_chain(files.with_suffix(".crt"), files.with_suffix(".key"))
        listen_tls(httpd, context)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return httpd


class TokenServer:
    """The token issuer for the `token` registry (https, the CA's server certificate)."""

    def __init__(self, pki: Pki, work: Path):
        self.pki = pki
        self.requests: list[dict] = []
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def _answer(self, status: int, body: dict) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self):
                query = parse_qs(urlsplit(self.path).query)
                user = None
                auth = self.headers.get("Authorization", "")
                server.requests.append({"method": "GET", "authorization": auth, "query": query})
                if auth.startswith("Basic "):
                    name, _, password = base64.b64decode(auth[6:]).decode().partition(":")
                    if USERS.get(name) != password:
                        return self._answer(401, {"errors": [{"code": "UNAUTHORIZED", "message": "bad credentials"}]})
                    user = name
                self._answer(200, server.issue(user, query))

            def do_POST(self):
                length = int(self.headers.get("Content-Length") or 0)
                form = parse_qs(self.rfile.read(length).decode())
                server.requests.append({"method": "POST", "form": form})
                user = IDENTITY_TOKENS.get((form.get("refresh_token") or [""])[0])
                if (form.get("grant_type") or [""])[0] != "refresh_token" or user is None:
                    return self._answer(401, {"errors": [{"code": "UNAUTHORIZED", "message": "bad refresh token"}]})
                self._answer(200, server.issue(user, form))

        self.httpd = _serve(Handler, pki, work / "token")
        self.realm = f"https://127.0.0.1:{self.httpd.server_address[1]}/token"

    def issue(self, user: str | None, query: dict) -> dict:
        from cryptography.hazmat.primitives import hashes
        from cryptography.hazmat.primitives.asymmetric import padding

        access = []
        for scope in query.get("scope", []):
            kind, _, rest = scope.partition(":")
            repo, _, actions = rest.rpartition(":")
            if kind == "repository" and (user is not None or not repo.startswith("private/")):
                access.append({"type": "repository", "name": repo, "actions": [a for a in actions.split(",") if a == "pull"]})
        now = int(time.time())
        claims = {"iss": ISSUER, "sub": user or "", "aud": (query.get("service") or [SERVICE])[0], "exp": now + 300,
                  "nbf": now - 30, "iat": now, "jti": str(uuid.uuid4()), "access": access}
        header = {"typ": "JWT", "alg": "RS256", "x5c": [base64.b64encode(self.pki.signer_der).decode()]}
        signing_input = f"{_b64url(json.dumps(header).encode())}.{_b64url(json.dumps(claims).encode())}"
        signature = self.pki.signer_key.sign(signing_input.encode(), padding.PKCS1v15(), hashes.SHA256())
        token = f"{signing_input}.{_b64url(signature)}"
        return {"token": token, "access_token": token, "expires_in": 300}

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@dataclass
class Process:
    proc: subprocess.Popen
    log: Path


def _start(cmd: list[str], log: Path, pattern: str, env: dict | None = None) -> tuple[Process, str]:
    """Start cmd, wait for `pattern` (one group: the address or port) in its log."""
    out = open(log, "wb")
    proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=env)
    out.close()
    def listening():
        match = re.search(pattern, log.read_text(errors="replace"))
        if match is None and proc.poll() is not None:
            raise RuntimeError(f"{cmd[0]} exited: {log.read_text(errors='replace')[-2000:]}")
        return match

    try:
        match = wait_until(listening, 60, f"{cmd[0]} to start (its log: {log})", interval=0.1)
    except (AssertionError, RuntimeError):
        proc.kill()
        proc.wait()
        raise
    return Process(proc, log), match.group(1)


@dataclass
class RegistryStack:
    bin_dir: Path
    work: Path
    pki: Pki = field(init=False)
    backend: str = field(init=False, default="")  # crane's host:port (plain http, no auth)
    hosts: dict[str, str] = field(init=False, default_factory=dict)  # tls, basic, token -> host:port
    token_server: TokenServer | None = field(init=False, default=None)
    processes: list[Process] = field(init=False, default_factory=list)

    @property
    def ca_file(self) -> Path:
        return self.work / "ca.crt"

    def start(self) -> "RegistryStack":
        self.pki = make_pki()
        self.ca_file.write_bytes(self.pki.ca_pem)
        (self.work / "server.crt").write_bytes(self.pki.cert_pem)
        (self.work / "server.key").write_bytes(self.pki.key_pem)
        crane, port = _start([str(self.bin_dir / "crane"), "registry", "serve", "--address", "127.0.0.1:0"],
                             self.work / "crane.log", r"serving on port (\d+)")
        self.processes.append(crane)
        self.backend = f"127.0.0.1:{port}"
        htpasswd = subprocess.run([str(self.bin_dir / "htpasswd"), "alice", USERS["alice"]], capture_output=True,
                                  text=True, check=True).stdout
        (self.work / "htpasswd").write_text(htpasswd)
        self.token_server = TokenServer(self.pki, self.work)
        auth = {"tls": "", "mtls": "", "basic": f"auth:\n  htpasswd:\n    realm: trainerctl-test\n    path: {self.work / 'htpasswd'}\n",
                "token": (f"auth:\n  token:\n    realm: {self.token_server.realm}\n    service: {SERVICE}\n"
                          f"    issuer: {ISSUER}\n    rootcertbundle: {self.ca_file}\n")}
        for name, block in auth.items():
            config = self.work / f"{name}.yml"
            config.write_text(
                "version: 0.1\nlog:\n  level: info\n  formatter: text\n  accesslog:\n    disabled: true\n"
                "storage:\n  inmemory: {}\n"
                f"http:\n  addr: 127.0.0.1:0\n  secret: {secrets.token_hex(16)}\n"
                f"  tls:\n    certificate: {self.work / 'server.crt'}\n    key: {self.work / 'server.key'}\n"
                + (f"    clientcas:\n      - {self.ca_file}\n" if name == "mtls" else "")
                + f"proxy:\n  remoteurl: http://{self.backend}\n" + block)
            process, address = _start([str(self.bin_dir / "registry"), "serve", str(config)],
                                       self.work / f"{name}.log", r'listening on (127\.0\.0\.1:\d+)')
            self.processes.append(process)
            self.hosts[name] = address
        return self

    def push(self, repository: str, tag: str) -> str:
        """A random one-layer image at the backend as repository:tag; its digest."""
        layer = self.work / f"layer-{secrets.token_hex(4)}.tar"
        with tarfile.open(layer, "w") as tar:
            data = secrets.token_bytes(256)
            info = tarfile.TarInfo("payload.bin")
            info.size = len(data)
            tar.addfile(info, BytesIO(data))
        ref = f"{self.backend}/{repository}:{tag}"
        self.crane("append", "-f", str(layer), "-t", ref)
        return self.crane("digest", ref).strip()

    def push_index(self, repository: str, tag: str, *manifests: str) -> str:
        """An image index (multi-arch) of the given images at repository:tag; its digest."""
        ref = f"{self.backend}/{repository}:{tag}"
        args = [x for m in manifests for x in ("-m", f"{self.backend}/{m}")]
        self.crane("index", "append", *args, "-t", ref)
        return self.crane("digest", ref).strip()

    def crane(self, *args: str) -> str:
        env = {**os.environ, "HOME": str(self.work)}  # no docker config of the machine
        done = subprocess.run([str(self.bin_dir / "crane"), *args, "--insecure"], capture_output=True, text=True,
                              env=env, timeout=120)
        if done.returncode != 0:
            raise RuntimeError(f"crane {' '.join(args)}: {done.stderr.strip()}")
        return done.stdout

    def stop(self) -> None:
        for process in self.processes:
            process.proc.terminate()
        for process in self.processes:
            try:
                process.proc.wait(10)
            except subprocess.TimeoutExpired:
                process.proc.kill()
                process.proc.wait()
        if self.token_server is not None:
            self.token_server.stop()


@pytest.fixture(scope="session")
def registry_stack(registry_binaries, tmp_path_factory):
    """The running registries (RegistryStack), stopped at session end."""
    stack = RegistryStack(registry_binaries, tmp_path_factory.mktemp("registries")).start()
    try:
        yield stack
    finally:
        stack.stop()


class HostileRegistry:
    """A loopback registry (plain http) that misbehaves in one `mode` per repository name:

      garbage        HEAD without a digest, GET 200 with an HTML page
      bad-digest     GET 200 with a manifest whose Docker-Content-Digest is another's
      huge           GET 200 with a 64 MiB body
      no-challenge   401 without WWW-Authenticate
      token-garbage  401 Bearer, and the realm answers HTML
      token-huge     401 Bearer, and the realm answers 64 MiB
      http-realm     401 Bearer with a realm on another host over plain http
      redirect-loop  307 to itself, forever          redirect-http   307 from https to http (tls only)
      redirect-elsewhere  307 to `elsewhere` (another host, plain http), to repository `landed`
      throttled      429 with Retry-After: 1 twice, then the manifest
      escapes        500 whose error message holds terminal escapes and a forged second line
      token-typed    401 Bearer, and the realm answers a token that is a number (and a good access_token)
      manifest-typed a manifest whose schemaVersion is "2" and layers a string (with its right digest)
    """

    MANIFEST = json.dumps({"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
                           "config": {}, "layers": []}).encode()

    def __init__(self, tls_pki: Pki | None = None, work: Path | None = None, bind: str = "127.0.0.1"):
        server = self
        self.seen: dict[str, int] = {}
        self.elsewhere = ""  # HOST:PORT that redirect-elsewhere sends to

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def _send(self, status: int, body: bytes = b"", headers: dict | None = None, length: int | None = None):
                self.send_response(status)
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.send_header("Content-Length", str(len(body) if length is None else length))
                self.end_headers()
                if self.command != "HEAD":
                    if length is not None and length > len(body):
                        chunk = b"x" * 65536
                        try:
                            for _ in range(length // len(chunk)):
                                self.wfile.write(chunk)
                        except OSError:
                            pass
                    else:
                        self.wfile.write(body)

            def do_HEAD(self):
                self.do_GET()

            def do_GET(self):
                path = urlsplit(self.path).path
                mode = path.split("/")[2] if path.startswith("/v2/") and path.count("/") > 2 else path.strip("/")
                server.seen[mode] = server.seen.get(mode, 0) + 1
                host = self.headers.get("Host", "")
                if path == "/token-garbage":
                    return self._send(200, b"<html>not a token</html>", {"Content-Type": "text/html"})
                if path == "/token-typed":
                    return self._send(200, b'{"token": 5, "access_token": "t0ken"}', {"Content-Type": "application/json"})
                if path == "/token-huge":
                    return self._send(200, b"", {"Content-Type": "application/json"}, length=64 << 20)
                if mode == "garbage":
                    return self._send(200, b"<html><body>hello</body></html>", {"Content-Type": "text/html"})
                if mode == "bad-digest":
                    return self._send(200, server.MANIFEST, {"Docker-Content-Digest": "sha256:" + "1" * 64,
                                                            "Content-Type": "application/vnd.oci.image.manifest.v1+json"}
                                      if self.command == "GET" else {})
                if mode == "huge":
                    return self._send(200, b"", {"Content-Type": "application/json"}, length=64 << 20)
                if mode == "no-challenge":
                    return self._send(401)
                if mode == "manifest-typed":
                    body = b'{"schemaVersion": "2", "layers": "none"}'
                    return self._send(200, body, {"Docker-Content-Digest": "sha256:" + hashlib.sha256(body).hexdigest(),
                                                  "Content-Type": "application/vnd.oci.image.manifest.v1+json"}
                                      if self.command == "GET" else {})
                if mode in ("token-garbage", "token-huge", "token-typed"):
                    scheme = "https" if tls_pki else "http"
                    return self._send(401, headers={"WWW-Authenticate": f'Bearer realm="{scheme}://{host}/{mode}",service="x"'})
                if mode == "http-realm":
                    return self._send(401, headers={"WWW-Authenticate": 'Bearer realm="http://127.0.0.2:1/token"'})
                if mode == "redirect-loop":
                    return self._send(307, headers={"Location": self.path})
                if mode == "redirect-http":
                    return self._send(307, headers={"Location": f"http://{host}{self.path}"})
                if mode == "redirect-elsewhere":
                    return self._send(307, headers={"Location": f"http://{server.elsewhere}/v2/landed/image/manifests/1"})
                if mode == "throttled" and server.seen[mode] <= 2:
                    return self._send(429, headers={"Retry-After": "1"})
                if mode == "escapes":
                    body = json.dumps({"errors": [{"code": "UNKNOWN", "message": "\x1b[31mred\x1b[0m\nerror: forged line"}]})
                    return self._send(500, body.encode(), {"Content-Type": "application/json"})
                digest = "sha256:" + hashlib.sha256(server.MANIFEST).hexdigest()
                return self._send(200, server.MANIFEST, {"Docker-Content-Digest": digest,
                                                        "Content-Type": "application/vnd.oci.image.manifest.v1+json"})

        self.httpd = _serve(Handler, tls_pki, work / "hostile" if work else None, bind)
        self.host = f"{bind}:{self.httpd.server_address[1]}"

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
