"""Where a command's output goes: formats, reports, exit codes.

With trainerctl.trust.stdio and trainerctl.ui, the only module that writes to stdout or stderr
(tests/cli/test_masking.py). A report goes out as `-o json` or `-o yaml` through
trainerctl.trust.serialize (masked and bounded as values, then serialized) or as text through
safe_text.terminal (masked, then its control characters shown); what trainerctl made itself (a
render, a completion script, a path) goes out as it is (`verbatim`). The stream under all of
them masks once more, line by line (trainerctl.trust.stdio).
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any, Callable, TextIO

from trainerctl.errors import EXIT_BAD_INPUT, EXIT_FAILED, InputError, TrainerctlError
from trainerctl.trust.safe_text import terminal

if TYPE_CHECKING:
    from trainerctl.trust.serialize import Reported

SUMMARY_FORMATS = ("text", "yaml", "json")


def check_output(output: str | None, formats=SUMMARY_FORMATS) -> str:
    if output is None:
        return formats[0]
    if output not in formats:
        raise InputError(f"-o {output!r}: expected one of {', '.join(formats)}")
    return output


def emit(report: Reported, output: str, progress=None) -> None:
    """A report (serialize.Reported) on stdout in the format asked for; `progress`: the run's
    (ui.Progress), whose stage lines may stand for the objects in the text (lists_objects)."""
    if output == "json":
        sys.stdout.write(report.to_json())
    elif output == "yaml":
        sys.stdout.write(report.to_yaml())
    elif progress is not None and not progress.lists_objects:
        show(report.text(objects=False))
    else:
        show(report.text())


def next_step(progress, command: str) -> None:
    """After a run the terminal saw stage by stage: the command to run next."""
    if progress.shows_stages:
        from trainerctl import ui

        ui.info(f"next: {command}")


def show(text: str, stream: TextIO | None = None) -> None:
    """Text built from a server's data (a report, a diff) on stdout, or `stream`."""
    (stream or sys.stdout).write(terminal(text))


def verbatim(text: str) -> None:
    """What trainerctl made itself on stdout, byte for byte: a render, a build, a completion
    script, a path."""
    sys.stdout.write(text)


def report_install(run: Callable[[], Any], output: str, progress, then: Callable[[], None] | None = None) -> None:
    """The one tail of `install` and `rollback`: `run()` (the action's run), its report on stdout
    (when it failed, what run_failed prints before the error line), then `then` (verify's tiers,
    or the next command to run); `progress`: the run's, as emit's."""
    from trainerctl.cluster.manager.report import RunFailed

    try:
        report = run()
    except RunFailed as exc:
        run_failed(exc, output, progress)
        raise
    emit(report, output, progress)
    if then is not None:
        then()


def run_failed(exc, output: str, progress=None) -> None:
    """What a failed install (or rollback) prints before its error line: a blocked upgrade's
    report, why a rollout failed, and the report of what was done (exc: install.RunFailed;
    `progress`: as emit's)."""
    exc.report.error = exc.report.error or str(exc)
    blocked = exc.upgrade_report
    if blocked is not None and output == "text":
        show(blocked.text(), sys.stderr)
    if exc.diagnoses:  # the causes in full, before the one error line that names the first
        from trainerctl.cluster.manager.diagnose import lines

        show("".join(f"{line}\n" for line in lines(exc.diagnoses)), sys.stderr)
    if output != "text" or exc.report.objects:  # text: the error line says it all
        emit(exc.report, output, progress)


def errors_above_one(fn):
    """Run fn; a plain failure (exit 1) becomes 2, because 1 means "drift" / "blocked" here."""
    try:
        return fn()
    except TrainerctlError as exc:
        if exc.exit_code == EXIT_FAILED:
            exc.exit_code = EXIT_BAD_INPUT
        raise
