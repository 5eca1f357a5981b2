"""Where messages go: stderr, with colour and a live line per stage only on a terminal outside CI.

Every text passes safe_text.clean before it is printed or handed to rich: credentials masked,
one line, cut, before rich wraps it at the terminal's width (a credential folded across two
lines would no longer be found by the stream's line-by-line mask)."""

from __future__ import annotations

import os
import sys
import threading
import time
from typing import Mapping, Sequence

from trainerctl.stage_lines import Stage
from trainerctl.trust.safe_text import LINE_LIMIT, clean


def plain_output() -> bool:
    """One line per event: not a terminal, CI set, NO_COLOR set, or TERM=dumb (a terminal that
    cannot redraw a line)."""
    return (bool(os.environ.get("CI")) or bool(os.environ.get("NO_COLOR")) or os.environ.get("TERM") == "dumb"
            or not sys.stderr.isatty())


def warn(message: str) -> None:
    """One `warning:` line (text from outside it may quote is cleaned: trainerctl.trust.safe_text)."""
    print(f"warning: {clean(message, LINE_LIMIT)}", file=sys.stderr)


def info(message: str) -> None:
    print(clean(message, LINE_LIMIT), file=sys.stderr)


class Progress:
    """Progress of a cluster run (install, rollback, uninstall) on stderr: one line per event when
    plain (plain_output), else one live line per stage (trainerctl.stage_lines), every object
    listed only when `verbose` (a failed one always).

    Thread-safe: objects finish on worker threads.
    """

    def __init__(self, total: int, *, enabled: bool = True, verbose: bool = False):
        self.total = total
        self.done = 0
        self.enabled = enabled
        self.verbose = verbose
        self._lock = threading.Lock()
        self._titles: Mapping[str, str] = {}
        self._stages: LiveStages | None = None
        self._last_wait = ""
        self._last_s = -1
        self.shows_stages = enabled and not plain_output()
        if self.shows_stages:
            from rich.console import Console

            self._stages = LiveStages(Console(stderr=True))

    @property
    def lists_objects(self) -> bool:
        """Whether the run's text report lists its objects: not when stdout is the terminal that
        was shown the stages (and with -v each object as it went)."""
        return not self.shows_stages or not sys.stdout.isatty()

    def _line(self, text: str) -> None:
        if not self.enabled:
            return
        text = clean(text, LINE_LIMIT)  # may quote a server's words
        if self._stages is not None:
            self._stages.print(text)  # above the live line, never [link=…] markup from a server
        else:
            print(text, file=sys.stderr, flush=True)

    def name_stages(self, titles: Mapping[str, str]) -> None:
        """How the stage lines name the run's stages (stage name -> title); others by their name."""
        self._titles = dict(titles)

    def expect(self, total: int) -> None:
        """How many objects the run will report (known once it is planned)."""
        with self._lock:
            self.total = total

    def step(self, name: str) -> None:
        """Work before the stages that applies nothing (the preflight): a line of its own on a
        terminal, nothing when plain."""
        if self._stages is not None:
            self._stages.begin(clean(self._titles.get(name, name)), 0)

    def stage(self, name: str, count: int) -> None:
        if self._stages is not None:
            self._stages.begin(clean(self._titles.get(name, name)), count)
        else:
            with self._lock:
                self._line(f"stage {name}: {count} object(s)")

    def stage_done(self, summary: str = "") -> None:
        """The stage (or step) is applied and waited for; `summary` instead of its counts."""
        if self._stages is not None:
            self._stages.end(summary=clean(summary))

    def object_done(self, display: str, action: str, message: str = "") -> None:
        line = f"{display} {action}" + (f" ({message})" if message else "")
        with self._lock:
            self.done += 1
            if self._stages is None:
                self._line(line)
                return
            self._stages.counted(action)
        if self.verbose or action == "failed":
            self._line(line)

    def waiting(self, what: str, seconds: float, *, items: Sequence[str] = ()) -> None:
        """Still waiting after `seconds`: for `what` (the plain line), each of `items` (the stage line)."""
        if self._stages is not None:
            self._stages.waiting([clean(i) for i in items] or [clean(what)], seconds)
            return
        with self._lock:
            if what != self._last_wait or int(seconds) % 10 == 0 and seconds >= 1 and int(seconds) != self._last_s:
                self._last_s = int(seconds)
                self._line(f"waiting for {what} ({seconds:.0f}s)")
            self._last_wait = what

    def message(self, text: str) -> None:
        with self._lock:
            self._line(text)

    def close(self, *, ok: bool = True) -> None:
        """The run ended (`ok`: without an error): the open stage line, if any, ends done or failed."""
        stages, self._stages = self._stages, None
        if stages is not None:
            stages.close(ok=ok)


class LiveStages:
    """The rich live line and the finished lines above it. Thread-safe: objects finish on worker
    threads while rich refreshes the line on its own; no console call is made holding the lock
    (rich's refresh holds the console's lock while it asks for the line)."""

    def __init__(self, console):
        self.console = console
        self._lock = threading.Lock()
        self._stage: Stage | None = None
        self._live = None
        utf = (console.encoding or "").lower().startswith("utf")
        self._marks = ("✓", "✗") if utf else ("ok", "FAIL")
        self._frames = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏" if utf else "|/-\\"

    # -- what the run reports -------------------------------------------------------------
    def begin(self, title: str, count: int) -> None:
        """A stage starts: the one before it, still open, is done."""
        self.end()
        with self._lock:
            self._stage = Stage(title, count)
        self._start()

    def counted(self, action: str) -> None:
        with self._lock:
            if self._stage is not None:
                self._stage.actions[action] = self._stage.actions.get(action, 0) + 1
                self._stage.failed = self._stage.failed or action == "failed"

    def waiting(self, items: Sequence[str], seconds: float) -> None:
        with self._lock:
            if self._stage is not None:
                self._stage.waiting, self._stage.waited = list(items), seconds
        self._start()

    def print(self, text: str, style: str | None = None) -> None:
        """A line above the live one (a warning, a failed object, with -v every object)."""
        from rich.text import Text

        self.console.print(Text(text, style=style or ""), highlight=False, markup=False, soft_wrap=True)

    def end(self, *, ok: bool = True, summary: str = "") -> None:
        """The open stage, if any, becomes its finished line."""
        with self._lock:
            stage, self._stage = self._stage, None
            if stage is None:
                return
            failed = stage.failed or not ok
        from rich.text import Text

        mark = self._marks[1] if failed else self._marks[0]
        self.console.print(Text.assemble((mark, "red" if failed else "green"), " ", stage.finished(summary, failed)),
                           highlight=False, markup=False, soft_wrap=True)

    def close(self, *, ok: bool = True) -> None:
        self.end(ok=ok)
        live, self._live = self._live, None
        if live is not None:
            live.stop()

    # -- rich -----------------------------------------------------------------------------
    def _start(self) -> None:
        """The live line starts with the first stage (not before: uninstall may still ask a question)."""
        if self._live is None:
            from rich.live import Live

            self._live = Live(self, console=self.console, transient=True, refresh_per_second=8)
            self._live.start()

    def __rich_console__(self, console, options):
        from rich.cells import cell_len
        from rich.text import Text

        with self._lock:
            stage = self._stage
            frame = self._frames[int(time.monotonic() * 8) % len(self._frames)]
            text = stage.running(options.max_width - cell_len(frame) - 1, cell_len) if stage else "…"
        yield Text.assemble((frame, "cyan"), " ", text, no_wrap=True, overflow="crop")
