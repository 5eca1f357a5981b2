"""Ctrl-C, SIGTERM and SIGHUP end trainerctl within seconds, whatever it is waiting for.

The first signal aborts every request in flight (so worker threads stop at once instead of
waiting for a silent server) and unwinds the main thread like Ctrl-C, so cleanups run and the
command says what it did. If the process has not ended `GRACE_SECONDS` later, or on a second
signal, it leaves at once with exit 130. (A test calling the CLI in-process never gets the hard
exit: only the real process arms it, see trainerctl.entry.) Either way the command says
`error: interrupted` once: whichever path ends it first says it (`say_interrupted`).
"""

from __future__ import annotations

import os
import signal
import threading
from typing import Callable

from trainerctl.errors import EXIT_INTERRUPTED

GRACE_SECONDS = 5.0
SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)

_abort_callbacks: list[Callable[[], None]] = []
_interrupted = threading.Event()
_hard_exit = False
_said = threading.Event()


def on_interrupt(callback: Callable[[], None]) -> None:
    """Call `callback` (from the signal handler) when the command is interrupted."""
    _abort_callbacks.append(callback)


def interrupted() -> bool:
    return _interrupted.is_set()


def arm_hard_exit() -> None:
    global _hard_exit
    _hard_exit = True


def _leave_now() -> None:
    try:
        if os.environ.get("TRAINERCTL_DEBUG"):  # what did not let go, for whoever debugs it
            import faulthandler

            faulthandler.dump_traceback(all_threads=True)
        if not _said.is_set():
            _said.set()
            os.write(2, b"error: interrupted\n")
    except (OSError, ValueError, RuntimeError):
        pass
    os._exit(EXIT_INTERRUPTED)


def say_interrupted(write: Callable[[str], None]) -> None:
    """Say the interrupted line through `write` unless the hard exit said it already.

    The signals are held back meanwhile: a second Ctrl-C landing between the line and the mark
    would otherwise say it twice, or leave having said nothing.
    """
    held = _hold_signals()
    try:
        if not _said.is_set():
            write("interrupted")
            _said.set()
    finally:
        _release_signals(held)


def _hold_signals():
    if threading.current_thread() is not threading.main_thread():
        return None
    try:
        return signal.pthread_sigmask(signal.SIG_BLOCK, SIGNALS)
    except (OSError, ValueError, AttributeError):
        return None


def _release_signals(held) -> None:
    if held is not None:
        try:
            signal.pthread_sigmask(signal.SIG_SETMASK, held)
        except (OSError, ValueError):
            pass


def _handler(signum, frame):
    if _interrupted.is_set():
        if _hard_exit:
            _leave_now()
        raise KeyboardInterrupt
    _interrupted.set()
    for callback in list(_abort_callbacks):
        try:
            callback()
        except Exception:  # an abort must never stop the interrupt
            pass
    if _hard_exit:
        timer = threading.Timer(GRACE_SECONDS, _leave_now)
        timer.daemon = True
        timer.start()
    raise KeyboardInterrupt


def install() -> dict:
    """Take the signals (main thread only); returns what to give back to `restore`."""
    if threading.current_thread() is not threading.main_thread():
        return {}
    _interrupted.clear()
    _said.clear()
    previous = {}
    for sig in SIGNALS:
        try:
            previous[sig] = signal.signal(sig, _handler)
        except (OSError, ValueError):
            pass
    return previous


def restore(previous: dict) -> None:
    for sig, handler in previous.items():
        try:
            signal.signal(sig, handler)
        except (OSError, ValueError, TypeError):
            pass
    _abort_callbacks.clear()


__all__ = ["GRACE_SECONDS", "arm_hard_exit", "install", "interrupted", "on_interrupt", "restore", "say_interrupted"]
