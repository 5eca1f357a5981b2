"""Every cluster command against a hostile API server (tests/support/hostile_api.py).

Whatever the server does (garbage, null, [], truncated or endless bodies, escape sequences, a
drip feed, silence, redirects, 429s with either form of Retry-After, discovery documents of the
wrong shape), each command ends in time, with at most one `error:` line (the last line), one of
the documented exit codes, no traceback, no terminal escape sequence, no line of unbounded
length, and no credential sent anywhere but to the server it was meant for.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.support.hostile_api import MODES, HostileServer

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

# Every command that talks to a cluster, with the flags that make it reach the server quickly.
# (Commands added later belong here too.)
COMMANDS = {
    "install": ["install", "-f", "{objects}", "--no-wait", "--timeout", "5"],
    "uninstall": ["uninstall", "--yes", "--timeout", "5"],
    "diff": ["diff", "-f", "{objects}"],
    "status": ["status"],
    "upgrade-check": ["upgrade-check", "-f", "{objects}"],
    "check": ["check", "-f", "{objects}"],
    "support-bundle": ["support-bundle"],
}
COMMAND_TIMEOUT = 6  # TRAINERCTL_COMMAND_TIMEOUT: a drip feed or a silent server ends here
LATER = ("garbage", "null", "wrong-shape", "escapes", "truncated", "huge", "500-json-list", "array")


def _entry() -> list[str]:
    exe = shutil.which("trainerctl", path=os.path.dirname(sys.executable))
    return [exe] if exe else [sys.executable, "-m", "trainerctl"]


def _cases() -> list[tuple[str, str, int]]:
    cases = [(cmd, mode, 0) for cmd in COMMANDS for mode in MODES]
    # Healthy at first, hostile later: the answers deeper in a command's work are checked too.
    cases += [(cmd, mode, after) for cmd in ("install", "status", "diff") for mode in LATER for after in (3, 8)]
    return cases


def _run_case(cmd: str, mode: str, after: int, tmp: Path) -> tuple[subprocess.CompletedProcess, float, list, list]:
    tmp.mkdir(parents=True, exist_ok=True)
    objects = tmp / "objects.yaml"
    objects.write_text(OBJECTS)
    with HostileServer("healthy", tls=True) as elsewhere, \
            HostileServer(mode, healthy_requests=after, tls=True, drip_seconds=1.0,
                          redirect_to=elsewhere.url) as server:
        kubeconfig = server.kubeconfig(tmp / "kubeconfig", token="hostile-test-token-0123456789")
        env = {**os.environ, "TRAINERCTL_COMMAND_TIMEOUT": str(COMMAND_TIMEOUT), "TRAINERCTL_MAX_API_RESPONSE": "4Mi",
               "HOME": str(tmp), "TRAINERCTL_CACHE_DIR": str(tmp / "cache"), "NO_COLOR": "1", "CI": "true",
               "KUBECONFIG": str(kubeconfig)}
        args = [a.format(objects=objects) for a in COMMANDS[cmd]]
        started = time.monotonic()
        proc = subprocess.run([*_entry(), *args], capture_output=True, text=True, env=env, cwd=tmp,
                              stdin=subprocess.DEVNULL, timeout=120)
        return proc, time.monotonic() - started, list(server.requests), list(elsewhere.requests)


def _check(case: tuple[str, str, int], result) -> list[str]:
    proc, elapsed, requests, elsewhere = result
    problems = []
    err, out = proc.stderr, proc.stdout
    lines = err.splitlines()
    if proc.returncode not in (0, 1, 2, 3, 4):
        problems.append(f"exit {proc.returncode}")
    if proc.returncode != 0 and not (lines and lines[-1].startswith("error: ")):
        problems.append("no error line last")
    if sum(line.startswith("error: ") for line in lines) > 1:
        problems.append("more than one error line")
    if "Traceback" in err or "internal error" in err:
        problems.append("a traceback or internal error")
    if any(c in err + out for c in "\x1b\x07\x9b\u202e\r"):
        problems.append("a control character reached the terminal")
    if any(len(line) > 4200 for line in lines + out.splitlines()):
        problems.append("a line of unbounded length")
    if elapsed > COMMAND_TIMEOUT + 20:
        problems.append(f"took {elapsed:.0f}s")
    if elsewhere:
        problems.append(f"followed a redirect ({len(elsewhere)} request(s) elsewhere)")
    if "hostile-test-token" in err + out:
        problems.append("printed the token")
    return [f"{case}: {p}: {err[-300:]!r}" for p in problems]


def test_every_cluster_command_survives_every_hostile_server(tmp_path):
    cases = _cases()
    with ThreadPoolExecutor(4) as pool:  # mostly waiting on servers: run a few at once
        results = list(pool.map(lambda c: (c, _run_case(*c, tmp_path / f"{c[0]}-{c[1]}-{c[2]}")), cases))
    problems = [p for case, result in results for p in _check(case, result)]
    assert not problems, "\n".join(problems[:30])
    assert len(results) == len(COMMANDS) * len(MODES) + 3 * len(LATER) * 2


@pytest.mark.parametrize("mode", ["429-seconds", "429-date"])
def test_retry_after_in_both_forms_is_honoured(tmp_path, mode):
    proc, elapsed, requests, _ = _run_case("status", mode, 0, tmp_path)
    assert proc.returncode == 1 and "not Ready" in proc.stderr, proc.stderr  # got through after the 429s
    assert sum(1 for r in requests if r.path.split("?")[0] in ("/api", "/apis")) >= 3  # asked again


def test_a_drip_feed_cannot_hang_a_command(tmp_path):
    proc, elapsed, _, _ = _run_case("status", "drip", 0, tmp_path)
    assert proc.returncode in (3, 4) and elapsed < COMMAND_TIMEOUT + 10, (elapsed, proc.stderr)


FUZZ_SEEDS = int(os.environ.get("TRAINERCTL_FUZZ_SEEDS", "4"))  # more: TRAINERCTL_FUZZ_SEEDS=200


def test_a_real_server_with_corrupted_answers(test_cluster, tmp_path):
    """The real API server behind a proxy that corrupts one value in some answers (a seeded
    MutatingProxy; discovery spared so the corruption lands deeper): install, diff and status
    each end cleanly, whichever field was hit."""
    from tests.support.hostile_api import MutatingProxy

    objects = tmp_path / "objects.yaml"
    objects.write_text(OBJECTS)
    commands = (["install", "-f", str(objects), "--no-wait", "--skip-preflight", "-n", "fuzz"],
                ["diff", "-f", str(objects), "-n", "fuzz"], ["status", "-n", "fuzz"], ["status", "-n", "fuzz", "-f", str(objects)])
    problems = []
    for seed in range(FUZZ_SEEDS):
        for args in commands:
            with MutatingProxy(test_cluster.server, test_cluster.ca_file.read_bytes(), test_cluster.admin_token,
                               seed=seed, rate=0.5, spare_discovery=True) as proxy:
                kubeconfig = proxy.kubeconfig(tmp_path / "kubeconfig", token="fuzz-token-0123456789")
                env = {**os.environ, "TRAINERCTL_COMMAND_TIMEOUT": "60", "CI": "true", "HOME": str(tmp_path)}
                started = time.monotonic()
                proc = subprocess.run([*_entry(), *args, "--kubeconfig", str(kubeconfig)], capture_output=True,
                                      text=True, env=env, stdin=subprocess.DEVNULL, timeout=300)
                result = (proc, time.monotonic() - started, [], [])
                problems += [f"seed {seed} {p} (mutations: {proxy.mutations[-3:]})"
                             for p in _check((args[0], "corrupted", seed), result)]
    assert not problems, "\n".join(problems[:20])
