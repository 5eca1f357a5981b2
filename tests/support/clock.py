"""A fake clock for a deadline: a test asserts what the deadline did, not how long it took."""

from __future__ import annotations

import threading
import time


class FakeClock:
    """Stands in for the `time` module inside one module under test (monkeypatch its `time`):
    `monotonic()` reads a clock that only `sleep()` moves, at once. Everything else in the
    process keeps real time."""

    def __init__(self, start: float = 1000.0):
        self.now = start
        self._lock = threading.Lock()

    def monotonic(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        with self._lock:
            self.now += max(0.0, seconds)
        time.sleep(0)  # let other threads run, as a real sleep would
