"""Console entry point (`trainerctl`); the command line itself is trainerctl.cli."""

from __future__ import annotations

import os
import sys


def main(argv: list[str] | None = None) -> int:
    from trainerctl.cli import main as cli_main
    from trainerctl.errors import EXIT_INTERRUPTED

    rc = cli_main(argv)
    if rc == EXIT_INTERRUPTED:
        # Interrupted (again) while requests were in flight: the interpreter would join their
        # worker threads, up to the request time-out, before exiting. Everything of ours is
        # cleaned up by now (credentials included), so leave at once.
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(rc)
    return rc
