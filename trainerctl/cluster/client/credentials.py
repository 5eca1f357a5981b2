"""Who we are to the API server, as kubectl 1.37 decides it: TLS settings and request headers.

Built lazily, at the first request: a command checks its own input (`-f FILE`, flags) before
anything here reads a token file or runs an exec plugin.

- Only an https server gets credentials (kubectl's rule: no token over plain http).
- token (sent as is), tokenFile (trimmed), basic auth, client certificate and key (from files, the
  kubeconfig or an exec plugin), the oidc auth-provider's unexpired id-token, impersonation.
- An exec plugin runs as client-go runs it (KUBERNETES_EXEC_INFO, interactiveMode with the same
  terminal rules, stdin only when interactive) but bounded: a time-out, a size limit on its
  output, and its error output cleaned before it is shown.
- A credential that cannot be a header value (a line break in a token, say) is one line naming
  where it came from, never the value. Every credential is registered with trainerctl.trust.redact.
- Client keys reach OpenSSL through an anonymous in-memory file, never the disk; an encrypted key
  is refused (kubectl cannot use one either) instead of OpenSSL asking for a passphrase.
"""

from __future__ import annotations

import base64
import json
import os
import ssl
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from datetime import datetime, timezone

from trainerctl.cluster.client.kubeconfig_files import Selected
from trainerctl.errors import InputError, TrainerctlError
from trainerctl.trust import redact
from trainerctl.trust.bounded_process import kill_process_tree, read_process
from trainerctl.trust.bounded_read import read_input, shown_path
from trainerctl.trust.document_bounds import load_yaml
from trainerctl.trust.safe_text import clean
from trainerctl.ui import warn

EXEC_TIMEOUT = 120.0  # a non-interactive plugin; an interactive one waits for its user
EXEC_INTERACTIVE_TIMEOUT = 600.0


class CredentialError(InputError):
    """A credential that cannot be used: bad input (exit 2)."""


class ExecPluginFailed(TrainerctlError):
    """The exec plugin ran and failed (exit 1): its own problem, not the kubeconfig's."""


def check_header_value(value: str, where: str) -> str:
    """A header value must be one line of visible characters (Go's net/http checks the same)."""
    if any((ord(c) < 32 and c != "\t") or ord(c) == 127 for c in value):
        raise CredentialError(f"{where}: holds a line break or another control character, so it cannot be "
                              "sent (is it the right file?)")
    try:
        value.encode("latin-1")
    except UnicodeEncodeError:
        raise CredentialError(f"{where}: holds characters that cannot be sent in an HTTP header") from None
    return value


def _encrypted(pem: bytes) -> bool:
    return b"ENCRYPTED" in pem[:4096] and (b"Proc-Type: 4,ENCRYPTED" in pem or b"BEGIN ENCRYPTED PRIVATE KEY" in pem)


def _never_prompt() -> bytes:
    raise ValueError("encrypted key")


@dataclass
class _ExecResult:
    token: str = ""
    cert: bytes = b""
    key: bytes = b""
    expires: float | None = None  # time.time()


class Credentials:
    """TLS context and headers for one selected context; computed once, on first use."""

    def __init__(self, selected: Selected, *, stdin_in_use: bool = False):
        self.selected = selected
        self.stdin_in_use = stdin_in_use
        self._lock = threading.RLock()
        self._tls: ssl.SSLContext | None = None
        self._static: list[tuple[str, str]] | None = None
        self._exec: _ExecResult | None = None
        self._running: subprocess.Popen | None = None  # the exec plugin, while it runs
        # Set by abort (Ctrl-C, SIGTERM): no exec plugin is started again by this command. A
        # thread waiting on the lock while the plugin ran would otherwise start a second one,
        # which the command would leave running when it exits.
        self._aborted = threading.Event()
        self._grouped = False  # the running plugin leads its own process group

    @property
    def where(self) -> str:
        return self.selected.where

    def _user_where(self) -> str:
        return f"{self.where}: user {clean(self.selected.user_name, 100)}"

    # -- TLS ---------------------------------------------------------------------------------
    def tls_context(self) -> ssl.SSLContext:
        with self._lock:
            if self._tls is None:
                self._tls = self._build_tls()
            return self._tls

    def _read(self, path: str, field: str, limit: str) -> bytes:
        return read_input(path, f"{self.where}: {field} {shown_path(path)}", limit)

    def _build_tls(self) -> ssl.SSLContext:
        c, u = self.selected.cluster, self.selected.user
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)  # verifies the server and its name
        if c.insecure_skip_tls_verify:
            context.check_hostname = False
            context.verify_mode = ssl.CERT_NONE
        else:
            ca = c.certificate_authority_data or (
                self._read(c.certificate_authority, "certificate-authority", "certificate")
                if c.certificate_authority else None)
            try:
                if ca is not None:
                    context.load_verify_locations(cadata=ca.decode("ascii", "replace"))
                else:  # only then: the system bundle costs ~50 ms to load
                    context.load_default_certs()
            except (ssl.SSLError, ValueError):
                raise CredentialError(f"{self.where}: certificate-authority: not a PEM certificate") from None
        if not self.selected.secure:
            return context
        cert = u.client_certificate_data or (
            self._read(u.client_certificate, "client-certificate", "certificate") if u.client_certificate else None)
        key = u.client_key_data or (self._read(u.client_key, "client-key", "certificate") if u.client_key else None)
        if u.exec is not None:
            result = self._exec_result()
            if result.cert:
                cert, key = result.cert, result.key
        if cert is not None and key is not None:
            redact.register(key)
            load_cert_chain(context, cert, key, self._user_where())
        return context

    # -- headers -----------------------------------------------------------------------------
    def headers(self) -> list[tuple[str, str]]:
        """The authentication and impersonation headers of every request."""
        with self._lock:
            if self._static is None:
                self._static = self._build_static()
            headers = list(self._static)
            u = self.selected.user
            if self.selected.secure and u.exec is not None:
                result = self._exec_result()
                if result.token:
                    headers.append(("Authorization", "Bearer " + result.token))
            return headers

    def _build_static(self) -> list[tuple[str, str]]:
        u, where = self.selected.user, self._user_where()
        headers: list[tuple[str, str]] = []
        if self.selected.secure:
            token = u.token
            field = "token"
            if not token and u.token_file:
                data = self._read(u.token_file, "tokenFile", "token-file")
                redact.register(data)
                token = data.decode("utf-8", "replace").strip()
                field = f"tokenFile {shown_path(u.token_file)}"
            if token:
                redact.register(token)
                check_header_value(token, f"{where}: {field}")
                headers.append(("Authorization", "Bearer " + token))
            elif u.username or u.password:
                raw = f"{u.username}:{u.password}"
                check_header_value(raw, f"{where}: username/password")
                value = base64.b64encode(raw.encode("latin-1")).decode()
                redact.register(value)
                headers.append(("Authorization", "Basic " + value))
            elif u.auth_provider is not None:
                headers.append(("Authorization", "Bearer " + self._oidc_token()))
        if u.impersonate:
            headers.append(("Impersonate-User", check_header_value(u.impersonate, f"{where}: as")))
            if u.impersonate_uid:
                headers.append(("Impersonate-Uid", check_header_value(u.impersonate_uid, f"{where}: as-uid")))
            for group in u.impersonate_groups:
                headers.append(("Impersonate-Group", check_header_value(group, f"{where}: as-groups")))
            from urllib.parse import quote

            for key, values in u.impersonate_extra.items():
                for value in values:
                    headers.append((f"Impersonate-Extra-{quote(key, safe='')}",
                                    check_header_value(value, f"{where}: as-user-extra")))
        return headers

    def _oidc_token(self) -> str:
        config = (self.selected.user.auth_provider or {}).get("config") or {}
        token = config.get("id-token") or ""
        where = self._user_where()
        expires = _jwt_expiry(token)
        if not token or expires is None or expires <= time.time() + 10:
            raise CredentialError(
                f"{where}: the oidc auth-provider's id-token is missing or expired; kubectl would refresh it and "
                "write it back into the kubeconfig, which trainerctl never does: refresh it with kubectl (any "
                "command on this context) or use an exec plugin such as kubelogin")
        return check_header_value(token, f"{where}: auth-provider id-token")

    def abort(self) -> None:
        """Ctrl-C, SIGTERM: a plugin still running is stopped, with whatever it started (it may run
        on a worker thread), and none is started again. Called from the signal handler, so it
        takes no lock: the flag is set before the look at `_running`, and _run_exec sets
        `_running` before it looks at the flag, so one of the two always stops the plugin."""
        self._aborted.set()
        proc = self._running
        if proc is not None:
            kill_process_tree(proc, self._grouped)

    def forget(self) -> bool:
        """After a 401: an exec plugin's answer is asked for again once (as client-go does).
        Returns whether there was anything to refresh."""
        with self._lock:
            if self._exec is None:
                return False
            self._exec = None
            self._tls = None
            return True

    # -- exec plugins ------------------------------------------------------------------------
    def _exec_result(self) -> _ExecResult:
        if self._exec is None or (self._exec.expires is not None and self._exec.expires <= time.time()):
            self._exec = self._run_exec()
        return self._exec

    def _interactive(self) -> bool:
        e, where = self.selected.user.exec, self._user_where()
        try:
            stdin_tty = sys.stdin is not None and os.isatty(sys.stdin.fileno())
        except (OSError, ValueError):
            stdin_tty = False
        if e.interactive_mode == "Never":
            return False
        if e.interactive_mode == "IfAvailable":
            return stdin_tty and not self.stdin_in_use
        if not stdin_tty:
            raise CredentialError(f"{where}: the exec plugin needs a terminal (interactiveMode: Always), "
                                  "but standard input is not one")
        if self.stdin_in_use:
            raise CredentialError(f"{where}: the exec plugin needs standard input (interactiveMode: Always), "
                                  "but -f - reads the objects from it")
        return True

    def _exec_info(self, interactive: bool) -> str:
        e, c = self.selected.user.exec, self.selected.cluster
        spec: dict = {"interactive": interactive}
        if e.provide_cluster_info:
            cluster = {"server": c.server}
            if c.tls_server_name:
                cluster["tls-server-name"] = c.tls_server_name
            if c.insecure_skip_tls_verify:
                cluster["insecure-skip-tls-verify"] = True
            ca = c.certificate_authority_data or (
                self._read(c.certificate_authority, "certificate-authority", "certificate")
                if c.certificate_authority else b"")
            if ca:
                cluster["certificate-authority-data"] = base64.b64encode(ca).decode()
            if c.proxy_url:
                cluster["proxy-url"] = c.proxy_url
            if c.disable_compression:
                cluster["disable-compression"] = True
            if c.exec_extension is not None:
                cluster["config"] = c.exec_extension
            spec["cluster"] = cluster
        return json.dumps({"kind": "ExecCredential", "apiVersion": e.api_version, "spec": spec})

    def _stopped(self, shown: str) -> ExecPluginFailed:
        return ExecPluginFailed(f"{self._user_where()}: exec plugin {shown} not run: the command was interrupted")

    def _run_exec(self) -> _ExecResult:
        e, where = self.selected.user.exec, self._user_where()
        shown = clean(e.command, 200)
        if self._aborted.is_set():
            raise self._stopped(shown)
        interactive = self._interactive()
        env = {**os.environ, **dict(e.env), "KUBERNETES_EXEC_INFO": self._exec_info(interactive)}
        try:
            # Non-interactive: its own process group, so a stop ends what it started too (a
            # script's `sleep`, which would keep its output open). An interactive one stays in
            # the terminal's foreground group to read from it; the terminal's Ctrl-C reaches it.
            proc = subprocess.Popen([e.command, *e.args], env=env, stdout=subprocess.PIPE,
                                    stdin=None if interactive else subprocess.DEVNULL,
                                    stderr=None if interactive else subprocess.PIPE,
                                    process_group=None if interactive else 0)
        except FileNotFoundError:
            hint = f"; {e.install_hint}" if e.install_hint else ""
            raise CredentialError(f"{where}: exec plugin {shown} not found{hint}") from None
        except OSError as exc:
            raise CredentialError(f"{where}: exec plugin {shown} cannot run: "
                                  f"{clean((exc.strerror or str(exc)).lower(), 200)}") from None
        self._grouped = not interactive
        self._running = proc
        try:
            if self._aborted.is_set():  # abort ran between the check above and `_running`
                kill_process_tree(proc, not interactive)
            out, err = read_process(proc, "exec-output", EXEC_INTERACTIVE_TIMEOUT if interactive else EXEC_TIMEOUT,
                                    f"{where}: exec plugin {shown}", ExecPluginFailed, group=not interactive)
        finally:
            self._running = None
        if self._aborted.is_set():
            raise self._stopped(shown)
        err_lines = [clean(line, 300) for line in err.decode("utf-8", "replace").splitlines() if line.strip()]
        if proc.returncode != 0:
            last = f": {err_lines[-1]}" if err_lines else ""
            raise ExecPluginFailed(f"{where}: exec plugin {shown} failed with exit code {proc.returncode}{last}")
        result = self._parse_exec(out, where, shown)
        for line in err_lines[:10]:  # what it said on stderr, as kubectl shows it (after our redaction)
            warn(f"exec plugin {shown}: {line}")
        return result

    def _parse_exec(self, out: bytes, where: str, shown: str) -> _ExecResult:
        e = self.selected.user.exec
        label = f"{where}: exec plugin {shown}: its output"
        try:
            text = out.decode("utf-8")
        except UnicodeDecodeError:
            raise ExecPluginFailed(f"{label} is not UTF-8 text") from None
        try:
            doc = load_yaml(text, label, expected="JSON (an ExecCredential)")
        except InputError as exc:
            raise ExecPluginFailed(str(exc)) from None
        if not isinstance(doc, dict) or doc.get("kind") != "ExecCredential":
            raise ExecPluginFailed(f"{label} is not an ExecCredential")
        if doc.get("apiVersion") != e.api_version:
            raise ExecPluginFailed(f"{label} has apiVersion {clean(str(doc.get('apiVersion')), 100)!r}, but the "
                                   f"kubeconfig asks for {e.api_version}")
        status = doc.get("status")
        if not isinstance(status, dict):
            raise ExecPluginFailed(f"{label} has no status")
        token, cert, key = (status.get(k) or "" for k in ("token", "clientCertificateData", "clientKeyData"))
        if not all(isinstance(v, str) for v in (token, cert, key)):
            raise ExecPluginFailed(f"{label}: status.token, clientCertificateData and clientKeyData must be strings")
        redact.register(token)
        redact.register(key)
        if not token and not cert and not key:
            raise ExecPluginFailed(f"{label} holds neither a token nor a certificate and key")
        if bool(cert) != bool(key):
            raise ExecPluginFailed(f"{label} holds only one of clientCertificateData and clientKeyData")
        if token:
            check_header_value(token, f"{label}: status.token")
        expires = None
        stamp = status.get("expirationTimestamp")
        if stamp:
            try:
                expires = datetime.fromisoformat(str(stamp).replace("Z", "+00:00")).astimezone(timezone.utc).timestamp()
            except ValueError:
                raise ExecPluginFailed(f"{label}: status.expirationTimestamp is not an RFC 3339 time") from None
        return _ExecResult(token, cert.encode(), key.encode(), expires)


def _jwt_expiry(token: str) -> float | None:
    try:
        payload = token.split(".")[1]
        claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
        return float(claims["exp"])
    except (IndexError, ValueError, KeyError, TypeError):
        return None


def load_cert_chain(context: ssl.SSLContext, cert: bytes, key: bytes, where: str) -> None:
    """ssl only reads a client certificate from a file name: give it one that is not on disk."""
    if _encrypted(key):
        raise CredentialError(f"{where}: the client key is encrypted (passphrase-protected); kubectl cannot use "
                              "it either: decrypt it (openssl pkey) or use a token")
    try:
        if hasattr(os, "memfd_create"):
            fds = []
            try:
                for data in (cert, key):
                    fd = os.memfd_create("trainerctl-credential", os.MFD_CLOEXEC)
                    fds.append(fd)
                    os.write(fd, data)
                context.load_cert_chain(f"/proc/self/fd/{fds[0]}", f"/proc/self/fd/{fds[1]}", password=_never_prompt)
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
            context.load_cert_chain(cert_file, key_file, password=_never_prompt)
    except (ssl.SSLError, ValueError):
        raise CredentialError(f"{where}: client-certificate/client-key: not a matching PEM certificate and "
                              "unencrypted key") from None
