"""A block scalar's value as kustomize prints it: after kyaml writes it and reads it back.

kustomize turns every resource into JSON through kyaml's `RNode.MarshalJSON`, which encodes the
node tree with go-yaml v3 (each scalar in the style it was read in, no line width) and decodes
that text again. Reading the source is the same in go-yaml v3 and libyaml; the writer is where
they part:

- A folded (`>`) scalar: before each line break that ends a line not starting with a blank,
  go-yaml's writer adds an empty line unless the *value's first* non-break character is blank
  (libyaml looks at the line after the break). Read back, the empty line is one more `\n`
  wherever the next line is more indented, empty, or the last one kept by `+`; and a value whose
  first line starts with a blank has its single line breaks folded into spaces.
- A literal (`|`) or folded scalar whose value starts with a tab: the writer gives an
  indentation indicator only to a value starting with a space or a line break, and go-yaml
  cannot read its own output back ("found a tab character where an indentation space is
  expected"): kubectl fails.

Where block style is not allowed (a trailing space, a space before a line break, a character
go-yaml escapes) the writer uses double quotes, and the value reads back unchanged.
"""

from __future__ import annotations

import re
from functools import lru_cache

from trainerctl.kustomize.errors import KustomizeError

_BREAKS = "\n\r\x85\u2028\u2029"
_BLANK = " \t"


@lru_cache(maxsize=1)
def _no_block() -> re.Pattern:
    """go-yaml v3's analysis: no block style for a value ending in a space, with a space before a
    line break, or with a character it does not print as is (the tab it does). Compiled on first
    use: its character class costs ~4 ms, and an install -f whose documents come from the cache
    never asks."""
    return re.compile("( $| [\r\n\x85\u2028\u2029]|[^\t\n\x20-\x7e\xa0-\ud7ff\ue000-\ufefe\uff00-\ufffd])")


def block_allowed(value: str) -> bool:
    return bool(value) and _no_block().search(value) is None


def unreadable(value: str) -> bool:
    """Whether go-yaml fails to read back a block scalar with this value."""
    return value[:1] == "\t" and block_allowed(value)


def keeps_trailing_breaks(value: str) -> bool:
    """Whether go-yaml writes `value` as a block scalar with `+` (keep) chomping."""
    return block_allowed(value) and value[-1] in _BREAKS and _chomping(value) == 1


def folded(value: str) -> str:
    """A folded scalar's value after the round trip (see unreadable for the one it fails)."""
    if not block_allowed(value):
        return value
    return _read_folded(_write_folded(value), _chomping(value))


def _chomping(value: str) -> int:
    """go-yaml v3's chomping indicator for `value`: -1 strip, 0 clip, +1 keep."""
    if value[-1] not in _BREAKS:
        return -1
    if len(value) == 1 or value[-2] in _BREAKS:
        return 1
    return 0


def _write_folded(value: str) -> str:
    """What go-yaml v3's yaml_emitter_write_folded_scalar writes after the header, less the
    indentation every non-empty line gets."""
    out: list[str] = []
    first = value.lstrip(_BREAKS)[:1]
    # The extra empty line depends on the value's first non-break character (a go-yaml quirk).
    extra = bool(first) and first not in _BLANK
    start = 0
    for i, ch in enumerate(value):
        if ch in _BREAKS:
            line = value[start:i]
            out.append(line)
            if extra and ch == "\n" and line and line[0] not in _BLANK:
                out.append("\n")
            out.append(ch)
            start = i + 1
    out.append(value[start:])
    return "".join(out)


def _read_folded(text: str, chomping: int) -> str:
    """go-yaml v3's yaml_parser_scan_block_scalar for a folded body, over what _write_folded
    wrote (every line at the same indentation, taken as column 0)."""
    out: list[str] = []
    leading_break = ""
    leading_blank = False
    trailing: list[str] = []
    pos, n = 0, len(text)
    while pos < n:
        if text[pos] in _BREAKS:  # an empty line
            trailing.append(_line_break(text[pos]))
            pos += 1
            continue
        blank = text[pos] in _BLANK
        if leading_break == "\n" and not leading_blank and not blank:
            if not trailing:
                out.append(" ")
        else:
            out.append(leading_break)
        out.extend(trailing)
        trailing = []
        leading_blank = blank
        end = pos
        while end < n and text[end] not in _BREAKS:
            end += 1
        out.append(text[pos:end])
        leading_break = _line_break(text[end]) if end < n else ""
        pos = end + 1
    if chomping != -1:
        out.append(leading_break)
    if chomping == 1:
        out.extend(trailing)
    return "".join(out)


def _line_break(ch: str) -> str:
    # A line break reads as "\n", except the Unicode line and paragraph separators.
    return ch if ch in "\u2028\u2029" else "\n"


_NEL_RUN = re.compile("[ \x85]*\x85[ \x85]*")
_NEL_INDICATOR = re.compile("\x85(?:---|\\.\\.\\.)[ \x85]")


def nel_folded(s: str) -> str:
    """`s` after kustomize writes it as JSON (which leaves U+0085 as it is) and reads that as YAML,
    where U+0085 is a line break inside a double-quoted scalar: folded with the spaces around it
    into one space, or into n-1 line breaks for a run of n. kustomize does so for every string it
    prints, and for a generated ConfigMap's data before it hashes it."""
    if _NEL_INDICATOR.search(s):
        raise KustomizeError(f"string {s[:40]!r}...: U+0085 before '---' or '...': kubectl's YAML "
                             "writer reads it as a document marker and fails")

    def fold(m: re.Match) -> str:
        breaks = m.group().count("\x85")
        return "\n" * (breaks - 1) if breaks > 1 else " "

    return _NEL_RUN.sub(fold, s)
