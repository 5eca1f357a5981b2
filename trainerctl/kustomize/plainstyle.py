"""Whether go-yaml may write a string as a plain scalar: libyaml's analysis of a scalar (which
yamlemit's writers follow, and yamlread.needs_quotes asks)."""

from __future__ import annotations

import re

_BREAKS = "\r\n\x85\u2028\u2029"
_BLANKZ = " \t\r\n\x85\u2028\u2029"


class Analysis:
    __slots__ = ("multiline", "block_plain", "single", "block")

    def __init__(self, multiline: bool, block_plain: bool, single: bool, block: bool):
        self.multiline = multiline
        self.block_plain = block_plain
        self.single = single
        self.block = block


# libyaml's printable set. The full class takes longer to compile than most builds spend
# writing non-ASCII text, so ASCII text (nearly all of it) is judged by the small class.
_NONPRINTABLE_ASCII = re.compile("[^\n\x20-\x7e]")
_nonprintable: re.Pattern | None = None


def has_nonprintable(value: str) -> bool:
    global _nonprintable
    if value.isascii():
        return _NONPRINTABLE_ASCII.search(value) is not None
    if _nonprintable is None:
        _nonprintable = re.compile("[^\n\x20-\x7e\xa0-\ud7ff\ue000-\ufefe\uff00-\ufffd]")
    return _nonprintable.search(value) is not None
ANY_BREAK = re.compile("[\r\n\x85\u2028\u2029]")
_BREAK_SPACE = re.compile("[\r\n\x85\u2028\u2029] ")
_SPACE_BREAK = re.compile(" [\r\n\x85\u2028\u2029]")
# ':' followed by white space or the end, or '#' preceded by white space (not at the start).
_INNER_INDICATOR = re.compile("(?<=.):(?=[ \t\r\n\x85\u2028\u2029]|$)|[ \t\r\n\x85\u2028\u2029]#", re.S)


def analyze(value: str) -> Analysis:
    """libyaml's yaml_emitter_analyze_scalar, for block context, done with regexes."""
    if not value:
        return Analysis(False, True, True, False)
    first = value[0]
    after_first_ws = len(value) == 1 or value[1] in _BLANKZ
    block_indicators = (
        value.startswith(("---", "..."))
        or first in "#,[]{}&*!|>'\"%@`"
        or (first in "?:-" and after_first_ws)
        or _INNER_INDICATOR.search(value) is not None
    )
    special = has_nonprintable(value)
    line_breaks = ANY_BREAK.search(value) is not None
    last = value[-1]
    block_plain = single = block = True
    if first == " " or last == " " or first in _BREAKS or last in _BREAKS:
        block_plain = False
    if last == " ":
        block = False
    if line_breaks:
        block_plain = False
        if _BREAK_SPACE.search(value):
            single = False
        if _SPACE_BREAK.search(value):
            single = block = False
    if special:
        block_plain = single = block = False
    if block_indicators:
        block_plain = False
    return Analysis(line_breaks, block_plain, single, block)
