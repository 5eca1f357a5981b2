"""The texts one line of a controller's log holds, whatever its format, for a reader of causes.

Controllers log through zap (one JSON object per line, the error
under "error", its quotes escaped), klog (`E0101 12:00:00.000000 1 reflector.go:204] "Failed to
watch" err="failed to list ...: User \\"system:...\\" cannot list ..."`, values Go-quoted) or plain
text, and an error may quote another error inside it. So a line yields itself, then, level by
level, what it wraps: a JSON object's string fields, or the line with one level of backslash
escapes undone and each quoted value (klog's `key="value"`, a cut JSON line's `"key":"value"`)
unquoted. A pattern that names a cause is then looked for in each, unescaped as the
component wrote it. The lines come as the diagnosis reads them (diagnose.log_lines: printable,
masked, cut at safe_text.MESSAGE_LIMIT): a log is the server's text.
"""

from __future__ import annotations

import json
import re

DEPTH = 3  # levels of wrapping undone (a JSON field holding a Go-quoted error is two)
# Fields of a zap line that never hold a cause.
_NOT_MESSAGES = frozenset({"ts", "level", "caller", "stacktrace", "logger"})
# klog's key="value", and a JSON line's "key":"value" (a line cut short parses no more, but the
# fields before the cut are whole).
_QUOTED = re.compile(r'(?:(?:^|\s)[A-Za-z_][\w.-]*=|"[A-Za-z_][\w.-]*":)"((?:[^"\\]|\\.)*)"')
_ESCAPE = re.compile(r"\\(u[0-9a-fA-F]{4}|x[0-9a-fA-F]{2}|[\"\\/bfnrt'])")
_SIMPLE = {'"': '"', "\\": "\\", "/": "/", "'": "'", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}


def _unescaped(match: re.Match) -> str:
    code = match.group(1)
    if code[0] in "ux":
        return chr(int(code[1:], 16))
    return _SIMPLE[code]


def _wrapped(text: str) -> list[str]:
    """What one level of wrapping holds: a JSON object's string fields, else the text unescaped."""
    stripped = text.strip()
    if stripped.startswith("{") and stripped.endswith("}"):
        try:
            doc = json.loads(stripped)
        except ValueError:  # cut, or not JSON after all: its escapes are undone below
            doc = None
        if isinstance(doc, dict):
            return [v for k, v in doc.items() if isinstance(v, str) and k not in _NOT_MESSAGES]
    unescaped = _ESCAPE.sub(_unescaped, text)
    values = [_ESCAPE.sub(_unescaped, m.group(1)) for m in _QUOTED.finditer(text)]
    return ([unescaped] if unescaped != text else []) + [v for v in values if v]


def texts(line: str) -> list[str]:
    """The line, then what it wraps, level by level, each text once."""
    out: list[str] = []
    level = [line]
    for _ in range(DEPTH + 1):
        nested: list[str] = []
        for text in level:
            if text not in out:
                out.append(text)
                nested.extend(_wrapped(text))
        level = nested
    return out
