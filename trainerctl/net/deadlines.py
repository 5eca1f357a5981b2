"""Deadlines for whole HTTP exchanges: one watchdog thread shuts a connection's socket down once
its deadline passes, so a server dripping one byte every few seconds cannot keep an exchange
alive, whatever the per-read time-outs say. Used by the transport (API servers, registries) and
by kustomize's remote files (urllib's connections)."""

from __future__ import annotations

import heapq
import itertools
import socket
import threading
import time
from typing import Any, Callable


def kill(conn: Any) -> None:
    """End `conn`'s exchange: anything with a `sock` (an http.client connection, or a holder of
    the socket as connected); it is marked so it is never handed out again."""
    conn._trainerctl_killed = True
    sock = getattr(conn, "sock", None)
    if sock is None:
        return
    try:
        # The plain socket's shutdown, also for an SSLSocket: ends a blocked read or handshake in
        # another thread without touching the TLS state that thread is using.
        socket.socket.shutdown(sock, socket.SHUT_RDWR)
    except OSError:
        pass


class Watchdog:
    """One thread that ends every exchange which outlives its deadline."""

    def __init__(self):
        self._cond = threading.Condition()
        self._heap: list[tuple[float, int, Any]] = []
        self._done: set[int] = set()
        self._ids = itertools.count()
        self._thread: threading.Thread | None = None

    def watch(self, conn: Any, deadline: float) -> int:
        with self._cond:
            ticket = next(self._ids)
            heapq.heappush(self._heap, (deadline, ticket, conn))
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name="trainerctl-deadlines", daemon=True)
                self._thread.start()
            self._cond.notify()
            return ticket

    def release(self, ticket: int) -> None:
        with self._cond:
            self._done.add(ticket)

    def _run(self) -> None:
        with self._cond:
            while True:
                while self._heap and self._heap[0][1] in self._done:
                    self._done.discard(heapq.heappop(self._heap)[1])
                if not self._heap:
                    self._cond.wait(30)
                    if not self._heap:
                        self._thread = None
                        return
                    continue
                deadline, ticket, conn = self._heap[0]
                now = time.monotonic()
                if deadline > now:
                    self._cond.wait(min(deadline - now, 1.0))
                    continue
                heapq.heappop(self._heap)
                self._done.discard(ticket)
                kill(conn)


WATCHDOG = Watchdog()


def watch(conn: Any, deadline: float) -> Callable[[], None]:
    """Shut `conn`'s socket down once `deadline` (time.monotonic()) passes; returns what stops
    watching it."""
    ticket = WATCHDOG.watch(conn, deadline)
    return lambda: WATCHDOG.release(ticket)
