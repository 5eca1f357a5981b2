"""HTTP/1.1 to one server (an API server, a registry): a small pool of keep-alive connections, and
hard limits.

The server is not trusted to behave. So every request has:
- a connect time-out, and a deadline for the whole exchange enforced by one watchdog thread that
  shuts the socket down when it passes (a server dripping one byte every few seconds cannot keep
  a request alive, whatever the per-read time-outs say);
- a bound on the response body (a trust/limits.py limit: the transport's, "api-response" unless its
  maker names another, or one request's: "log");
- no redirects: a 3xx is an answer like any other, so credentials never follow it elsewhere;
- an abort: Ctrl-C or SIGTERM shuts down every socket in flight (trainerctl.trust.interrupts), so worker
  threads return at once.
Header values are checked before sending; a credential with a line break is refused by the
credentials module, never echoed by http.client's "Invalid header value" error.
"""

from __future__ import annotations

import http.client
import socket
import ssl
import threading
import time
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from typing import Callable
from urllib.parse import urlsplit

from trainerctl.trust.limits import limit_for, too_large
from trainerctl.net.deadlines import WATCHDOG as _WATCHDOG
from trainerctl.net.deadlines import kill as _kill
from trainerctl.errors import EXIT_PREFLIGHT, Interrupted, TrainerctlError
from trainerctl.trust.safe_text import clean

CONNECT_TIMEOUT = 30.0  # as client-go's dialer
_CHUNK = 1 << 20


def retry_after_seconds(value: str | None, now: float | None = None) -> float | None:
    """Retry-After as seconds to wait: delta-seconds or an HTTP date; None if absent or invalid."""
    if not value:
        return None
    value = value.strip()
    if value.isascii() and value.isdigit():  # int() would take '²' or '١' too
        return float(value)
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    if when is None or when.tzinfo is None:
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


class Unreachable(TrainerctlError):
    """The exchange with the server failed below HTTP: not reachable, or not speaking HTTP."""

    exit_code = EXIT_PREFLIGHT


class RequestTimeout(Unreachable):
    pass


class ResponseTooLarge(TrainerctlError):
    pass


@dataclass
class Response:
    status: int
    reason: str
    headers: dict[str, str]  # lower-case names
    body: bytes


@dataclass(frozen=True)
class Proxy:
    host: str
    port: int
    authorization: str | None = None  # a Proxy-Authorization header value


class _TLSConnection(http.client.HTTPConnection):
    """HTTPS with our own TLS context and server name (tls-server-name), also through a tunnel."""

    default_port = 443

    def __init__(self, host: str, port: int, *, timeout: float, context: ssl.SSLContext, server_hostname: str):
        super().__init__(host, port, timeout=timeout)
        self._context = context
        self._server_hostname = server_hostname

    def connect(self) -> None:
        super().connect()  # TCP, then CONNECT through the proxy when a tunnel is set
        _check_alive(conn=self)
        # The handshake runs on self.sock, where an abort or the deadline watchdog can reach it
        # (wrap_socket would hold the only reference to the socket while it shakes hands).
        self.sock = self._context.wrap_socket(self.sock, server_hostname=self._server_hostname,
                                              do_handshake_on_connect=False)
        self.sock.do_handshake()


def _reachable_connect(conn: http.client.HTTPConnection):
    """socket.create_connection, but each socket is on `conn.sock` while it connects, so an abort
    or the watchdog can end a connect to an address that never answers."""
    def create(address, timeout, source_address=None):
        host, port = address
        last: OSError | None = None
        for family, kind, proto, _, addr in socket.getaddrinfo(host, port, 0, socket.SOCK_STREAM):
            sock = socket.socket(family, kind, proto)
            conn.sock = sock
            try:
                sock.settimeout(timeout)
                sock.connect(addr)
                _check_alive(conn)
                return sock
            except OSError as exc:
                last = exc
                sock.close()
                if getattr(conn, "_trainerctl_killed", False):
                    break
        raise last or OSError("no address to connect to")

    return create


def _check_alive(conn: http.client.HTTPConnection) -> None:
    """A connection killed before its socket could be shut down (mid-connect) stops here."""
    if getattr(conn, "_trainerctl_killed", False):
        raise ConnectionAbortedError("aborted")


class Transport:
    """Requests to one server (`server` may carry a path prefix, as behind Rancher)."""

    def __init__(self, server: str, *, tls: Callable[[], ssl.SSLContext] | None = None,
                 server_hostname: str | None = None, proxy: Proxy | None = None, pool_size: int = 16,
                 describe: str = "", peer: str = "the API server", limit: str = "api-response"):
        parts = urlsplit(server)
        self.scheme = parts.scheme
        self.host = parts.hostname or ""
        self.port = parts.port or (443 if parts.scheme == "https" else 80)
        self.prefix = parts.path.rstrip("/")
        self._tls = tls
        self._server_hostname = server_hostname or self.host
        self._proxy = proxy
        self._pool_size = pool_size
        self._idle: list[http.client.HTTPConnection] = []
        self._active: set[http.client.HTTPConnection] = set()
        self._lock = threading.Lock()
        self._aborted = False
        self.describe = describe or server
        self.peer = peer  # what the messages call the server: "cannot reach {peer} {describe}"
        self.limit = limit

    # -- connections -----------------------------------------------------------------------
    def _new(self, timeout: float) -> http.client.HTTPConnection:
        host, port = (self._proxy.host, self._proxy.port) if self._proxy else (self.host, self.port)
        if self.scheme == "https":
            conn: http.client.HTTPConnection = _TLSConnection(host, port, timeout=timeout, context=self._tls(),
                                                              server_hostname=self._server_hostname)
        else:
            conn = http.client.HTTPConnection(host, port, timeout=timeout)
        if self._proxy:
            headers = {"Proxy-Authorization": self._proxy.authorization} if self._proxy.authorization else None
            conn.set_tunnel(self.host, self.port, headers=headers)
        conn._create_connection = _reachable_connect(conn)
        return conn

    def _take(self, timeout: float, fresh: bool = False) -> tuple[http.client.HTTPConnection, bool]:
        with self._lock:
            if self._aborted:
                raise Interrupted()
            conn = self._idle.pop() if self._idle and not fresh else None
            if conn is not None:
                self._active.add(conn)
                return conn, True
        conn = self._new(timeout)
        with self._lock:
            self._active.add(conn)
            if self._aborted:  # aborted while this one was being made
                conn._trainerctl_killed = True
        return conn, False

    def _give_back(self, conn: http.client.HTTPConnection, reusable: bool) -> None:
        with self._lock:
            self._active.discard(conn)
            if reusable and not self._aborted and len(self._idle) < self._pool_size \
                    and not getattr(conn, "_trainerctl_killed", False):
                self._idle.append(conn)
                return
        conn.close()

    def abort(self) -> None:
        """End every exchange in flight and refuse new ones (Ctrl-C, SIGTERM)."""
        with self._lock:
            self._aborted = True
            active, idle = list(self._active), list(self._idle)
            self._idle.clear()
        for conn in active:
            _kill(conn)
        for conn in idle:
            conn.close()

    def resume(self) -> None:
        """Take new exchanges again after abort(): the clean-up an interrupted command still owes
        (releasing a lock) goes out on fresh connections."""
        with self._lock:
            self._aborted = False

    def close(self) -> None:
        with self._lock:
            idle, self._idle = self._idle, []
        for conn in idle:
            conn.close()

    # -- one exchange ----------------------------------------------------------------------
    def request(self, method: str, target: str, *, headers: list[tuple[str, str]], body: bytes | None,
                deadline: float, limit: str | None = None) -> Response:
        """Send one request (target: path and query) and read the whole answer by `deadline`
        (time.monotonic()), at most `limit`'s bytes of it (trust/limits.py) (the transport's own limit
        unless the request names one). A stale keep-alive
        connection is replaced once, transparently."""
        for attempt in (0, 1):
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise RequestTimeout(f"{method} {self._shown(target)}: no answer from {self.describe} in time")
            conn, reused = self._take(min(CONNECT_TIMEOUT, remaining), fresh=attempt > 0)
            ticket = _WATCHDOG.watch(conn, deadline)
            sent = False
            try:
                if conn.sock is None:
                    conn.connect()
                conn.sock.settimeout(max(0.001, deadline - time.monotonic()))
                conn.putrequest(method, self.prefix + target, skip_accept_encoding=True)
                for name, value in headers:
                    conn.putheader(name, value)
                if body is not None or method in ("POST", "PUT", "PATCH"):
                    conn.putheader("Content-Length", str(len(body or b"")))
                conn.endheaders(body)
                sent = True
                resp = conn.getresponse()
                data = self._read_body(resp, method, target, limit or self.limit)
                _WATCHDOG.release(ticket)
                if getattr(conn, "_trainerctl_killed", False):
                    raise TimeoutError("deadline")
                result = Response(resp.status, resp.reason, {k.lower(): v for k, v in resp.getheaders()}, data)
                self._give_back(conn, not resp.will_close)
                return result
            except Exception as exc:
                _WATCHDOG.release(ticket)
                self._give_back(conn, False)
                if self._aborted:
                    raise Interrupted() from None
                if time.monotonic() >= deadline:
                    raise RequestTimeout(f"{method} {self._shown(target)}: {self.describe} did not answer "
                                         "completely in time") from None
                # A kept-alive connection the server closed meanwhile: the request never reached it.
                stale = reused and (isinstance(exc, http.client.RemoteDisconnected) or (not sent and isinstance(
                    exc, (ConnectionError, ssl.SSLEOFError, ssl.SSLZeroReturnError))))
                if stale and attempt == 0:
                    continue
                raise self._error(exc, method, target) from None
        raise AssertionError("unreachable")

    def _read_body(self, resp: http.client.HTTPResponse, method: str, target: str, name: str) -> bytes:
        if method == "HEAD":  # no body, whatever Content-Length says (it is the GET's size)
            resp.read()  # reads nothing; marks the response done, so the connection is reused
            return b""
        limit = limit_for(name)
        length = resp.getheader("Content-Length")
        if length is not None and length.strip().isascii() and length.strip().isdigit() and int(length) > limit:
            raise self._too_large(method, target, name, limit)
        data = bytearray()
        while True:
            chunk = resp.read(min(_CHUNK, limit + 1 - len(data)))
            if not chunk:
                if resp.length:  # Content-Length promised more than came
                    raise http.client.IncompleteRead(bytes(data), resp.length)
                return bytes(data)
            data += chunk
            if len(data) > limit:
                raise self._too_large(method, target, name, limit)

    def _too_large(self, method: str, target: str, name: str, limit: int) -> ResponseTooLarge:
        return ResponseTooLarge(f"{method} {self._shown(target)}: the answer of {self.describe} is "
                                f"{too_large(name, limit)}")

    @staticmethod
    def _shown(target: str) -> str:
        return clean(target.split("?", 1)[0], 200)

    def _error(self, exc: BaseException, method: str, target: str) -> TrainerctlError:
        if isinstance(exc, TrainerctlError):
            return exc
        what = f"cannot reach {self.peer} {self.describe}"
        if isinstance(exc, ssl.SSLCertVerificationError):
            return Unreachable(f"{what}: its certificate is not trusted "
                                  f"({clean(exc.verify_message or exc.reason or 'verify failed', 200)})")
        if isinstance(exc, ssl.SSLError):
            return Unreachable(f"{what}: TLS failed ({clean(exc.reason or str(exc), 200)})")
        if isinstance(exc, socket.gaierror):
            return Unreachable(f"{what}: cannot resolve {clean(self.host, 200)}")
        if isinstance(exc, (socket.timeout, TimeoutError)):
            return Unreachable(f"{what}: timed out")
        if isinstance(exc, ConnectionRefusedError):
            return Unreachable(f"{what}: connection refused")
        if isinstance(exc, http.client.IncompleteRead):
            return Unreachable(f"{method} {self._shown(target)}: {self.describe} closed the connection in the "
                                  "middle of its answer (truncated)")
        if isinstance(exc, http.client.RemoteDisconnected):
            return Unreachable(f"{what}: it closed the connection without answering")
        if isinstance(exc, http.client.HTTPException):
            return Unreachable(f"{method} {self._shown(target)}: {self.describe} did not answer in HTTP "
                                  f"({type(exc).__name__})")
        if isinstance(exc, OSError):
            if "tunnel" in str(exc).lower():
                return Unreachable(f"{what}: the proxy refused the tunnel ({clean(str(exc), 200)})")
            return Unreachable(f"{what}: {clean((exc.strerror or str(exc) or type(exc).__name__).lower(), 200)}")
        if isinstance(exc, (ValueError, TypeError)):  # a header or name refused before sending; never quote it
            return Unreachable(f"{method} {self._shown(target)}: the request to {self.describe} cannot be sent "
                               f"({type(exc).__name__})")
        return Unreachable(f"{what}: {type(exc).__name__}")
