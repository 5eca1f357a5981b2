"""Where messages go: stderr, with colour and progress only on a terminal outside CI.

Every text passes safe_text.clean before it is printed or handed to rich: credentials masked,
one line, cut, before rich wraps it at the terminal's width (a credential folded across two
lines would no longer be found by the stream's line-by-line mask)."""

from __future__ import annotations

import os
import sys

from trainerctl.safe_text import LINE_LIMIT, clean


def plain_output() -> bool:
    """One line per event: not a terminal, CI=true, or NO_COLOR set."""
    return bool(os.environ.get("CI")) or not sys.stderr.isatty()


def warn(message: str) -> None:
    """One `warning:` line (text from outside it may quote is cleaned: trainerctl.safe_text)."""
    print(f"warning: {clean(message, LINE_LIMIT)}", file=sys.stderr)


def info(message: str) -> None:
    print(clean(message, LINE_LIMIT), file=sys.stderr)


class Progress:
    """Progress of a cluster run: one line per event when plain, a rich live display otherwise.

    Thread-safe: objects finish on worker threads.
    """

    def __init__(self, total: int, *, enabled: bool = True):
        import threading

        self.total = total
        self.done = 0
        self.enabled = enabled
        self._lock = threading.Lock()
        self._rich = None
        self._task = None
        self._last_wait = ""
        if enabled and not plain_output():
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress as RichProgress, TextColumn, TimeElapsedColumn

            console = Console(stderr=True, no_color="NO_COLOR" in os.environ)
            self._rich = RichProgress(TextColumn("{task.description}", markup=False), BarColumn(), MofNCompleteColumn(),
                                      TimeElapsedColumn(), console=console, transient=True)
            self._rich.start()
            self._task = self._rich.add_task("starting", total=total)

    def _line(self, text: str) -> None:
        if not self.enabled:
            return
        text = clean(text, LINE_LIMIT)  # may quote a server's words
        if self._rich is not None:
            self._rich.console.print(text, highlight=False, markup=False)  # no [link=…] from a server
        else:
            print(text, file=sys.stderr, flush=True)

    def expect(self, total: int) -> None:
        """How many objects the run will report (known once it is planned)."""
        with self._lock:
            self.total = total
            if self._rich is not None:
                self._rich.update(self._task, total=total)

    def stage(self, name: str, count: int) -> None:
        with self._lock:
            if self._rich is not None:
                self._rich.update(self._task, description=clean(name, LINE_LIMIT))
            else:
                self._line(f"stage {name}: {count} object(s)")

    def object_done(self, display: str, action: str, message: str = "") -> None:
        with self._lock:
            self.done += 1
            if self._rich is not None:
                self._rich.update(self._task, completed=self.done)
                if action not in ("unchanged", "skipped"):
                    self._line(f"{display} {action}" + (f" ({message})" if message else ""))
            else:
                self._line(f"{display} {action}" + (f" ({message})" if message else ""))

    def waiting(self, what: str, seconds: float) -> None:
        with self._lock:
            if self._rich is not None:
                self._rich.update(self._task, description=clean(f"waiting {seconds:.0f}s for {what}", LINE_LIMIT))
            elif what != self._last_wait or int(seconds) % 10 == 0 and seconds >= 1 and int(seconds) != getattr(self, "_last_s", -1):
                self._last_s = int(seconds)
                self._line(f"waiting for {what} ({seconds:.0f}s)")
            self._last_wait = what

    def message(self, text: str) -> None:
        with self._lock:
            self._line(text)

    def close(self) -> None:
        if self._rich is not None:
            self._rich.stop()
            self._rich = None
