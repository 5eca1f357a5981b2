"""What the cluster commands share about output: formats, reports, exit codes."""

from __future__ import annotations

import sys

from trainerctl.errors import EXIT_BAD_INPUT, EXIT_FAILED, InputError, TrainerctlError
from trainerctl.safe_text import terminal
from trainerctl.ui import Progress

SUMMARY_FORMATS = ("text", "yaml", "json")


def check_output(output: str | None, formats=SUMMARY_FORMATS) -> str:
    if output is None:
        return formats[0]
    if output not in formats:
        raise InputError(f"-o {output!r}: expected one of {', '.join(formats)}")
    return output


def emit(report, output: str) -> None:
    if output == "json":
        sys.stdout.write(report.to_json())
    elif output == "yaml":
        sys.stdout.write(report.to_yaml())
    else:
        sys.stdout.write(terminal(report.text()))


def progress(total: int) -> Progress:
    return Progress(total)


def errors_above_one(fn):
    """Run fn; a plain failure (exit 1) becomes 2, because 1 means "drift" / "blocked" here."""
    try:
        return fn()
    except TrainerctlError as exc:
        if exc.exit_code == EXIT_FAILED:
            exc.exit_code = EXIT_BAD_INPUT
        raise
