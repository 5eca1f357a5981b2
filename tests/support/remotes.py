"""Serve ../shared/remote the way the upstream overlays expect, without the internet.

JobSet release files go behind a loopback HTTP server; LeaderWorkerSet's config/ becomes a local git
repository with one tagged commit per version. `rewrite_tree` copies an upstream tree and points its
remote URLs at those stand-ins, so kubectl and trainerctl read the very same input.
"""

from __future__ import annotations

import functools
import http.server
import re
import shutil
import threading
from dataclasses import dataclass
from pathlib import Path

JOBSET_PREFIX = "https://github.com/kubernetes-sigs/jobset/releases/download"
LWS_PREFIX = "https://github.com/kubernetes-sigs/lws"


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    # Keep-alive, as github.com serves: with HTTP/1.0 every fetch took a new connection, and
    # under load kubectl's pool met one the server had already given up ("http: server closed
    # idle connection"), then tried the URL as a git repository and failed the build.
    protocol_version = "HTTP/1.1"

    def log_message(self, *args) -> None:  # keep test output clean
        pass


class _Server(http.server.ThreadingHTTPServer):
    # socketserver's default listen backlog is 5. kubectl opens several connections at once, and
    # on a loaded machine the accept thread falls behind: a connection past the backlog got an
    # empty reply (EOF), kubectl then tried the URL as a git repository and failed the build.
    request_queue_size = 128
    daemon_threads = True


@dataclass
class Remotes:
    http_base: str  # e.g. http://127.0.0.1:PORT
    lws_repo: Path
    _server: _Server

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

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()


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
    handler = functools.partial(_QuietHandler, directory=str(remote_dir))
    server = _Server(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    _warm(base, remote_dir)
    lws = make_lws_repo(remote_dir, workdir / "lws-repo")
    return Remotes(base, lws, server)


def _warm(base: str, remote_dir: Path, timeout: float = 10.0) -> None:
    """Fetch every served release file once before any test does. In three full runs, the first
    kubectl GET of the JobSet v0.12.0 file in a module (always the first ref's case) got an empty
    reply (EOF) from this server; the cause is not known (it never reproduced in isolation), so
    start() returns only once each file has been served whole."""
    import time
    import urllib.request

    for path in sorted(p for p in (remote_dir / "jobset").rglob("*") if p.is_file()):
        url = f"{base}/{path.relative_to(remote_dir).as_posix()}"
        deadline = time.monotonic() + timeout
        while True:
            try:
                with urllib.request.urlopen(url, timeout=5) as reply:
                    if len(reply.read()) == path.stat().st_size:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise AssertionError(f"the test remotes server did not serve {url} whole within {timeout:g}s")
            time.sleep(0.05)


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
