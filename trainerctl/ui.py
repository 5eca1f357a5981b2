"""Where messages go: stderr, with colour and progress only on a terminal outside CI."""

from __future__ import annotations

import os
import sys


def plain_output() -> bool:
    """One line per event: not a terminal, CI=true, or NO_COLOR set."""
    return bool(os.environ.get("CI")) or not sys.stderr.isatty()


def color_enabled() -> bool:
    return "NO_COLOR" not in os.environ and not plain_output()


def warn(message: str) -> None:
    print(f"warning: {message}", file=sys.stderr)


def info(message: str) -> None:
    print(message, file=sys.stderr)
