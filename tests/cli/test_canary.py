"""The canary: a distinct secret in every credential slot, every command on its success and failure
paths, and then none of them anywhere: not on stdout or stderr (plain, -o json, TRAINERCTL_DEBUG
tracebacks), not in any file created under HOME, the cache or TMPDIR."""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.hostile_api import HostileServer, self_signed

CANARIES = {
    "token": "canary-inline-token-7d1f0e2a9b",
    "token file": "canary-token-file-3c5e7a9b1d",
    "exec output": "canary-exec-token-8f6e4d2c0a",
    "url password": "canary-url-password-2b4d6f8h",
    "proxy password": "canary-proxy-password-5j7l9n",
    "secret data": "canary-secret-data-value-4k6m8p",
    "secret stringData": "canary-secret-stringdata-1q3s5u",
    "multi-line token": "canary-multiline-first-6w8y0a\ncanary-multiline-second-3z5x7v",
}


def _entry() -> list[str]:
    exe = shutil.which("trainerctl", path=os.path.dirname(sys.executable))
    return [exe] if exe else [sys.executable, "-m", "trainerctl"]


def _inputs(root: Path, server: HostileServer, key: bytes, cert: bytes) -> dict[str, Path]:
    """The planted inputs, outside HOME, the cache and TMPDIR (they are the user's own files)."""
    inputs = root / "inputs"
    inputs.mkdir(parents=True)
    (inputs / "token").write_text(CANARIES["token file"] + "\n")
    (inputs / "token-multi").write_text(CANARIES["multi-line token"] + "\n")
    plugin = inputs / "plugin.sh"
    plugin.write_text("#!/bin/sh\necho 'plugin: logging in' >&2\n"
                      'echo \'{"apiVersion": "client.authentication.k8s.io/v1", "kind": "ExecCredential", '
                      f'"status": {{"token": "{CANARIES["exec output"]}"}}}}\'\n')
    plugin.chmod(0o755)
    b64 = lambda data: base64.b64encode(data).decode()  # noqa: E731
    url = server.url.replace("https://", f"https://admin:{CANARIES['url password']}@")
    ca = b64(server.ca_pem)
    users = {
        "token": {"token": CANARIES["token"]},
        "tokenfile": {"tokenFile": str(inputs / "token")},
        "multiline": {"tokenFile": str(inputs / "token-multi")},
        "exec": {"exec": {"command": str(plugin), "apiVersion": "client.authentication.k8s.io/v1",
                          "interactiveMode": "Never"}},
        "certificate": {"client-certificate-data": b64(cert), "client-key-data": b64(key)},
    }
    contexts = [{"name": name, "context": {"cluster": "password-in-url" if name == "token" else "plain",
                                           "user": name}} for name in users]
    kubeconfig = inputs / "kubeconfig"
    kubeconfig.write_text(json.dumps({
        "apiVersion": "v1", "kind": "Config", "current-context": "token",
        "clusters": [{"name": "password-in-url", "cluster": {"server": url, "certificate-authority-data": ca}},
                     {"name": "plain", "cluster": {"server": server.url, "certificate-authority-data": ca}}],
        "users": [{"name": n, "user": u} for n, u in users.items()], "contexts": contexts}))
    secret = inputs / "secret.yaml"
    secret.write_text(f"""apiVersion: v1
kind: Secret
metadata: {{name: canary, namespace: opendatahub}}
data: {{a: {b64(CANARIES['secret data'].encode())}}}
stringData: {{b: {CANARIES['secret stringData']}}}
---
apiVersion: v1
kind: ConfigMap
metadata: {{name: c, namespace: opendatahub}}
data: {{x: y}}
""")
    overlay = inputs / "remote-overlay"
    overlay.mkdir()
    (overlay / "kustomization.yaml").write_text(
        f"resources:\n- https://u:{CANARIES['url password']}@127.0.0.1:1/x/deploy.yaml\n")
    return {"kubeconfig": kubeconfig, "secret": secret, "overlay": overlay, "inputs": inputs}


def _forms(secret: str) -> list[str]:
    forms = [secret, base64.b64encode(secret.encode()).decode()]
    forms += [line for line in secret.splitlines() if line]
    return forms


def test_no_credential_is_printed_or_written_anywhere(tmp_path):
    cert, key = self_signed()
    canaries = dict(CANARIES, **{"client key": key.decode().split("-----")[2].strip().splitlines()[1]})
    runs: list[tuple[list[str], subprocess.CompletedProcess]] = []
    home, cache, tmp = tmp_path / "home", tmp_path / "cache", tmp_path / "tmp"
    for d in (home, cache, tmp):
        d.mkdir()
    with HostileServer("healthy", tls=True) as good, HostileServer("escapes", tls=True, healthy_requests=4) as bad:
        for server, path in ((good, "success"), (bad, "failure")):
            files = _inputs(tmp_path / path, server, key, cert)
            kc, secret = str(files["kubeconfig"]), str(files["secret"])
            base_env = {**os.environ, "HOME": str(home), "TRAINERCTL_CACHE_DIR": str(cache), "TMPDIR": str(tmp),
                        "XDG_CACHE_HOME": str(home / ".cache"), "CI": "true", "NO_COLOR": "1",
                        "TRAINERCTL_COMMAND_TIMEOUT": "20",
                        "HTTPS_PROXY": f"http://p:{CANARIES['proxy password']}@127.0.0.1:1"}
            base_env.pop("KUBECONFIG", None)
            for context in ("token", "tokenfile", "multiline", "exec", "certificate"):
                for args in (["install", "-f", secret, "--no-wait", "--skip-preflight"],
                             ["install", "-f", secret, "--no-wait", "--skip-preflight", "-o", "json"],
                             ["install", "-f", "-", "--no-wait", "--skip-preflight", "--dry-run"],
                             ["diff", "-f", secret], ["status"], ["status", "-f", secret, "-o", "json"],
                             ["uninstall", "--yes", "--timeout", "3"], ["upgrade-check", "-f", secret, "-o", "json"]):
                    for debug in ({}, {"TRAINERCTL_DEBUG": "1"}):
                        proc = subprocess.run([*_entry(), *args, "--kubeconfig", kc, "--context", context],
                                              capture_output=True, text=True, timeout=120, cwd=tmp_path,
                                              env={**base_env, **debug},
                                              input=files["secret"].read_text() if "-" in args else None)
                        runs.append(([*args, context, path, str(bool(debug))], proc))
            url = f"https://user:{CANARIES['url password']}@127.0.0.1:1/o/trainer.git"
            for args in (["fetch", "--source", url, "--ref", "v1"], ["render", "--source", url, "--ref", "v1"],
                         ["render", "--source", url, "--ref", "v1", "--offline"],
                         ["render", "--source", url, "--ref", "v1", "-o", "json"],
                         ["install", "--source", url, "--ref", "v1", "--kubeconfig", kc],
                         ["kustomize", str(files["overlay"])]):
                proc = subprocess.run([*_entry(), *args], capture_output=True, text=True, timeout=120,
                                      cwd=tmp_path, env=base_env, stdin=subprocess.DEVNULL)
                runs.append((args, proc))
    assert len(runs) >= 170
    assert any(p.returncode == 0 for _, p in runs) and any(p.returncode != 0 for _, p in runs)
    found = []
    for args, proc in runs:
        for name, secret in canaries.items():
            for form in _forms(secret):
                if form in proc.stdout or form in proc.stderr:
                    found.append(f"{name} in the output of {args}: {(proc.stderr or proc.stdout)[-300:]!r}")
    for root in (home, cache, tmp):
        for path in root.rglob("*"):
            if path.is_file() and not path.is_symlink():
                data = path.read_bytes()
                for name, secret in canaries.items():
                    if any(form.encode() in data for form in _forms(secret)):
                        found.append(f"{name} in {path}")
    assert not found, "\n".join(found[:20])
