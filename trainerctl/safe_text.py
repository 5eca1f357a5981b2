"""Text from outside made safe to print: one line, no control characters, a bounded length.

An API server's error message, git's stderr, an exec plugin's message, a key read from a file:
each may hold terminal escape sequences (ANSI colours, OSC 8 links or OSC 52 clipboard writes),
line breaks that forge extra `error:` lines, bidirectional-override characters, or megabytes.
`clean` is the one place such text is made printable; every error line passes it once more on
its way out (trainerctl.stdio).
"""

from __future__ import annotations

import re
import unicodedata

# Server and tool messages are cut here; the full text is never needed to act on an error.
MESSAGE_LIMIT = 1000
# The whole `error:` line.
LINE_LIMIT = 4000

_SPACES = re.compile(r"[ \t\r\n\v\f\u2028\u2029\x85]+")
_IDENTIFIER = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.\-/]{0,62}$")


def _visible(char: str) -> str:
    category = unicodedata.category(char)
    if category[0] == "C" or category in ("Zl", "Zp"):
        return f"U+{ord(char):04X}"  # as kubectl shows them (cleanANSIEscapeCodes)
    return char


def clean(text: str, limit: int = MESSAGE_LIMIT) -> str:
    """One printable line: runs of whitespace (line breaks included) become one space, every other
    control or format character is shown as U+XXXX, and the result is cut at `limit` characters."""
    if not isinstance(text, str):
        text = str(text)
    if len(text) > 4 * limit:  # do not walk megabytes we will cut anyway
        text = text[: 4 * limit]
        cut = True
    else:
        cut = False
    text = _SPACES.sub(" ", text).strip()
    if not text.isprintable():
        text = "".join(_visible(c) for c in text)
    if len(text) > limit or cut:
        return text[:limit].rstrip() + " …(cut)"
    return text


def terminal(text: str) -> str:
    """A human-readable report for a terminal: its layout kept (spaces, tabs, line breaks), but
    every other control or format character shown as U+XXXX and each line cut at LINE_LIMIT. For
    text built from a server's data (status, reports); YAML and JSON escape such characters
    themselves."""
    if text.isprintable() and "\r" not in text and all(len(line) <= LINE_LIMIT for line in text.split("\n")):
        return text
    out = []
    for line in text.split("\n"):
        line = "".join(c if c == "\t" or c.isprintable() else _visible(c) for c in line)
        out.append(line if len(line) <= LINE_LIMIT else line[:LINE_LIMIT] + " …(cut)")
    return "\n".join(out)


def field_name(key: object) -> str:
    """A key from an input file as an error message may quote it: only when it looks like a field
    name. A line of some other file (a password hash, a token) is never echoed."""
    if isinstance(key, str) and _IDENTIFIER.match(key):
        return key
    return "(a key that is not a field name)"
