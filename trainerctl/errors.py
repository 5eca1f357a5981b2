"""Errors that end a command with one clear line and a documented exit code."""

from __future__ import annotations

# Exit codes are part of the CLI contract; docs/exit-codes.md documents them.
EXIT_OK = 0
EXIT_FAILED = 1  # the command failed; diff: drift found; upgrade-check: upgrade blocked
EXIT_BAD_INPUT = 2
EXIT_PREFLIGHT = 3  # the cluster is unreachable or not ready for Trainer
EXIT_TIMEOUT = 4
EXIT_INTERRUPTED = 130


class TrainerctlError(Exception):
    """A failure the user can act on: printed as one line, never as a traceback."""

    exit_code = EXIT_FAILED

    def __init__(self, message: str, exit_code: int | None = None):
        super().__init__(message)
        if exit_code is not None:
            self.exit_code = exit_code


class InputError(TrainerctlError):
    """Bad input: a file, a field or a flag that is not what was expected."""

    exit_code = EXIT_BAD_INPUT


class PreflightError(TrainerctlError):
    exit_code = EXIT_PREFLIGHT


class WaitTimeout(TrainerctlError):
    exit_code = EXIT_TIMEOUT


class Interrupted(TrainerctlError):
    """Ctrl-C (or SIGTERM/SIGHUP): the command stopped; what it already did is said before."""

    exit_code = EXIT_INTERRUPTED

    def __init__(self, message: str = "interrupted"):
        super().__init__(message)
