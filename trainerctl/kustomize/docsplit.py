"""A resource file's documents as kustomize finds them: kyaml's ByteReader splits the text itself
before any YAML parser sees it.

It turns every CRLF into LF, cuts at each line that starts with `---` (kyaml's regular expression
`\\n---.*\\n`, so not at the file's first line), refuses a separator line with more than a
comment after the `---` ("invalid document separator"), gives back the line break the cut took
from every part but the last, and reads only the first YAML document of each part: what follows
a `...` in the same part is never read.
"""

from __future__ import annotations

import re

from trainerctl.kustomize.errors import KustomizeError

_SEPARATOR = re.compile(r"\n---.*\n")
# Go's strings.TrimSpace: Unicode white space (not Python's str.strip set, which adds \x1c-\x1f).
_GO_SPACE = " \t\n\v\f\r\x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008" \
            "\u2009\u200a\u2028\u2029\u202f\u205f\u3000"


def split(text: str) -> list[tuple[str, int]]:
    """The parts of `text` kyaml decodes, each with the number of lines before it."""
    if "\r" in text:
        text = text.replace("\r\n", "\n")
    if "\n---" not in text:
        return [(text, 0)]
    parts: list[tuple[str, int]] = []
    start = line = 0
    for m in _SEPARATOR.finditer(text):
        rest = m.group()[4:].strip(_GO_SPACE)
        if rest and rest[0] != "#":
            raise KustomizeError(f"line {text.count(chr(10), 0, m.start()) + 2}: invalid document "
                                 f"separator {m.group().strip(_GO_SPACE)!r} (kustomize allows only "
                                 "a comment after ---)")
        parts.append((text[start:m.start()] + "\n", line))
        line += text.count("\n", start, m.end())
        start = m.end()
    parts.append((text[start:], line))
    return parts
