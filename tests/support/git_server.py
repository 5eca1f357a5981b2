"""A git repository served over smart HTTP on loopback, for Flux's source-controller to pull.

`git http-backend` (git's own CGI program) answers every request; a tiny HTTP server passes it the
request and sends back its reply. The repository is a bare one the test pushes to from a work
tree with GitPython, as a CI job commits a rendered folder and pushes it.
"""

from __future__ import annotations

import http.server
import os
import shutil
import subprocess
import threading
from dataclasses import dataclass, field
from pathlib import Path


def _read_chunked(rfile) -> bytes:
    body = b""
    while True:
        size = int(rfile.readline().split(b";")[0].strip() or b"0", 16)
        if size == 0:
            while rfile.readline() not in (b"\r\n", b"\n", b""):
                pass  # trailers
            return body
        body += rfile.read(size)
        rfile.readline()


class _Handler(http.server.BaseHTTPRequestHandler):
    server: "_Server"

    def log_message(self, *args) -> None:  # the requests are kept in server.requests instead
        pass

    def do_GET(self) -> None:
        self._cgi()

    def do_POST(self) -> None:
        self._cgi()

    def _cgi(self) -> None:
        path, _, query = self.path.partition("?")
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            body = _read_chunked(self.rfile)
        else:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "GIT_PROJECT_ROOT": str(self.server.root),
            "GIT_HTTP_EXPORT_ALL": "1",
            "REQUEST_METHOD": self.command,
            "PATH_INFO": path,
            "QUERY_STRING": query,
            "CONTENT_TYPE": self.headers.get("Content-Type", ""),
            "CONTENT_LENGTH": str(len(body)),
            "REMOTE_ADDR": self.client_address[0],
        }
        for header in ("Content-Encoding", "Git-Protocol"):
            if self.headers.get(header):
                env["HTTP_" + header.upper().replace("-", "_")] = self.headers[header]
        proc = subprocess.run([self.server.git, "http-backend"], input=body, env=env, capture_output=True)
        head, sep, payload = proc.stdout.partition(b"\r\n\r\n")
        if not sep:
            head, _, payload = proc.stdout.partition(b"\n\n")
        status, headers = 200, []
        for line in head.decode("latin-1").splitlines():
            name, _, value = line.partition(":")
            if name.lower() == "status":
                status = int(value.split()[0])
            elif name:
                headers.append((name, value.strip()))
        if proc.returncode != 0 and not proc.stdout:
            status, payload = 500, proc.stderr
        self.server.requests.append((self.command, self.path, status))
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)


class _Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    root: Path
    git: str
    requests: list


@dataclass
class GitServer:
    """Bare repositories under `root`, served at `url`/NAME.git."""

    root: Path
    _server: _Server | None = None
    requests: list = field(default_factory=list)

    def start(self) -> "GitServer":
        git = shutil.which("git")
        if git is None:
            raise RuntimeError("the test git server needs git on PATH")
        self.root.mkdir(parents=True, exist_ok=True)
        server = _Server(("127.0.0.1", 0), _Handler)
        server.root, server.git, server.requests = self.root, git, self.requests
        threading.Thread(target=server.serve_forever, daemon=True).start()
        self._server = server
        return self

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def repo_url(self, name: str) -> str:
        return f"{self.url}/{name}.git"

    def create(self, name: str):
        """A new bare repository NAME.git (pushes to it over the file system need no server)."""
        import git

        return git.Repo.init(self.root / f"{name}.git", bare=True, initial_branch="main")

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
