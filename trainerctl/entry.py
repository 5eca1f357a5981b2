"""Console entry point (`trainerctl`); the command line itself is trainerctl.cli.

What only the real process does: reopen closed standard descriptors and route stdout and stderr
through the redaction layer (trainerctl.trust.stdio), arm the hard exit after an interrupt
(trainerctl.trust.interrupts), flush the output before leaving so a full disk still gets its line, and
leave without tearing the interpreter down (`leave`).
"""

from __future__ import annotations

import atexit
import gc
import os
import sys
import threading
from typing import NoReturn


# CPython looks for reference cycles every 700 new container objects; a command allocates
# hundreds of thousands that stay alive until it ends (modules, then parsed objects), so most of
# those collections find nothing, for a few per cent of a render. Collecting less often keeps what
# the collector is for: cycles are still freed, just in larger batches.
GC_THRESHOLDS = (50_000, 10, 10)


def run(argv: list[str] | None = None) -> int:
    """Run one command line as the process's own (streams wrapped, signals taken); its exit code."""
    gc.set_threshold(*GC_THRESHOLDS)
    from trainerctl.trust import interrupts
    from trainerctl.trust import stdio

    stdio.install()
    interrupts.arm_hard_exit()
    interrupts.install()  # already while the command line's modules load
    from trainerctl.errors import EXIT_INTERRUPTED

    try:
        from trainerctl.cli import main as cli_main

        rc = cli_main(argv)
    except KeyboardInterrupt:  # before the command line could take over
        interrupts.say_interrupted(stdio.error)
        rc = EXIT_INTERRUPTED
    return stdio.finish(rc)


def leave(rc: int) -> NoReturn:
    """End the process with `rc`, skipping the interpreter's teardown when nothing needs it.

    Teardown frees every object one at a time and runs a last full garbage collection: for a
    render (a few megabytes of parsed objects) that is a tenth of the run, spent on memory the
    system takes back at once anyway. Everything a normal exit does that has an effect outside
    the process still happens first: atexit handlers (temporary folders, logging) run and the
    standard streams are flushed. Only when a thread other than this one is still running is the
    normal exit kept: joining worker threads is part of ending cleanly (an interrupted run has
    cleaned up already and leaves at once: requests in flight would hold it otherwise). A daemon
    thread (the requests' deadline watchdog, idle after every cluster command) is not one: Python
    does not join it either.
    """
    from trainerctl.errors import EXIT_INTERRUPTED

    this = threading.current_thread()
    if rc != EXIT_INTERRUPTED and any(not t.daemon for t in threading.enumerate() if t is not this):
        sys.exit(rc)
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
        try:
            if stream is not None:
                stream.flush()
        except Exception:  # noqa: BLE001 - stdio.finish reported what mattered; nothing more can be said
            pass
    os._exit(rc)


def main() -> NoReturn:
    """The `trainerctl` console script and `python -m trainerctl`."""
    leave(run())
