"""Serve ../shared/remote the way the upstream overlays expect, without the internet.

JobSet release files go behind a loopback HTTP server; LeaderWorkerSet's config/ becomes a local git
repository with one tagged commit per version. `rewrite_tree` copies an upstream tree and points its
remote URLs at those stand-ins, so kubectl and trainerctl read the very same input.
"""

from __future__ import annotations

import re
import shutil
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

JOBSET_PREFIX = "https://github.com/kubernetes-sigs/jobset/releases/download"
LWS_PREFIX = "https://github.com/kubernetes-sigs/lws"


def _serve(directory: Path) -> tuple[subprocess.Popen, int]:
    """The HTTP stand-in runs in its own process (remotes_server.py). Served from a thread of the
    pytest process, it shared that process with a thousand in-process tests, and the first fetch
    after a long idle stretch was cut off in CI, in three runs three ways (an empty reply, "server
    closed idle connection", "connection reset by peer"), while a fresh server, or the same one
    idle for minutes beside no tests, never failed. Whatever in the test process did it, a server
    of its own is out of its reach. It prints its port once it listens, so it is ready when this
    returns: no warm-up fetch, and no retry."""
    proc = subprocess.Popen([sys.executable, str(Path(__file__).with_name("remotes_server.py")), str(directory)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    line = proc.stdout.readline()
    if not line.strip().isdigit():
        proc.kill()
        raise AssertionError(f"the test remotes server did not start (said {line!r}, exit {proc.wait()})")
    return proc, int(line)


@dataclass
class Remotes:
    http_base: str  # e.g. http://127.0.0.1:PORT
    lws_repo: Path
    _process: subprocess.Popen

    @property
    def mirrors(self) -> list[str]:
        """--remote-mirror values that map the upstream URLs to the stand-ins."""
        return [
            f"{JOBSET_PREFIX}={self.http_base}/jobset/releases/download",
            f"{LWS_PREFIX}=file://{self.lws_repo}",
        ]

    def rewrite(self, text: str) -> str:
        text = text.replace(JOBSET_PREFIX, f"{self.http_base}/jobset/releases/download")
        return text.replace(LWS_PREFIX + "//", f"file://{self.lws_repo}//")

    def ended(self) -> str | None:
        """How this stand-in ended, if it did; None while it runs."""
        rc = self._process.poll()
        if rc is None:
            return None
        if rc == 0:  # remotes_server.py leaves when its input closes
            how = "exited because its standard input closed: something in the test process closed the pipe"
        elif rc < 0:
            how = f"was killed by {signal.Signals(-rc).name}"
        else:
            how = f"exited with code {rc}"
        return f"the remotes stand-in (pid {self._process.pid}, {self.http_base}) {how}"

    def stop(self) -> None:
        _RUNNING.pop(id(self), None)
        self._process.stdin.close()  # the server exits when its input closes
        try:
            self._process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
        self._process.stdout.close()


def make_lws_repo(remote_dir: Path, dest: Path) -> Path:
    """One commit per LWS version, tagged with it, holding that version's config/ tree."""
    import git

    repo = git.Repo.init(dest)
    with repo.config_writer() as cw:
        cw.set_value("user", "name", "trainerctl-tests")
        cw.set_value("user", "email", "tests@trainerctl.invalid")
    versions = sorted(p.name for p in (remote_dir / "lws").iterdir() if p.is_dir())
    for version in versions:
        config = dest / "config"
        if config.exists():
            shutil.rmtree(config)
        shutil.copytree(remote_dir / "lws" / version / "config", config)
        repo.git.add("-A")
        repo.index.commit(f"lws {version}")
        repo.create_tag(version)
    return dest


def start(shared: Path, workdir: Path) -> Remotes:
    remote_dir = shared / "remote"
    process, port = _serve(remote_dir)
    try:
        lws = make_lws_repo(remote_dir, workdir / "lws-repo")
    except BaseException:
        process.kill()
        process.wait()
        raise
    served = Remotes(f"http://127.0.0.1:{port}", lws, process)
    _RUNNING[id(served)] = served
    return served


# Stand-ins started and not yet stopped, so tests/support/render.py can check after each test
# that none of them ended by itself.
_RUNNING: dict[int, Remotes] = {}


def running() -> list[Remotes]:
    """The stand-ins started, not stopped, and still running."""
    return [r for r in _RUNNING.values() if r.ended() is None]


def stopped(served: Remotes) -> bool:
    """Ended by stop(), as it should (not by itself)."""
    return id(served) not in _RUNNING


_KUSTOMIZATION = re.compile(r"^(kustomization\.ya?ml|Kustomization)$")


def rewrite_tree(src: Path, dest: Path, remotes: Remotes) -> Path:
    """Copy `src` to `dest`, pointing every kustomization's remote URLs at the stand-ins."""
    shutil.copytree(src, dest, symlinks=True)
    for path in dest.rglob("*"):
        if _KUSTOMIZATION.match(path.name) and path.is_file():
            text = path.read_text()
            new = remotes.rewrite(text)
            if new != text:
                path.write_text(new)
    return dest


def kustomization_dirs(root: Path) -> list[Path]:
    return sorted(p.parent for p in root.rglob("*") if _KUSTOMIZATION.match(p.name))
