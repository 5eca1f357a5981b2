"""TLS for the test suite's loopback HTTP servers.

Wrapping a server's listening socket makes `accept()` do the TLS handshake, and `accept()` runs
on the one thread that serves every connection: a client that connects and says nothing (a
request the client abandoned, a probe) stalls the handshake there, and every later client waits
until its own deadline ("cannot reach the registry ...: timed out"). `listen_tls` wraps without
the handshake at accept; OpenSSL makes it on the first read, in the connection's own thread.
"""

from __future__ import annotations

import socketserver
import ssl


def listen_tls(server: socketserver.TCPServer, context: ssl.SSLContext) -> None:
    server.socket = context.wrap_socket(server.socket, server_side=True, do_handshake_on_connect=False)
