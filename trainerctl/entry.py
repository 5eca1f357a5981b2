"""Console entry point (`trainerctl`); the command line itself is trainerctl.cli.

What only the real process does: reopen closed standard descriptors and route stdout and stderr
through the redaction layer (trainerctl.stdio), arm the hard exit after an interrupt
(trainerctl.interrupts), and flush the output before leaving so a full disk still gets its line.
"""

from __future__ import annotations

import os


def main(argv: list[str] | None = None) -> int:
    from trainerctl import interrupts
    from trainerctl import stdio

    stdio.install()
    interrupts.arm_hard_exit()
    interrupts.install()  # already while the command line's modules load
    from trainerctl.errors import EXIT_INTERRUPTED

    try:
        from trainerctl.cli import main as cli_main

        rc = cli_main(argv)
    except KeyboardInterrupt:  # before the command line could take over
        stdio.error("interrupted")
        rc = EXIT_INTERRUPTED
    rc = stdio.finish(rc)
    if rc == EXIT_INTERRUPTED:
        # Interrupted while requests were in flight: the interpreter would join their worker
        # threads before exiting. Everything of ours is cleaned up by now, so leave at once.
        os._exit(rc)
    return rc
