"""Waiting for a state: poll a condition until it holds, with a deadline.

Tests never sleep for a fixed time hoping that a state has been reached; they wait on the
condition that says it has, and fail naming what they waited for when the deadline passes.
"""

from __future__ import annotations

import threading
import time
from typing import Callable, TypeVar

T = TypeVar("T")


def wait_until(condition: Callable[[], T], timeout: float, what: str, interval: float = 0.5) -> T:
    """Call `condition()` until it returns something truthy, and return that.

    The pauses between calls start at 50 ms and grow to `interval`, so a state reached at once is
    seen at once and a long wait does not poll the API server ten times a second. Fails with
    "timed out after Ns waiting for WHAT (last: ...)" once `timeout` seconds have passed. An
    exception from `condition` propagates: a condition that tolerates an error (a CRD's storage
    still starting, say) catches it itself and returns a falsy value.
    """
    deadline = time.monotonic() + timeout
    pause = min(0.05, interval)
    while True:
        last = condition()
        if last:
            return last
        now = time.monotonic()
        if now >= deadline:
            raise AssertionError(f"timed out after {timeout:g}s waiting for {what} (last: {last!r})")
        time.sleep(min(pause, deadline - now))
        pause = min(pause * 1.5, interval)


class Not:
    """A falsy answer that says why; `wait_until` shows it when the deadline passes."""

    def __init__(self, why: object):
        self.why = why

    def __bool__(self) -> bool:
        return False

    def __repr__(self) -> str:
        return str(self.why)


def finishes_within(timeout: float, what: str, work: Callable[[], T]) -> T:
    """Run `work()` and return what it returns (or raise what it raises); fail if it is still
    running after `timeout` seconds. For a claim that something gives up by itself, such as a
    command enforcing its own time-out: the deadline only catches a wait that never ends, so it
    is set well above what the claim allows and the test asserts the outcome, not the duration."""
    result: list = []

    def run() -> None:
        try:
            result.append((True, work()))
        except BaseException as exc:  # noqa: BLE001 - handed to the caller below
            result.append((False, exc))

    worker = threading.Thread(target=run, name=f"finishes-within: {what}", daemon=True)
    worker.start()
    worker.join(timeout)
    if worker.is_alive():
        raise AssertionError(f"{what} was still running after {timeout:g}s")
    ok, value = result[0]
    if not ok:
        raise value
    return value
