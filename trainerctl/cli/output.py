"""What the cluster commands share about output: formats, reports, exit codes."""

from __future__ import annotations

import sys

from trainerctl.errors import EXIT_BAD_INPUT, EXIT_FAILED, InputError, TrainerctlError
from trainerctl.safe_text import terminal

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


def run_failed(exc, output: str) -> None:
    """What a failed install (or rollback) prints before its error line: a blocked upgrade's
    report, why a rollout failed, and the report of what was done (exc: install.RunFailed)."""
    exc.report.error = exc.report.error or str(exc)
    blocked = exc.upgrade_report
    if blocked is not None and output == "text":
        sys.stderr.write(terminal(blocked.to_text()))
    if exc.diagnoses:  # the causes in full, before the one error line that names the first
        from trainerctl.cluster.manager.diagnose import lines

        sys.stderr.write(terminal("".join(f"{line}\n" for line in lines(exc.diagnoses))))
    if output != "text" or exc.report.objects:  # text: the error line says it all
        emit(exc.report, output)


def errors_above_one(fn):
    """Run fn; a plain failure (exit 1) becomes 2, because 1 means "drift" / "blocked" here."""
    try:
        return fn()
    except TrainerctlError as exc:
        if exc.exit_code == EXIT_FAILED:
            exc.exit_code = EXIT_BAD_INPUT
        raise
