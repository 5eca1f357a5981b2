"""Local input that is not what it claims to be, and output that cannot be written: each case is one
line on stderr and the documented exit code, in seconds, never a hang, a traceback or an echo of the
file; writes never follow a symlink out; nothing secret reaches the disk."""

from __future__ import annotations

import json
import os
import pty
import shutil
import socket
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from trainerctl.source.cache import SourceCache
from trainerctl.source.lock_file import Lock, read_lock, write_lock

SHADOW = "root:$6$saltsalt$Q9hashhashhashhashhash:19000:0:99999:7:::\ndaemon:*:19000:0:99999:7:::\n"
ONE = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x, namespace: opendatahub}\ndata: {a: b}\n"


def _entry() -> list[str]:
    exe = shutil.which("trainerctl", path=os.path.dirname(sys.executable))
    return [exe] if exe else [sys.executable, "-m", "trainerctl"]


@pytest.fixture(scope="module")
def work(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("trust-inputs")
    os.mkfifo(root / "fifo")
    (root / "loop1").symlink_to("loop2")
    (root / "loop2").symlink_to("loop1")
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(root / "sock"))
    (root / "shadow").write_text(SHADOW)
    (root / "one.yaml").write_text(ONE)
    (root / "deep.yaml").write_text("a: " + "[" * 30000 + "]" * 30000 + "\n")
    (root / "deeper-than-us.yaml").write_text(
        '{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}, "x": ' + "[" * 5000 + "]" * 5000 + "}\n")
    (root / "big.yaml").write_text(ONE + "# " + "x" * 4096 + "\n")
    (root / "long").write_text("")
    (root / "kc-down").write_text(json.dumps({
        "clusters": [{"name": "k", "cluster": {"server": "https://127.0.0.1:1"}}],
        "users": [{"name": "u", "user": {"token": "t-0123456789"}}],
        "contexts": [{"name": "c", "context": {"cluster": "k", "user": "u"}}], "current-context": "c"}))
    for name, user, cluster in (("kc-ca-zero", {}, {"certificate-authority": "/dev/zero"}),
                                ("kc-ca-fifo", {}, {"certificate-authority": str(root / "fifo")}),
                                ("kc-token-zero", {"tokenFile": "/dev/zero"}, {}),
                                ("kc-token-fifo", {"tokenFile": str(root / "fifo")}, {}),
                                ("kc-key-fifo", {"client-certificate": str(root / "fifo"),
                                                 "client-key": str(root / "fifo")}, {})):
        (root / name).write_text(json.dumps({
            "clusters": [{"name": "k", "cluster": {"server": "https://127.0.0.1:1", **cluster}}],
            "users": [{"name": "u", "user": user}],
            "contexts": [{"name": "c", "context": {"cluster": "k", "user": "u"}}], "current-context": "c"}))
    source = root / "source" / "manifests" / "rhoai"
    source.mkdir(parents=True)
    (source / "kustomization.yaml").write_text("resources:\n- cm.yaml\n")
    (source / "cm.yaml").write_text(ONE)
    yield root
    server.close()


@dataclass
class Case:
    args: list[str]
    code: int
    says: str = ""
    env: dict = field(default_factory=dict)
    stdin: str | None = None  # a path


LONG = "a/" * 2500
SRC = "source"


def _cases() -> dict[str, Case]:
    c: dict[str, Case] = {}
    for what, path, says in (("/dev/zero", "/dev/zero", "character device"), ("a FIFO", "fifo", "FIFO"),
                             ("a socket", "sock", "socket"), ("a symlink loop", "loop1", "symlink"),
                             ("a 5000-character path", LONG, "too long"), ("a directory", ".", "directory")):
        c[f"--lock {what}"] = Case(["render", "--source", f"https://example.invalid/r.git", "--ref", "v1",
                                    "--offline", "--lock", path], 2, says)
        c[f"--config {what}"] = Case(["render", "--source", SRC, "--config", path], 2, says)
        c[f"-f {what}"] = Case(["install", "-f", path, "--kubeconfig", "kc-down"], 2, says)
        c[f"status -f {what}"] = Case(["status", "-f", path, "--kubeconfig", "kc-down"], 2, says)
        for command in ("diff", "upgrade-check", "check"):  # -f is judged before any kubeconfig is read
            c[f"{command} -f {what}"] = Case([command, "-f", path, "--kubeconfig", "kc-missing"], 2, says)
        c[f"--kubeconfig {what}"] = Case(["status", "--kubeconfig", path], 2, says if what != "a 5000-character path"
                                         else "")
    for name, says in (("kc-ca-zero", "certificate-authority"), ("kc-ca-fifo", "FIFO"),
                       ("kc-token-zero", "tokenFile"), ("kc-token-fifo", "FIFO"), ("kc-key-fifo", "FIFO")):
        c[f"kubeconfig {name}"] = Case(["status", "--kubeconfig", name], 2, says)
    c["-f - from /dev/zero"] = Case(["install", "-f", "-", "--kubeconfig", "kc-down"], 2, "limit",
                                    env={"TRAINERCTL_MAX_FILE": "1Mi"}, stdin="/dev/zero")
    c["-f over its limit"] = Case(["install", "-f", "big.yaml", "--kubeconfig", "kc-down"], 2,
                                  "larger than the 1 KiB limit", env={"TRAINERCTL_MAX_FILE": "1Ki"})
    c["a bad size limit"] = Case(["install", "-f", "big.yaml", "--kubeconfig", "kc-down"], 2, "TRAINERCTL_MAX_FILE",
                                 env={"TRAINERCTL_MAX_FILE": "lots"})
    c["-f nested 30000 deep"] = Case(["install", "-f", "deep.yaml", "--kubeconfig", "kc-down"], 2, "depth")
    c["-f nested 5000 deep"] = Case(["install", "-f", "deeper-than-us.yaml", "--kubeconfig", "kc-down"], 2,
                                    "nested deeper")
    c["--config nested deep"] = Case(["render", "--source", SRC, "--config", "deep.yaml"], 2, "deep.yaml")
    c["--kubeconfig nested deep"] = Case(["status", "--kubeconfig", "deep.yaml"], 2, "kubeconfig")
    c["--config a shadow file"] = Case(["render", "--source", SRC, "--config", "shadow"], 2, "shadow")
    c["--lock a shadow file"] = Case(["render", "--source", f"https://example.invalid/r.git", "--ref", "v1",
                                      "--offline", "--lock", "shadow"], 2, "shadow")
    c["-f a shadow file"] = Case(["install", "-f", "shadow", "--kubeconfig", "kc-down"], 2, "shadow")
    c["--kubeconfig a shadow file"] = Case(["status", "--kubeconfig", "shadow"], 2, "shadow")
    c["--source a symlink loop"] = Case(["render", "--source", "loop1"], 2, "loop")
    c["--source a long path"] = Case(["render", "--source", LONG], 2, "too long")
    c["kustomize a long path"] = Case(["kustomize", LONG], 2, "")
    c["kustomize a symlink loop"] = Case(["kustomize", "loop1"], 2, "loop1")
    c["--output-dir a long path"] = Case(["render", "--source", SRC, "--output-dir", LONG], 2, "--output-dir")
    c["--overlay a long path"] = Case(["render", "--source", SRC, "--overlay", LONG], 2, "--overlay")
    c["-f by process substitution is read"] = Case(["install", "-f", "/dev/fd/{fd}", "--kubeconfig", "kc-down"], 3,
                                                   "cannot reach")
    return c


CASES = _cases()


def _run(work: Path, case: Case) -> subprocess.CompletedProcess:
    env = {**os.environ, "HOME": str(work / "home"), "TRAINERCTL_CACHE_DIR": str(work / "cache"), "CI": "true",
           **case.env}
    env.pop("KUBECONFIG", None)
    pass_fds = ()
    args = case.args
    if any("{fd}" in a for a in args):  # what bash's <(cat one.yaml) hands over
        read, write = os.pipe()
        os.write(write, ONE.encode())
        os.close(write)
        pass_fds = (read,)
        args = [a.format(fd=read) for a in args]
    stdin = open(case.stdin, "rb") if case.stdin else subprocess.DEVNULL
    try:
        return subprocess.run([*_entry(), *args], capture_output=True, text=True, cwd=work, env=env, stdin=stdin,
                              timeout=60, pass_fds=pass_fds)
    finally:
        if case.stdin:
            stdin.close()
        for fd in pass_fds:
            os.close(fd)


@pytest.mark.parametrize("name", list(CASES))
def test_hostile_local_input(work, name):
    case = CASES[name]
    proc = _run(work, case)
    err = proc.stderr
    assert proc.returncode == case.code, err
    last = err.splitlines()[-1] if err else ""
    assert last.startswith("error: ") and case.says in last, err
    assert sum(line.startswith("error: ") for line in err.splitlines()) == 1 and "Traceback" not in err, err
    assert "internal error" not in err and proc.stdout == ""
    assert "$6$" not in err and "root:" not in err and "daemon:" not in err  # no line of the shadow file


@pytest.mark.parametrize("args", [["render", "--source", SRC], ["--version"], ["kustomize", f"{SRC}/manifests/rhoai"]])
def test_stdout_on_dev_full_is_one_line_exit_2(work, args):
    with open("/dev/full", "w") as full:
        proc = subprocess.run([*_entry(), *args], stdout=full, stderr=subprocess.PIPE, text=True, cwd=work,
                              timeout=60)
    assert proc.returncode == 2 and proc.stderr.splitlines()[-1] == \
        "error: stdout: cannot write the output: no space left on device", proc.stderr
    assert "Traceback" not in proc.stderr and "Exception ignored" not in proc.stderr


def _with_closed(fd: int, args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    """Run with standard descriptor `fd` closed (as `>&-` or `2>&-` does); the other one captured."""
    return subprocess.run([*_entry(), *args], cwd=cwd, timeout=60, preexec_fn=lambda: os.close(fd), text=True,
                          stdout=None if fd == 1 else subprocess.PIPE, stderr=None if fd == 2 else subprocess.PIPE)


def test_closed_stdout_is_an_error_not_a_silent_success(work):
    proc = _with_closed(1, ["render", "--source", SRC], work)
    assert proc.returncode == 2 and proc.stderr.splitlines()[-1] == \
        "error: stdout: cannot write the output: standard output is closed", proc.stderr


def test_with_stderr_closed_errors_never_go_to_stdout(work):
    proc = _with_closed(2, ["render", "--source", "/nonexistent"], work)
    assert proc.returncode == 2 and proc.stdout == ""
    proc = _with_closed(2, ["status", "--kubeconfig", "fifo"], work)
    assert proc.returncode == 2 and proc.stdout == ""


def test_stdin_from_a_terminal_is_refused_not_waited_on(work):
    leader, follower = pty.openpty()
    try:
        proc = subprocess.run([*_entry(), "install", "-f", "-", "--kubeconfig", "kc-down"], stdin=follower,
                              capture_output=True, text=True, cwd=work, timeout=60)
    finally:
        os.close(leader)
        os.close(follower)
    assert proc.returncode == 2 and "terminal" in proc.stderr, proc.stderr


def test_output_dir_never_writes_through_a_symlink(work, tmp_path):
    outside = tmp_path / "outside.txt"
    outside.write_text("precious\n")
    out = tmp_path / "out"
    proc = subprocess.run([*_entry(), "render", "--source", SRC, "--output-dir", str(out)], cwd=work,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    written = sorted(p.name for p in out.iterdir())
    for name in written:  # every file, the index included, becomes a symlink to the precious file
        (out / name).unlink()
        (out / name).symlink_to(outside)
    proc = subprocess.run([*_entry(), "render", "--source", SRC, "--output-dir", str(out)], cwd=work,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and "not written by trainerctl" in proc.stderr  # a symlinked index is not ours
    (out / "kustomization.yaml").unlink()
    shutil.copy(work / "one.yaml", out / "kustomization.yaml")
    (out / "kustomization.yaml").write_text(
        "# Written by `trainerctl render --output-dir`; files listed here are replaced on the next run.\n"
        "resources:\n" + "".join(f"- {n}\n" for n in written if n != "kustomization.yaml"))
    proc = subprocess.run([*_entry(), "render", "--source", SRC, "--output-dir", str(out)], cwd=work,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert outside.read_text() == "precious\n"
    assert all(not p.is_symlink() for p in out.iterdir())


def test_no_password_in_the_lock_or_the_cache_index(tmp_path):
    url = "https://user:lock-password-0123456789@git.example.com/o/trainer.git"
    lock = tmp_path / "trainerctl.lock"
    write_lock(lock, Lock(url, "v1", "0" * 40, "sha256:" + "0" * 64))
    assert "lock-password" not in lock.read_text() and "git.example.com/o/trainer.git" in lock.read_text()
    assert read_lock(lock).applies_to(url, "v1")  # the same source, with or without the credential
    cache = SourceCache(tmp_path / "cache")
    cache.remember_ref(url, "v1", "1" * 40)
    assert "lock-password" not in cache.index_path(url).read_text()
    assert cache.index_path(url) == cache.index_path("https://git.example.com/o/trainer.git")
