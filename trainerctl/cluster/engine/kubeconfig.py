"""A light kubeconfig loader for the common cases, so most runs skip importing the kubernetes
client (about 0.3-0.4 s of every install, diff and status).

It handles a context whose cluster has a server, CA and TLS settings and whose user has a
token or a client certificate. Anything else (exec plugins, auth providers, basic auth,
proxies, several kubeconfig files) returns None and the kubernetes client loads it instead,
with its messages.

Credentials never touch the disk: the TLS context is built here, once, with the CA from memory
and the client certificate and key through an anonymous in-memory file (memfd); where memfd is
missing, a private temporary file is removed before this function returns, whatever happens.
"""

from __future__ import annotations

import base64
import binascii
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from trainerctl.errors import InputError

_CLUSTER_KEYS = {"server", "certificate-authority", "certificate-authority-data",
                 "insecure-skip-tls-verify", "tls-server-name", "extensions"}
_USER_KEYS = {"token", "tokenFile", "client-certificate", "client-certificate-data",
              "client-key", "client-key-data", "extensions"}


@dataclass
class LightConfiguration:
    """The parts of kubernetes.client.Configuration that Cluster reads."""

    host: str
    token: str | None = None

    def auth_settings(self) -> dict:
        if not self.token:
            return {}
        return {"BearerToken": {"in": "header", "key": "authorization", "value": f"Bearer {self.token}"}}


@dataclass
class _Rest:
    pool_manager: Any


@dataclass
class LightClient:
    configuration: LightConfiguration
    rest_client: _Rest


def check_server(server: Any, where: str) -> str:
    """The cluster's server must be an http(s) URL with a host; anything else is bad input."""
    parts = urlsplit(server) if isinstance(server, str) else None
    try:
        port_ok = parts is not None and (parts.port is None or parts.port > 0)
    except ValueError:
        port_ok = False
    if parts is None or parts.scheme not in ("https", "http") or not parts.hostname or not port_ok \
            or any(c.isspace() for c in server):
        raise InputError(f"{where}: server {server!r}: expected a URL such as https://host:6443")
    return server


def _named(items: Any, name: str) -> dict | None:
    for item in items or []:
        if isinstance(item, dict) and item.get("name") == name:
            return item
    return None


def _decode(section: dict, key: str, where: str) -> bytes:
    try:
        return base64.b64decode(str(section[key]), validate=True)
    except (binascii.Error, ValueError):
        raise InputError(f"{where}: {key}: not valid base64") from None


def _pem(section: dict, data_key: str, path_key: str, base: Path, where: str) -> bytes | None:
    """The PEM bytes of `data_key` (inline, base64) or of the file `path_key` names."""
    if section.get(data_key):
        return _decode(section, data_key, where)
    if section.get(path_key):
        p = Path(str(section[path_key]))
        p = p if p.is_absolute() else base / p
        try:
            return p.read_bytes()
        except OSError as exc:
            raise InputError(f"{where}: {path_key} {p}: {exc.strerror}") from None
    return None


def _load_cert_chain(context, cert: bytes, key: bytes) -> None:
    """ssl only reads a client certificate from a file name: give it one that is not on disk."""
    if hasattr(os, "memfd_create"):
        fds = []
        try:
            for data in (cert, key):
                fd = os.memfd_create("trainerctl-credential", os.MFD_CLOEXEC)
                fds.append(fd)
                os.write(fd, data)
            context.load_cert_chain(f"/proc/self/fd/{fds[0]}", f"/proc/self/fd/{fds[1]}")
        finally:
            for fd in fds:
                os.close(fd)
        return
    import tempfile

    with tempfile.TemporaryDirectory(prefix="trainerctl-kubeconfig-") as private:  # 0700, removed on exit
        cert_file, key_file = os.path.join(private, "cert"), os.path.join(private, "key")
        for path, data in ((cert_file, cert), (key_file, key)):
            with open(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "wb") as fh:
                fh.write(data)
        context.load_cert_chain(cert_file, key_file)


def _tls_context(c: dict, u: dict, base: Path, where: str):
    import ssl

    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)  # verifies the server and its name
    if c.get("insecure-skip-tls-verify"):
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    else:
        ca = _pem(c, "certificate-authority-data", "certificate-authority", base, where)
        try:
            if ca is not None:
                context.load_verify_locations(cadata=ca.decode("ascii", "replace"))
            else:  # only then: the system bundle costs ~50 ms to load
                context.load_default_certs()
        except (ssl.SSLError, ValueError):
            raise InputError(f"{where}: certificate-authority: not a PEM certificate") from None
    cert = _pem(u, "client-certificate-data", "client-certificate", base, where)
    key = _pem(u, "client-key-data", "client-key", base, where)
    if (cert is None) != (key is None):
        raise InputError(f"{where}: a client certificate needs both client-certificate and client-key")
    if cert is not None:
        try:
            _load_cert_chain(context, cert, key)
        except ssl.SSLError:
            raise InputError(f"{where}: client-certificate/client-key: not a matching PEM certificate and key") \
                from None
    return context


def check_inline_data(path: str, context: str) -> None:
    """Strict base64 for the inline credentials of `context`, for kubeconfigs the kubernetes
    client loads (it decodes leniently: invalid base64 becomes an empty certificate)."""
    import yaml

    try:
        with open(path, "rb") as fh:
            doc = yaml.load(fh, Loader=yaml.CSafeLoader)
        ctx = _named(doc.get("contexts"), context)["context"]
        sections = [(_named(doc.get("clusters"), ctx.get("cluster")) or {}).get("cluster") or {},
                    (_named(doc.get("users"), ctx.get("user")) or {}).get("user") or {}]
    except Exception:  # the kubernetes client reports a malformed file itself
        return
    for section in sections:
        for key in ("certificate-authority-data", "client-certificate-data", "client-key-data"):
            if isinstance(section, dict) and section.get(key):
                _decode(section, key, f"kubeconfig {path}: context {context}")


def load(path: str, context: str | None, pool_size: int) -> tuple[LightClient, str] | None:
    if os.pathsep in os.environ.get("KUBECONFIG", "") and not context and path == os.environ["KUBECONFIG"].split(os.pathsep)[0]:
        return None  # merged kubeconfigs: let the kubernetes client merge them
    try:
        import yaml

        with open(path, "rb") as fh:
            doc = yaml.load(fh, Loader=yaml.CSafeLoader)
    except Exception:
        return None
    if not isinstance(doc, dict):
        return None
    name = context or doc.get("current-context")
    ctx = _named(doc.get("contexts"), name) if name else None
    if not ctx or not isinstance(ctx.get("context"), dict):
        return None
    cluster = _named(doc.get("clusters"), ctx["context"].get("cluster"))
    user = _named(doc.get("users"), ctx["context"].get("user")) or {"user": {}}
    c, u = (cluster or {}).get("cluster"), user.get("user") or {}
    if not isinstance(c, dict) or not isinstance(u, dict) or "server" not in c:
        return None
    where = f"kubeconfig {path}: cluster {ctx['context'].get('cluster')}"
    server = check_server(c["server"], where)
    if set(c) - _CLUSTER_KEYS or set(u) - _USER_KEYS or os.environ.get("HTTPS_PROXY") or os.environ.get("https_proxy"):
        return None
    import urllib3

    base = Path(path).resolve().parent
    token = u.get("token")
    if not token and u.get("tokenFile"):
        try:
            token = (base / str(u["tokenFile"])).read_text().strip()
        except OSError as exc:
            raise InputError(f"kubeconfig {path}: user {ctx['context'].get('user')}: tokenFile: {exc.strerror}") \
                from None
    tls = _tls_context(c, u, base, f"kubeconfig {path}: context {name}")
    kwargs: dict[str, Any] = {"maxsize": pool_size, "ssl_context": tls,
                              "cert_reqs": "CERT_NONE" if c.get("insecure-skip-tls-verify") else "CERT_REQUIRED"}
    if c.get("insecure-skip-tls-verify"):
        urllib3.disable_warnings(urllib3.exceptions.InsecureRequestWarning)
    elif c.get("tls-server-name"):
        kwargs["server_hostname"] = c["tls-server-name"]
    return LightClient(LightConfiguration(server, token), _Rest(urllib3.PoolManager(**kwargs))), name
