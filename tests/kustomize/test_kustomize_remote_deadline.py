"""A remote file is fetched whole within one total deadline (limits.LIMITS "remote-time",
TRAINERCTL_REMOTE_TIMEOUT), however the server drips: headers a byte at a time, a body a byte at a
time with or without a Content-Length, or a redirect to such a server. The per-read time-out alone
never trips on a byte every few seconds; the deadline does, with one line naming the URL."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tests.support.kustomize_cases import write_tree
from trainerctl.kustomize import KustomizeError, build_yaml

CM = b"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: slow}\n"
DRIP = 0.25  # seconds between bytes: far below the per-read time-out
DEADLINE = "1.5"


class DrippingServer:
    """A loopback server that answers `/headers`, `/length`, `/close` and `/redirect` slowly."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.stopped = threading.Event()
        self.dripped_whole = threading.Event()  # some answer was sent to its last byte
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        self.sock.settimeout(0.2)
        while not self.stopped.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            threading.Thread(target=self._answer, args=(conn,), daemon=True).start()

    def _drip(self, conn: socket.socket, data: bytes) -> None:
        for i in range(len(data)):
            if self.stopped.is_set():
                return
            conn.sendall(data[i:i + 1])
            time.sleep(DRIP)
        self.dripped_whole.set()

    def _answer(self, conn: socket.socket) -> None:
        try:
            request = b""
            while b"\r\n\r\n" not in request:
                chunk = conn.recv(4096)
                if not chunk:
                    return
                request += chunk
            path = request.split()[1].decode()
            body = CM * 20
            if path == "/redirect":
                conn.sendall(f"HTTP/1.1 302 Found\r\nLocation: http://127.0.0.1:{self.port}/length\r\n"
                             "Content-Length: 0\r\n\r\n".encode())
            elif path == "/headers":
                self._drip(conn, b"HTTP/1.1 200 OK\r\nX-Slow: " + b"x" * 200 + b"\r\n\r\n")
            elif path == "/length":
                conn.sendall(f"HTTP/1.1 200 OK\r\nContent-Length: {len(body)}\r\n\r\n".encode())
                self._drip(conn, body)
            else:  # the body ends when the connection does
                conn.sendall(b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n")
                self._drip(conn, body)
        except OSError:
            pass
        finally:
            conn.close()

    def stop(self) -> None:
        self.stopped.set()
        self.sock.close()


@pytest.fixture
def dripping():
    server = DrippingServer()
    yield server
    server.stop()


@pytest.mark.parametrize("path", ["/headers", "/length", "/close", "/redirect"])
def test_a_dripping_remote_file_ends_at_its_total_deadline(tmp_path, monkeypatch, dripping, path):
    monkeypatch.setenv("TRAINERCTL_REMOTE_TIMEOUT", DEADLINE)
    monkeypatch.setenv("TRAINERCTL_CACHE_DIR", str(tmp_path / "cache"))
    url = f"http://127.0.0.1:{dripping.port}{path}"
    write_tree(tmp_path / "k", {"kustomization.yaml": f"resources:\n- {url}\n"})
    with pytest.raises(KustomizeError) as failed:
        build_yaml(str(tmp_path / "k"))
    assert f"not fetched whole within {DEADLINE}s (raise it with TRAINERCTL_REMOTE_TIMEOUT=SECONDS)" \
        in str(failed.value), str(failed.value)
    assert "\n" not in str(failed.value)
    # Ended by the total deadline, not by the answer ending: the server was still dripping it.
    assert not dripping.dripped_whole.is_set()


def test_the_command_says_it_in_one_line_with_its_exit_code(tmp_path, dripping):
    url = f"http://127.0.0.1:{dripping.port}/close"
    write_tree(tmp_path / "k", {"kustomization.yaml": f"resources:\n- {url}\n"})
    env = {**os.environ, "TRAINERCTL_REMOTE_TIMEOUT": DEADLINE, "TRAINERCTL_CACHE_DIR": str(tmp_path / "cache")}
    proc = subprocess.run([sys.executable, "-m", "trainerctl", "kustomize", str(tmp_path / "k")], env=env,
                          capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert proc.returncode == 2 and proc.stdout == "", proc.stderr  # docs/exit-codes.md: bad input
    assert proc.stderr.count("\n") == 1 and "not fetched whole within 1.5s" in proc.stderr, proc.stderr


def test_a_file_that_arrives_in_time_is_read(tmp_path, monkeypatch):
    """The deadline is per fetch: a prompt server is not cut short."""
    import http.server

    class Quick(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200)
            self.send_header("Content-Length", str(len(CM)))
            self.end_headers()
            self.wfile.write(CM)

        def log_message(self, *args):
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Quick)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        monkeypatch.setenv("TRAINERCTL_REMOTE_TIMEOUT", DEADLINE)
        monkeypatch.setenv("TRAINERCTL_CACHE_DIR", str(tmp_path / "cache"))
        write_tree(tmp_path / "k", {"kustomization.yaml":
                                    f"resources:\n- http://127.0.0.1:{httpd.server_address[1]}/x.yaml\n"})
        assert "name: slow" in build_yaml(str(Path(tmp_path / "k")))
    finally:
        httpd.shutdown()
        httpd.server_close()
