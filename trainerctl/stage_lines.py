"""What the stage lines of a cluster run (install, rollback, uninstall) say on a terminal, as
`flux install` and istioctl show theirs: the stage running says what it applies or waits for,
then stays as one line with its counts. trainerctl.ui draws them (done ✓ or failed ✗) and decides
when; the objects themselves are listed only with -v, and plain output lists every event.

Text reaches here cleaned (safe_text.clean: masked, one line) by trainerctl.ui. The live line is
fit to the terminal's width at every refresh (`fit`), a whole word at a time, so a name is never
cut in the middle and rich never wraps or crops it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Sequence

MORE = "…"
# How a stage's counts are ordered (the last word of an action: a dry-run's "would be created").
ORDER = ("created", "configured", "recreated", "unchanged", "skipped", "pruned", "deleted", "failed")


def cut(text: str, width: int, measure: Callable[[str], int] = len) -> str:
    """`text` if it fits in `width` cells, else its leading whole words and `…` (only `…` when not
    even its first word fits; nothing when not even that does)."""
    if measure(text) <= width:
        return text
    words = text.split(" ")
    while words:
        words.pop()
        shown = " ".join(words).rstrip(" ,;:(")
        if shown and measure(shown + MORE) <= width:
            return shown + MORE
    return MORE if measure(MORE) <= width else ""


def fit(head: str, items: Sequence[str], width: int, tail: str = "", measure: Callable[[str], int] = len) -> str:
    """`head` followed by `items` (comma-separated) and `tail`, in at most `width` cells. Items that
    do not fit become "and N more"; when not even one fits whole, the first is cut a whole word at a
    time, keeping at least its first two words (what it is: a kind and a name), with "+N" for the
    others and then without `tail` if that is what it takes; what still does not fit is cut."""
    tail = f" {tail}" if tail else ""
    for shown in range(len(items), 0, -1):
        rest = len(items) - shown
        line = f"{head} {', '.join(items[:shown])}" + (f" and {rest} more" if rest else "") + tail
        if measure(line) <= width:
            return line
    if not items:
        return cut(head + tail, width, measure)
    rest = len(items) - 1
    named = f"{head} " + " ".join(items[0].split(" ")[:2]).rstrip(" ,;:(")
    for more in ((f" and {rest} more", f" +{rest}") if rest else ("",)):
        for end in (tail, ""):
            first = cut(f"{head} {items[0]}", width - measure(more + end), measure)
            if first.removesuffix(MORE).startswith(named):
                return first + more + end
    return cut(f"{head} {items[0]}", width, measure)


def _order(action: str) -> int:
    last = action.rpartition(" ")[2]
    return ORDER.index(last) if last in ORDER else len(ORDER)


@dataclass
class Stage:
    """One stage's line: its objects' actions so far, and what it waits for."""

    title: str
    count: int = 0  # objects it applies (or deletes)
    actions: dict[str, int] = field(default_factory=dict)
    waiting: list[str] = field(default_factory=list)
    waited: float = 0.0  # seconds, at the last look
    failed: bool = False

    @property
    def done(self) -> int:
        return sum(self.actions.values())

    def counts(self) -> str:
        return ", ".join(f"{n} {a}" for a, n in sorted(self.actions.items(), key=lambda kv: (_order(kv[0]), kv[0])))

    def running(self, width: int, measure: Callable[[str], int] = len) -> str:
        """The live line (without its spinner)."""
        if self.waiting:
            return fit(f"{self.title}: waiting for", self.waiting, width, f"({self.waited:.0f}s)", measure)
        if self.count:
            return cut(f"{self.title}: {self.done}/{self.count} object(s)", width, measure)
        return cut(f"{self.title}…", width, measure)

    def finished(self, summary: str = "", failed: bool = False) -> str:
        """The line the stage leaves: its counts (or `summary`), and how long it waited."""
        said = summary or self.counts() or ("failed" if failed else "done")
        if self.waited >= 1:
            said += f", waited {self.waited:.0f}s" if failed else f", ready after {self.waited:.0f}s"
        return f"{self.title}: {said}"
