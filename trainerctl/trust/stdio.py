"""Where everything trainerctl prints goes: stdout and stderr, each through the redaction layer.

`install()` runs first in every process (trainerctl.entry):
- A closed standard descriptor (`trainerctl … >&-`, `2>&-`) is reopened on /dev/null. Otherwise
  Python leaves sys.stderr None and `print(file=sys.stderr)` silently writes to stdout, and the
  next file trainerctl opens would take descriptor 2, so an exec plugin's or git's error output
  would land in it.
- sys.stdout and sys.stderr become `RedactingWriter`s: each complete line is passed through
  trainerctl.trust.redact before it reaches the real stream (errors, warnings, progress, `-o json`,
  tracebacks under TRAINERCTL_DEBUG alike). stderr also hides passwords in URLs; stdout holds
  rendered output, which must stay byte for byte what kustomize would write, so there only
  registered credentials are masked.
- A failed write to stdout (a full disk, /dev/full) becomes one `error:` line and exit 2; a
  reader that went away (EPIPE) stays quiet, as before.
"""

from __future__ import annotations

import io
import os
import sys

from trainerctl.errors import EXIT_BAD_INPUT, EXIT_FAILED, InputError
from trainerctl.trust import redact
from trainerctl.trust.bounded_read import os_problem
from trainerctl.trust.safe_text import LINE_LIMIT, clean


class OutputError(InputError):
    """stdout cannot be written (exit 2: where the output goes is the user's to fix)."""


def _reopen_closed_descriptors() -> set[int]:
    """Which of 0, 1, 2 were closed (now /dev/null)."""
    closed = set()
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
        except OSError:
            closed.add(fd)
            new = os.open(os.devnull, os.O_RDWR)  # takes the lowest free descriptor: this one
            if new != fd:
                os.dup2(new, fd)
                os.close(new)
    return closed


def _discard(fd: int) -> None:
    """Point fd at /dev/null, so what is still buffered for it can be flushed without failing."""
    try:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, fd)
        os.close(null)
    except OSError:
        pass


class RedactingWriter(io.TextIOBase):
    """A text stream that redacts whole lines before they reach `raw`.

    Lines are held until their newline (or a flush), so a credential split across two write()
    calls is still seen whole."""

    def __init__(self, raw, *, urls: bool, is_stdout: bool, closed: bool = False):
        self._raw = raw
        self._urls = urls
        self._is_stdout = is_stdout
        self._pending = ""
        self._failed = False
        self._closed_at_start = closed  # stdout was closed (`>&-`): output has nowhere to go

    # -- the stream interface other code relies on ---------------------------------------
    @property
    def encoding(self):
        return getattr(self._raw, "encoding", "utf-8")

    @property
    def errors(self):
        return getattr(self._raw, "errors", "strict")

    def fileno(self) -> int:
        return self._raw.fileno()

    def isatty(self) -> bool:
        try:
            return self._raw.isatty()
        except (OSError, ValueError):
            return False

    def writable(self) -> bool:
        return True

    @property
    def closed(self) -> bool:
        return False

    # -- writing ---------------------------------------------------------------------------
    def write(self, text: str) -> int:
        if not isinstance(text, str):
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        if self._failed:
            return len(text)
        if self._closed_at_start and text:
            self._failed = True
            raise OutputError("stdout: cannot write the output: standard output is closed")
        cut = text.rfind("\n")
        if cut < 0:
            self._pending += text
            if len(self._pending) > 1 << 16:  # a huge line without newline: do not hold it all
                self._emit(self._take_pending())
            return len(text)
        head = self._pending + text[: cut + 1]
        self._pending = text[cut + 1:]
        self._emit(head)
        return len(text)

    def _take_pending(self) -> str:
        pending, self._pending = self._pending, ""
        return pending

    def flush(self) -> None:
        if self._failed:
            return
        if self._pending:
            self._emit(self._take_pending())
        self._guard(self._raw.flush)

    def _emit(self, text: str) -> None:
        if text:
            self._guard(lambda: self._raw.write(redact.redact(text, urls=self._urls)))

    def _guard(self, action) -> None:
        try:
            action()
        except BrokenPipeError:
            self._fail()
            raise
        except (OSError, ValueError) as exc:
            self._fail()
            if self._is_stdout:
                problem = os_problem(exc) if isinstance(exc, OSError) else "the stream is closed"
                raise OutputError(f"stdout: cannot write the output: {problem}") from None

    def _fail(self) -> None:
        """After a failed write nothing more is written here, and what the stream still buffers
        goes to /dev/null (else Python's exit would try, and fail, once more)."""
        self._failed = True
        self._pending = ""
        try:
            _discard(self._raw.fileno())
        except (OSError, ValueError, AttributeError):
            pass


def _text_stream(fd: int, current):
    if current is not None:
        return current
    return io.TextIOWrapper(io.FileIO(fd, "w", closefd=False), encoding="utf-8", errors="backslashreplace",
                            line_buffering=True)


def install() -> None:
    """Make stdout and stderr safe for this process (idempotent). With stdout closed, the first
    thing written to it is an error (exit 2); with stderr closed, messages are dropped and the
    exit code alone tells (they never go to stdout instead)."""
    closed = _reopen_closed_descriptors()
    if not isinstance(sys.stdout, RedactingWriter):
        sys.stdout = RedactingWriter(_text_stream(1, sys.stdout), urls=False, is_stdout=True, closed=1 in closed)
    if not isinstance(sys.stderr, RedactingWriter):
        sys.stderr = RedactingWriter(_text_stream(2, sys.stderr), urls=True, is_stdout=False)


def error(message: str) -> None:
    """The one `error:` line of a failed command: masked, control characters shown, one line (clean)."""
    line = "error: " + clean(str(message), LINE_LIMIT)
    try:
        print(line, file=sys.stderr, flush=True)
    except (OSError, ValueError):
        pass  # stderr itself is gone; the exit code still says it


def finish(rc: int) -> int:
    """Flush both streams at the end of the command; a write that fails only now still gets its
    line and its exit code (2), and a reader that left early (`| head`) ends it quietly (1)."""
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        rc = rc or EXIT_FAILED
    except OutputError as exc:
        error(str(exc))
        rc = rc or exc.exit_code
    except (OSError, ValueError):
        rc = rc or EXIT_BAD_INPUT
    try:
        sys.stderr.flush()
    except (OSError, ValueError):
        pass
    return rc


__all__ = ["OutputError", "RedactingWriter", "error", "finish", "install"]
