"""Text from outside made safe to print: no credential, one line, no control characters, a
bounded length.

An API server's error message, git's stderr, an exec plugin's message, a key read from a file:
each may hold a credential of this run, terminal escape sequences (ANSI colours, OSC 8 links or
OSC 52 clipboard writes), line breaks that forge extra `error:` lines, bidirectional-override
characters, or megabytes. `clean` is the one place such text is made printable, and `bounded`
the one place a report's values are cut; every error line passes `clean` once more on its way
out (trainerctl.trust.stdio).

Each of them masks first (trainerctl.trust.redact), before anything changes the text's layout: a
credential is found whole, before whitespace is collapsed, a line is cut, or a report is escaped,
folded (YAML) or wrapped (rich, at the terminal's width) around it.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any

from trainerctl.trust import redact

# Every text from a server (or a tool) is cut here where it becomes a message or a report field;
# the full text is never needed to act on an error.
MESSAGE_LIMIT = 1000
# The whole `error:` line, and each line of a report printed as text.
LINE_LIMIT = 4000
CUT = " …(cut)"

_SPACES = redact.WHITESPACE
_IDENTIFIER = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.\-/]{0,62}$")


def _visible(char: str) -> str:
    category = unicodedata.category(char)
    if category[0] == "C" or category in ("Zl", "Zp"):
        return f"U+{ord(char):04X}"  # as kubectl shows them (cleanANSIEscapeCodes)
    return char


def clean(text: str, limit: int = MESSAGE_LIMIT) -> str:
    """One printable line: every registered credential masked (and a URL's password), then runs of
    whitespace (line breaks included) become one space, every other control or format character
    is shown as U+XXXX, and the result is cut at `limit` characters."""
    if not isinstance(text, str):
        text = str(text)
    text = redact.redact(text)
    if len(text) > 4 * limit:  # do not walk megabytes we will cut anyway
        text = text[: 4 * limit]
        cut = True
    else:
        cut = False
    text = _SPACES.sub(" ", text).strip()
    if not text.isprintable():
        text = "".join(_visible(c) for c in text)
    if len(text) > limit or cut:
        return text[:limit].rstrip() + CUT
    return text


def terminal(text: str) -> str:
    """A human-readable report for a terminal: every registered credential masked (and a URL's
    password), its layout kept (spaces, tabs, line breaks), but every other control or format
    character shown as U+XXXX and each line cut at LINE_LIMIT. For text built from a server's data
    (status, reports); YAML and JSON escape such characters themselves."""
    text = redact.redact(text)
    if text.isprintable() and "\r" not in text and all(len(line) <= LINE_LIMIT for line in text.split("\n")):
        return text
    out = []
    for line in text.split("\n"):
        line = "".join(c if c == "\t" or c.isprintable() else _visible(c) for c in line)
        out.append(line if len(line) <= LINE_LIMIT else line[:LINE_LIMIT] + CUT)
    return "\n".join(out)


def bounded(value: Any, limit: int = MESSAGE_LIMIT) -> Any:
    """A copy of a JSON-shaped value fit for a report: every string (mapping keys included) with
    each registered credential masked, then cut at `limit` characters. Layout is kept (JSON and
    YAML escape what a terminal must not see). The walk keeps no recursion of its own beyond the
    data's, which the API client bounds (200 levels)."""
    if isinstance(value, str):
        text = redact.redact(value)
        return text if len(text) <= limit else text[:limit] + CUT
    if isinstance(value, dict):
        return {bounded(k, limit) if isinstance(k, str) else k: bounded(v, limit) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [bounded(v, limit) for v in value]
    return value


def field_name(key: object) -> str:
    """A key from an input file as an error message may quote it: only when it looks like a field
    name. A line of some other file (a password hash, a token) is never echoed."""
    if isinstance(key, str) and _IDENTIFIER.match(key):
        return key
    return "(a key that is not a field name)"
