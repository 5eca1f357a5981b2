"""How a command ends (README: Exit codes): its own code, or one `error:` line on stderr and the
documented code. Shared by the typer command line and the quick path in entry.py, so both end
the same way."""

from __future__ import annotations

import os
import signal
import sys
import threading

from trainerctl.errors import EXIT_FAILED, EXIT_INTERRUPTED, EXIT_OK, TrainerctlError

TYPE_CHECKING = False  # typing costs a tenth of a kustomize run's start-up
if TYPE_CHECKING:
    from typing import Callable


def _terminate(signum, frame):  # SIGTERM/SIGHUP: unwind like Ctrl-C, so cleanups run
    raise KeyboardInterrupt


def run(command: Callable[[], int | None], unexpected: Callable[[Exception], int] | None = None) -> int:
    """Run `command` and return its exit code; `unexpected` turns any other exception into one
    (default: internal_error)."""
    previous = {}
    if threading.current_thread() is threading.main_thread():
        previous = {sig: signal.signal(sig, _terminate) for sig in (signal.SIGTERM, signal.SIGHUP)}
    try:
        try:
            rc = command()
        except TrainerctlError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return exc.exit_code
        except KeyboardInterrupt:
            print("error: interrupted", file=sys.stderr)
            return EXIT_INTERRUPTED
        except BrokenPipeError:  # `trainerctl render | head`: the reader left, nothing to say
            _quiet_stdout()
            return EXIT_FAILED
        except Exception as exc:
            return (unexpected or internal_error)(exc)
        return rc if isinstance(rc, int) and not isinstance(rc, bool) else EXIT_OK
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        client = sys.modules.get("trainerctl.cluster.engine.client")
        if client is not None:  # no decoded credential outlives the command
            client.cleanup_credentials()


def internal_error(exc: Exception) -> int:
    """A bug, not bad input: still one line, and a way to get the traceback."""
    if os.environ.get("TRAINERCTL_DEBUG"):
        raise exc
    print(f"error: internal error: {type(exc).__name__}: {exc} (set TRAINERCTL_DEBUG=1 for the traceback)",
          file=sys.stderr)
    return EXIT_FAILED


def _quiet_stdout() -> None:
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
