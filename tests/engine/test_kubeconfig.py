"""kubeconfig as kubectl 1.37 reads it: merging, choosing, refusing, credentials (client/kubeconfig_files.py,
client/credentials.py), checked in-process and through the CLI against the loopback fake API server."""

from __future__ import annotations

import base64
import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.hostile_api import HostileServer, self_signed
from trainerctl.cluster.client import kubeconfig_files
from trainerctl.cluster.client.credentials import Credentials
from trainerctl.errors import InputError
from trainerctl.trust import redact

ROOT = Path(__file__).resolve().parents[2]


def _entry() -> list[str]:
    import shutil

    exe = shutil.which("trainerctl", path=os.path.dirname(sys.executable))
    return [exe] if exe else [sys.executable, "-m", "trainerctl"]


def write(path: Path, clusters=(), users=(), contexts=(), current: str | None = None) -> Path:
    doc: dict = {"apiVersion": "v1", "kind": "Config",
                 "clusters": [{"name": n, "cluster": c} for n, c in clusters],
                 "users": [{"name": n, "user": u} for n, u in users],
                 "contexts": [{"name": n, "context": c} for n, c in contexts]}
    if current is not None:
        doc["current-context"] = current
    path.write_text(json.dumps(doc))
    return path


@pytest.fixture(autouse=True)
def clean_env(monkeypatch, tmp_path):
    for var in ("KUBECONFIG", "HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "NO_PROXY", "no_proxy",
                "KUBERNETES_SERVICE_HOST", "KUBERNETES_SERVICE_PORT"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    redact.forget_all()


# --- merging (clientcmd's loading rules) ---------------------------------------------------------
def test_kubeconfig_lists_merge_first_file_wins(tmp_path, monkeypatch):
    a = write(tmp_path / "a", clusters=[("c1", {"server": "https://a:1"})], users=[("u", {"token": "from-a-file"})],
              contexts=[("x", {"cluster": "c1", "user": "u"})])
    b = write(tmp_path / "b", clusters=[("c1", {"server": "https://b:1"}), ("c2", {"server": "https://b:2"})],
              users=[("u", {"token": "from-b-file"})],
              contexts=[("x", {"cluster": "c2", "user": "u"}), ("y", {"cluster": "c2", "user": "u"})], current="y")
    monkeypatch.setenv("KUBECONFIG", f"{tmp_path / 'missing'}::{a}:{b}:{a}")
    sel = kubeconfig_files.load(None, None)
    # current-context from the first file that sets it (b), context y from b, cluster c2 from b
    assert (sel.context, sel.cluster.server, sel.user.token) == ("y", "https://b:2", "from-a-file")
    sel = kubeconfig_files.load(None, "x")  # the whole context x comes from a, the first to define it
    assert (sel.cluster.server, sel.user.token) == ("https://a:1", "from-a-file")


def test_relative_paths_are_relative_to_the_file_that_holds_them(tmp_path, monkeypatch):
    (tmp_path / "d").mkdir()
    write(tmp_path / "d" / "kc", clusters=[("c", {"server": "https://h:1", "certificate-authority": "ca.pem"})],
              users=[("u", {"tokenFile": "tok", "exec": None})], contexts=[("x", {"cluster": "c", "user": "u"})],
              current="x")
    monkeypatch.chdir(tmp_path)
    sel = kubeconfig_files.load(str(Path("d") / "kc"), None)
    assert sel.cluster.certificate_authority == str(tmp_path / "d" / "ca.pem")
    assert sel.user.token_file == str(tmp_path / "d" / "tok")


def test_an_explicit_file_must_exist_but_list_entries_may_be_missing(tmp_path, monkeypatch):
    with pytest.raises(InputError, match="--kubeconfig .*: file not found"):
        kubeconfig_files.load(str(tmp_path / "nope"), None)
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "nope"))
    with pytest.raises(InputError, match="no kubeconfig found"):
        kubeconfig_files.load(None, None)


def test_a_name_twice_in_one_file_is_refused(tmp_path):
    f = write(tmp_path / "kc", clusters=[("c", {"server": "https://h:1"}), ("c", {"server": "https://h:2"})])
    with pytest.raises(InputError, match="clusters: the name 'c' appears twice"):
        kubeconfig_files.read(str(f))


@pytest.mark.parametrize("user, says", [
    ({"auth-provider": {"name": "gcp", "config": {"cmd-path": "/bin/touch"}}}, "gcp auth-provider was removed"),
    ({"auth-provider": {"name": "azure", "config": {}}}, "azure auth-provider was removed"),
    ({"auth-provider": {"name": "custom"}}, "is not known"),
    ({"token": "a-token-value", "username": "u", "password": "p"}, "more than one authentication method"),
    ({"client-certificate-data": "QQ=="}, "needs client-key"),
    ({"client-key-data": "QQ=="}, "needs client-certificate"),
    ({"exec": {"command": "x", "apiVersion": "client.authentication.k8s.io/v1"}}, "interactiveMode: must be set"),
    ({"exec": {"command": "x", "apiVersion": "client.authentication.k8s.io/v1alpha1"}}, "v1alpha1 was removed"),
    ({"exec": {"command": "x", "apiVersion": "client.authentication.k8s.io/v1",
               "interactiveMode": "Sometimes"}}, "expected one of Never, IfAvailable, Always"),
    ({"exec": {"apiVersion": "client.authentication.k8s.io/v1", "interactiveMode": "Never"}}, "exec.command"),
    ({"as-groups": ["g"]}, "need `as`"),
    ({"token": 12345}, "token: expected a string"),
])
def test_auth_kubectl_refuses_is_refused_before_anything_runs(tmp_path, user, says):
    marker = tmp_path / "ran"
    user = json.loads(json.dumps(user).replace("/bin/touch", f"/bin/touch {marker}"))
    f = write(tmp_path / "kc", clusters=[("c", {"server": "https://h:1"})], users=[("u", user)],
              contexts=[("x", {"cluster": "c", "user": "u"})], current="x")
    with pytest.raises(InputError, match=says):
        kubeconfig_files.load(str(f), None)
    assert not marker.exists()


def test_beta_exec_defaults_to_if_available(tmp_path):
    f = write(tmp_path / "kc", clusters=[("c", {"server": "https://h:1"})],
              users=[("u", {"exec": {"command": "x", "apiVersion": "client.authentication.k8s.io/v1beta1"}})],
              contexts=[("x", {"cluster": "c", "user": "u"})], current="x")
    assert kubeconfig_files.load(str(f), None).user.exec.interactive_mode == "IfAvailable"


# --- credentials ---------------------------------------------------------------------------------
def _selected(tmp_path, user: dict, server="https://h:1", cluster: dict | None = None):
    f = write(tmp_path / "kc", clusters=[("c", {"server": server, **(cluster or {})})], users=[("u", user)],
              contexts=[("x", {"cluster": "c", "user": "u"})], current="x")
    return kubeconfig_files.load(str(f), None)


@pytest.mark.parametrize("where", ["token", "tokenFile"])
def test_a_token_with_a_line_break_is_one_line_without_the_token(tmp_path, where):
    secret = "line-one-secret-0123456789\nline-two-secret-9876543210"
    if where == "tokenFile":
        (tmp_path / "tok").write_text(secret + "\n")
        user = {"tokenFile": str(tmp_path / "tok")}
    else:
        user = {"token": secret}
    creds = Credentials(_selected(tmp_path, user))
    with pytest.raises(InputError) as info:
        creds.headers()
    message = str(info.value)
    assert "line break" in message and "secret" not in message and "\n" not in message
    assert redact.redact(secret) == "REDACTED\nREDACTED" or "secret" not in redact.redact(secret)


def test_a_token_file_is_trimmed_and_bounded(tmp_path, monkeypatch):
    (tmp_path / "tok").write_text("  file-token-abcdefgh \n")
    assert Credentials(_selected(tmp_path, {"tokenFile": str(tmp_path / "tok")})).headers() == [
        ("Authorization", "Bearer file-token-abcdefgh")]
    monkeypatch.setenv("TRAINERCTL_MAX_TOKEN_FILE", "10")
    with pytest.raises(InputError, match="larger than the 10 bytes limit .*TRAINERCTL_MAX_TOKEN_FILE"):
        Credentials(_selected(tmp_path, {"tokenFile": str(tmp_path / "tok")})).headers()


def test_no_credentials_go_to_a_plain_http_server(tmp_path):
    creds = Credentials(_selected(tmp_path, {"token": "not-for-http-123", "as": "bob"}, server="http://h:1"))
    assert creds.headers() == [("Impersonate-User", "bob")]


def test_impersonation_headers(tmp_path):
    creds = Credentials(_selected(tmp_path, {"as": "jane", "as-uid": "42", "as-groups": ["a", "b"],
                                             "as-user-extra": {"reason/why": ["x"]}}))
    assert creds.headers() == [("Impersonate-User", "jane"), ("Impersonate-Uid", "42"), ("Impersonate-Group", "a"),
                               ("Impersonate-Group", "b"), ("Impersonate-Extra-reason%2Fwhy", "x")]


def _key_pair(encrypted: bool) -> tuple[bytes, bytes]:
    from cryptography.hazmat.primitives import serialization

    cert, key = self_signed()
    if encrypted:
        private = serialization.load_pem_private_key(key, None)
        key = private.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                    serialization.BestAvailableEncryption(b"passphrase"))
    return cert, key


def test_an_encrypted_client_key_is_one_line_never_a_prompt(tmp_path):
    cert, key = _key_pair(encrypted=True)
    b64 = lambda d: base64.b64encode(d).decode()  # noqa: E731
    creds = Credentials(_selected(tmp_path, {"client-certificate-data": b64(cert), "client-key-data": b64(key)},
                                  cluster={"insecure-skip-tls-verify": True}))
    with pytest.raises(InputError, match="encrypted"):
        creds.tls_context()


def test_the_cli_never_prompts_for_a_passphrase(tmp_path):
    cert, key = _key_pair(encrypted=True)
    (tmp_path / "key.pem").write_bytes(key)
    (tmp_path / "cert.pem").write_bytes(cert)
    with HostileServer("healthy", tls=True) as server:
        path = server.kubeconfig(tmp_path / "kc", {"client-certificate": str(tmp_path / "cert.pem"),
                                                   "client-key": str(tmp_path / "key.pem")})
        proc = subprocess.run([*_entry(), "status", "--kubeconfig", str(path)], capture_output=True, text=True,
                              stdin=subprocess.DEVNULL, timeout=60)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and "encrypted" in proc.stderr, proc.stderr


# --- exec plugins, through the CLI ---------------------------------------------------------------
PLUGIN = """#!{python}
import json, os, sys
info = json.loads(os.environ["KUBERNETES_EXEC_INFO"])
open({log!r}, "a").write(json.dumps(info) + "\\n")
print("plugin says hello on stderr", file=sys.stderr)
print(json.dumps({{"apiVersion": info["apiVersion"], "kind": "ExecCredential",
                  "status": {{"token": {token!r}}}}}))
"""


def _plugin(tmp_path: Path, token: str = "exec-token-abcdef123456") -> tuple[Path, Path]:
    log = tmp_path / "plugin.log"
    script = tmp_path / "plugin.py"
    script.write_text(PLUGIN.format(python=sys.executable, log=str(log), token=token))
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return script, log


def _exec_user(script: Path, mode: str | None, api: str = "client.authentication.k8s.io/v1") -> dict:
    e = {"command": str(script), "apiVersion": api, "provideClusterInfo": True}
    if mode:
        e["interactiveMode"] = mode
    return {"exec": e}


def _run(args: list[str], **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([*_entry(), *args], capture_output=True, text=True, timeout=120,
                          stdin=kwargs.pop("stdin", subprocess.DEVNULL), **kwargs)


def test_an_exec_plugin_runs_as_client_go_runs_it(tmp_path):
    script, log = _plugin(tmp_path)
    with HostileServer("healthy", tls=True) as server:
        path = server.kubeconfig(tmp_path / "kc", _exec_user(script, "IfAvailable"))
        proc = _run(["status", "--kubeconfig", str(path)])
        sent = {r.headers.get("authorization") for r in server.requests}
    assert proc.returncode == 1, proc.stderr  # not installed: not Ready
    assert sent == {"Bearer exec-token-abcdef123456"}
    info = json.loads(log.read_text().splitlines()[0])
    assert info["kind"] == "ExecCredential" and info["spec"]["interactive"] is False  # stdin is not a terminal
    assert info["spec"]["cluster"]["server"] == server.url and info["spec"]["cluster"]["certificate-authority-data"]
    assert "warning: exec plugin" in proc.stderr and "plugin says hello" in proc.stderr


def test_interactive_always_without_a_terminal_is_refused_without_running(tmp_path):
    script, log = _plugin(tmp_path)
    with HostileServer("healthy", tls=True) as server:
        path = server.kubeconfig(tmp_path / "kc", _exec_user(script, "Always"))
        proc = _run(["status", "--kubeconfig", str(path)])
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and "needs a terminal" in proc.stderr, proc.stderr
    assert not log.exists()


def test_input_files_are_checked_before_an_exec_plugin_runs(tmp_path):
    script, log = _plugin(tmp_path)
    with HostileServer("healthy", tls=True) as server:
        path = server.kubeconfig(tmp_path / "kc", _exec_user(script, "Never"))
        for cmd in (["install"], ["diff"], ["upgrade-check"], ["status"]):
            proc = _run([*cmd, "-f", str(tmp_path / "missing.yaml"), "--kubeconfig", str(path)])
            assert proc.returncode == 2 and "missing.yaml" in proc.stderr, (cmd, proc.stderr)
    assert not log.exists()


def test_a_multi_line_exec_token_is_one_line_exit_2_and_never_printed(tmp_path):
    script, _ = _plugin(tmp_path, token="exec-line-one-0123456789\nexec-line-two-9876543210")
    with HostileServer("healthy", tls=True) as server:
        path = server.kubeconfig(tmp_path / "kc", _exec_user(script, "Never"))
        proc = _run(["status", "--kubeconfig", str(path)], env={**os.environ, "TRAINERCTL_DEBUG": "1"})
    assert proc.returncode == 2 and "line break" in proc.stderr, proc.stderr
    assert "exec-line" not in proc.stderr + proc.stdout and "internal error" not in proc.stderr


@pytest.mark.parametrize("output, says", [
    ("{not: [json", "not valid JSON"),
    ("just words", "not an ExecCredential"),
    (json.dumps({"apiVersion": "client.authentication.k8s.io/v1beta1", "kind": "ExecCredential",
                 "status": {"token": "t-123456789"}}), "has apiVersion"),
    (json.dumps({"apiVersion": "client.authentication.k8s.io/v1", "kind": "ExecCredential"}), "no status"),
    (json.dumps({"apiVersion": "client.authentication.k8s.io/v1", "kind": "ExecCredential",
                 "status": {"clientCertificateData": "x"}}), "only one of"),
])
def test_a_bad_exec_answer_is_one_line(tmp_path, output, says):
    script = tmp_path / "plugin.sh"
    script.write_text(f"#!/bin/sh\ncat <<'EOF'\n{output}\nEOF\n")
    script.chmod(0o755)
    with HostileServer("healthy", tls=True) as server:
        path = server.kubeconfig(tmp_path / "kc", _exec_user(script, "Never"))
        proc = _run(["status", "--kubeconfig", str(path)])
    assert proc.returncode in (1, 2) and proc.stderr.count("\n") == 1 and says in proc.stderr, proc.stderr


def test_a_failing_or_missing_plugin_is_one_line(tmp_path):
    script = tmp_path / "fail.sh"
    script.write_text("#!/bin/sh\necho 'token expired: run login' >&2\nexit 3\n")
    script.chmod(0o755)
    with HostileServer("healthy", tls=True) as server:
        for command, says, code in ((script, "failed with exit code 3: token expired: run login", 1),
                                    (tmp_path / "nope", "not found", 2)):
            path = server.kubeconfig(tmp_path / "kc", _exec_user(command, "Never"))
            proc = _run(["status", "--kubeconfig", str(path)])
            assert proc.returncode == code and proc.stderr.count("\n") == 1 and says in proc.stderr, proc.stderr


def test_process_substitution_is_a_kubeconfig_too(tmp_path):
    with HostileServer("healthy", tls=True) as server:
        path = server.kubeconfig(tmp_path / "kc")
        proc = subprocess.run(["bash", "-c", f'{" ".join(_entry())} status --kubeconfig <(cat {path})'],
                              capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1 and "not Ready" in proc.stderr, proc.stderr


def test_proxy_rules(monkeypatch):
    from trainerctl.net.proxy import no_proxy_matches, proxy_for

    assert no_proxy_matches("api.corp.example", 443, "example")  # suffix match
    assert no_proxy_matches("10.1.2.3", 6443, "10.0.0.0/8")
    assert not no_proxy_matches("api.other", 443, "corp.example,10.0.0.0/8")
    assert no_proxy_matches("h", 6443, "h:6443") and not no_proxy_matches("h", 443, "h:6443")
    monkeypatch.setenv("HTTPS_PROXY", "http://user:proxy-pass-123@proxy:3128")
    proxy = proxy_for("https://api:6443", "", "kc")
    assert (proxy.host, proxy.port) == ("proxy", 3128) and proxy.authorization.startswith("Basic ")
    assert proxy_for("https://127.0.0.1:6443", "", "kc") is None  # loopback never
    assert "proxy-pass-123" not in redact.redact("x proxy-pass-123")
    with pytest.raises(InputError, match="http:// proxies only"):
        proxy_for("https://api:6443", "socks5://p:1080", "kc")
