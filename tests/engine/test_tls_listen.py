"""The suite's TLS servers answer a client while another one sits connected and silent (a
handshake at accept() would hold every later client: CI's registry test timed out so)."""

from __future__ import annotations

import http.server
import socket
import ssl
import threading

from tests.support import registry
from tests.support.tls_listen import listen_tls


class _Hello(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_GET(self):
        self.send_response(200)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"ok")


def test_a_silent_client_does_not_hold_the_next_one(tmp_path):
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Hello)
    server.daemon_threads = True
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    cert, key = _self_signed(tmp_path)
    context.load_cert_chain(cert, key)
    listen_tls(server, context)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    port = server.server_address[1]
    silent = socket.create_connection(("127.0.0.1", port))  # connects, never says hello
    try:
        client = ssl.create_default_context(cafile=str(cert))
        client.check_hostname = False
        with socket.create_connection(("127.0.0.1", port), timeout=20) as raw, \
                client.wrap_socket(raw) as tls:
            tls.sendall(b"GET / HTTP/1.0\r\n\r\n")
            assert tls.recv(1024).startswith(b"HTTP/1.0 200")
    finally:
        silent.close()
        server.shutdown()


def _self_signed(tmp_path):
    from tests.support.hostile_api import self_signed

    cert, key = self_signed()
    (tmp_path / "c.pem").write_bytes(cert)
    (tmp_path / "k.pem").write_bytes(key)
    return tmp_path / "c.pem", tmp_path / "k.pem"


def test_every_tls_server_of_the_suite_listens_through_listen_tls():
    from pathlib import Path

    support = Path(registry.__file__).parent
    found = [f"{p.name}:{n}" for p in sorted(support.glob("*.py")) if p.name != "tls_listen.py"
             for n, line in enumerate(p.read_text().splitlines(), 1) if "server_side=True" in line]
    assert not found, "wrap a server's listening socket with tests.support.tls_listen.listen_tls: " + ", ".join(found)
