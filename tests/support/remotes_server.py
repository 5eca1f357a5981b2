"""The loopback HTTP server behind tests/support/remotes.py, run as its own process.

    python remotes_server.py DIRECTORY

Serves DIRECTORY on 127.0.0.1 at a free port, prints the port on one line, and exits when its
standard input closes (so it never outlives the test process that started it). Standard library
only: it runs without the test suite on its path.
"""

from __future__ import annotations

import functools
import http.server
import sys
import threading


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    # Keep-alive, as github.com serves it.
    protocol_version = "HTTP/1.1"

    def log_message(self, *args) -> None:
        pass


class Server(http.server.ThreadingHTTPServer):
    # socketserver's default listen backlog is 5; kubectl opens several connections at once.
    request_queue_size = 128
    daemon_threads = True


def main(directory: str) -> None:
    server = Server(("127.0.0.1", 0), functools.partial(QuietHandler, directory=directory))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    print(server.server_address[1], flush=True)
    sys.stdin.read()  # until the parent closes the pipe, or dies


if __name__ == "__main__":
    main(sys.argv[1])
