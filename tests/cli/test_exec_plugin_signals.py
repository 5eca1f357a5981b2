"""Signals end child processes for good: a `trainerctl status` waiting on an exec credential plugin
that hangs (and has started a child of its own) is sent SIGTERM or Ctrl-C. It exits 130 with one
line, the plugin is never started a second time, and no process it started outlives the command.

The plugin is a real program; whether a process is left is read from /proc (a zombie waiting for
a parent to reap it has ended)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support.waiting import wait_until

PLUGIN = """#!{python}
import os, subprocess, sys, time
with open({pids!r}, "a") as fh:
    fh.write(f"{{os.getpid()}}\\n")
child = subprocess.Popen(["sleep", "300"])  # what a wrapper script starts: it keeps our output open
with open({pids!r}, "a") as fh:
    fh.write(f"{{child.pid}}\\n")
time.sleep(300)
with open({pids!r}, "a") as fh:  # only a plugin waited out, not stopped, gets here
    fh.write("finished\\n")
"""


def _entry() -> list[str]:
    exe = shutil.which("trainerctl", path=os.path.dirname(sys.executable))
    return [exe] if exe else [sys.executable, "-m", "trainerctl"]


def _alive(pid: int) -> bool:
    """Running or stopped, not a zombie (read from /proc, no psutil)."""
    try:
        stat_line = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return False
    return stat_line.rpartition(")")[2].split()[0] not in ("Z", "X")


def _running_from(marker: str) -> list[int]:
    """Every live process whose command line names `marker` (the test's own directory)."""
    out = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode("utf-8", "replace")
        except OSError:
            continue
        if marker in cmdline and _alive(int(entry.name)):
            out.append(int(entry.name))
    return out


@pytest.mark.parametrize("how", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_during_a_hanging_exec_plugin_ends_it_for_good(tmp_path, how):
    pids = tmp_path / "pids"
    script = tmp_path / "hanging-plugin.py"
    script.write_text(PLUGIN.format(python=sys.executable, pids=str(pids)))
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    kc = tmp_path / "kc"
    kc.write_text(json.dumps({
        "apiVersion": "v1", "kind": "Config", "current-context": "c",
        "clusters": [{"name": "k", "cluster": {"server": "https://127.0.0.1:1", "insecure-skip-tls-verify": True}}],
        "users": [{"name": "u", "user": {"exec": {"command": str(script), "interactiveMode": "Never",
                                                 "apiVersion": "client.authentication.k8s.io/v1"}}}],
        "contexts": [{"name": "c", "context": {"cluster": "k", "user": "u"}}]}))
    proc = subprocess.Popen([*_entry(), "status", "--kubeconfig", str(kc)], stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_until(lambda: pids.exists() and len(pids.read_text().split()) >= 2, 60, "the plugin and its child")
        proc.send_signal(how)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, (proc.returncode, err)  # docs/exit-codes.md: interrupted
    assert err.count("\n") == 1 and err.startswith("error: "), err
    time.sleep(0.5)  # what a second start would have written by now
    assert "finished" not in pids.read_text(), "the plugin was waited out instead of stopped"
    started_pids = [int(p) for p in pids.read_text().split()]
    assert len(started_pids) == 2, f"the plugin was started again after the signal: {started_pids}"
    assert [p for p in started_pids if _alive(p)] == [], "a process the plugin started outlived trainerctl"
    assert _running_from(str(tmp_path)) == []


def test_threads_waiting_for_the_plugin_never_start_it_again(tmp_path):
    """The race behind the issue: one thread runs the plugin, others wait for its answer; the
    abort kills it, and no waiting thread starts another."""
    import threading

    from trainerctl.cluster.client import kubeconfig_files
    from trainerctl.cluster.client.credentials import Credentials, ExecPluginFailed

    pids = tmp_path / "pids"
    script = tmp_path / "hanging-plugin.py"
    script.write_text(PLUGIN.format(python=sys.executable, pids=str(pids)))
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    kc = tmp_path / "kc"
    kc.write_text(json.dumps({
        "apiVersion": "v1", "kind": "Config", "current-context": "c",
        "clusters": [{"name": "k", "cluster": {"server": "https://127.0.0.1:1"}}],
        "users": [{"name": "u", "user": {"exec": {"command": str(script), "interactiveMode": "Never",
                                                 "apiVersion": "client.authentication.k8s.io/v1"}}}],
        "contexts": [{"name": "c", "context": {"cluster": "k", "user": "u"}}]}))
    credentials = Credentials(kubeconfig_files.load(str(kc), None))
    outcomes: list[BaseException | None] = []

    def ask() -> None:
        try:
            credentials.headers()
            outcomes.append(None)
        except BaseException as exc:  # noqa: BLE001 - what each thread got is the assertion
            outcomes.append(exc)

    threads = [threading.Thread(target=ask) for _ in range(4)]
    for t in threads:
        t.start()
    wait_until(lambda: pids.exists() and len(pids.read_text().split()) >= 2, 60, "the plugin and its child")
    credentials.abort()
    for t in threads:
        t.join(30)
    assert not any(t.is_alive() for t in threads)
    assert len(outcomes) == 4 and all(isinstance(o, ExecPluginFailed) for o in outcomes), outcomes
    time.sleep(0.3)
    started = [int(p) for p in pids.read_text().split()]
    assert len(started) == 2, f"started again: {started}"
    wait_until(lambda: not [p for p in started if _alive(p)], 10, "the plugin and its child to end")
