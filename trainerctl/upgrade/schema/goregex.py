"""Go regular expressions (RE2 syntax, as `regexp.Compile` reads them) as Python `re` patterns.

A CRD's `pattern` is matched by the API server with Go's regexp (unanchored, leftmost-first).
Python's `re` reads much of the same text differently: `$` also matches before a final newline,
`\\d`, `\\w` and `\\s` are Unicode classes, `x{,3}` is a repetition (in Go it is literal text),
`\\Z` means something else, and `\\pL` or `[[:alpha:]]` do not exist. So a pattern is parsed as
Go parses it and written again with explicit constructs only: every literal escaped, every class
as code point ranges, `^`/`$` as `\\A`/`\\Z` (or their multi-line forms), Go's ASCII `\\b`
as lookarounds, flags scoped to the atoms they apply to.

What has no faithful Python form (a Unicode script such as `\\p{Greek}`) raises Untranslatable:
the caller lists the pattern as not checked rather than guessing.
"""

from __future__ import annotations

import re
import sys
import unicodedata
from dataclasses import dataclass
from functools import lru_cache

MAX_RUNE = 0x10FFFF
_MAX_REPEAT = 1000  # Go refuses larger counts


class Untranslatable(ValueError):
    """The pattern uses Go syntax this translator does not reproduce exactly."""


_WORD = [(0x30, 0x39), (0x41, 0x5A), (0x5F, 0x5F), (0x61, 0x7A)]
_PERL = {
    "d": [(0x30, 0x39)],
    "s": [(0x09, 0x0A), (0x0C, 0x0D), (0x20, 0x20)],  # Go's \s: no \v
    "w": _WORD,
}
_POSIX = {
    "alnum": [(0x30, 0x39), (0x41, 0x5A), (0x61, 0x7A)],
    "alpha": [(0x41, 0x5A), (0x61, 0x7A)],
    "ascii": [(0x00, 0x7F)],
    "blank": [(0x09, 0x09), (0x20, 0x20)],
    "cntrl": [(0x00, 0x1F), (0x7F, 0x7F)],
    "digit": [(0x30, 0x39)],
    "graph": [(0x21, 0x7E)],
    "lower": [(0x61, 0x7A)],
    "print": [(0x20, 0x7E)],
    "punct": [(0x21, 0x2F), (0x3A, 0x40), (0x5B, 0x60), (0x7B, 0x7E)],
    "space": [(0x09, 0x0D), (0x20, 0x20)],
    "upper": [(0x41, 0x5A)],
    "word": _WORD,
    "xdigit": [(0x30, 0x39), (0x41, 0x46), (0x61, 0x66)],
}
_SIMPLE_ESCAPES = {"a": 7, "f": 12, "t": 9, "n": 10, "r": 13, "v": 11}
# Go's one-letter and two-letter general categories; "C" leaves out unassigned code points.
_CATEGORY_GROUPS = {"L": ("Lu", "Ll", "Lt", "Lm", "Lo"), "M": ("Mn", "Mc", "Me"), "N": ("Nd", "Nl", "No"),
                    "P": ("Pc", "Pd", "Ps", "Pe", "Pi", "Pf", "Po"), "S": ("Sm", "Sc", "Sk", "So"),
                    "Z": ("Zs", "Zl", "Zp"), "C": ("Cc", "Cf", "Co", "Cs")}
_CATEGORIES = {c for group in _CATEGORY_GROUPS.values() for c in group}


@dataclass
class _Flags:
    i: bool = False
    m: bool = False
    s: bool = False
    U: bool = False

    def copy(self) -> "_Flags":
        return _Flags(self.i, self.m, self.s, self.U)


def translate(pattern: str) -> str:
    """The Python `re` source that matches (with `search`) exactly where Go's regexp matches."""
    parser = _Parser(pattern)
    out = parser.alternation(_Flags())
    if parser.pos != len(pattern):
        raise Untranslatable(f"unexpected {pattern[parser.pos]!r} at offset {parser.pos}")
    return out


@lru_cache(maxsize=512)
def compile_go(pattern: str) -> re.Pattern:
    """The compiled translation (cached: a CRD repeats its patterns thousands of times)."""
    try:
        return re.compile(translate(pattern))
    except re.error as exc:  # a translation Python refuses: never guess a verdict
        raise Untranslatable(str(exc)) from None


def _ranges_source(ranges: list[tuple[int, int]], negate: bool) -> str:
    parts = []
    for lo, hi in _normalise(ranges):
        parts.append(_char(lo) if lo == hi else f"{_char(lo)}-{_char(hi)}")
    body = "".join(parts)
    if negate:
        return f"[^{body}]" if body else r"[\x00-\U0010FFFF]"
    return f"[{body}]" if body else r"(?!)"


def _char(code: int) -> str:
    return f"\\U{code:08x}" if code > 0xFFFF else f"\\u{code:04x}"


def _normalise(ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for lo, hi in sorted(ranges):
        if out and lo <= out[-1][1] + 1:
            out[-1] = (out[-1][0], max(out[-1][1], hi))
        else:
            out.append((lo, hi))
    return out


def _negate(ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out, low = [], 0
    for lo, hi in _normalise(ranges):
        if lo > low:
            out.append((low, lo - 1))
        low = hi + 1
    if low <= MAX_RUNE:
        out.append((low, MAX_RUNE))
    return out


@lru_cache(maxsize=64)
def _category_ranges(name: str) -> tuple[tuple[int, int], ...]:
    wanted = set(_CATEGORY_GROUPS.get(name, (name,)))
    if not wanted <= _CATEGORIES:
        raise Untranslatable(f"unknown Unicode class {name!r}")
    out: list[tuple[int, int]] = []
    for code in range(sys.maxunicode + 1):
        if unicodedata.category(chr(code)) in wanted:
            if out and out[-1][1] == code - 1:
                out[-1] = (out[-1][0], code)
            else:
                out.append((code, code))
    return tuple(out)


class _Parser:
    def __init__(self, text: str):
        self.text, self.pos = text, 0

    # -- helpers ------------------------------------------------------------------------------
    def peek(self, n: int = 0) -> str:
        i = self.pos + n
        return self.text[i] if i < len(self.text) else ""

    def take(self) -> str:
        ch = self.peek()
        if not ch:
            raise Untranslatable("unexpected end of pattern")
        self.pos += 1
        return ch

    def startswith(self, prefix: str) -> bool:
        return self.text.startswith(prefix, self.pos)

    # -- grammar ------------------------------------------------------------------------------
    def alternation(self, flags: _Flags) -> str:
        branches = [self.concatenation(flags)]
        while self.peek() == "|":
            self.pos += 1
            branches.append(self.concatenation(flags))
        return "|".join(branches)

    def concatenation(self, flags: _Flags) -> str:
        flags = flags.copy()  # a (?i) inside a group lasts to the end of the group
        out: list[str] = []
        while self.peek() and self.peek() not in "|)":
            if self.startswith("(?") and self._flag_group(flags):
                continue
            atom = self.atom(flags)
            if atom is None:
                continue
            out.append(self.repeat(atom, flags))
        return "".join(out)

    def _flag_group(self, flags: _Flags) -> bool:
        """`(?flags)` changes the flags for the rest of the group; `(?flags:...)` is an atom."""
        match = re.compile(r"\(\?([imsU]*)(?:-([imsU]*))?([:)])").match(self.text, self.pos)
        if not match or match.group(3) != ")":
            return False
        if not match.group(1) and not match.group(2):
            raise Untranslatable("empty flag group")
        for name in match.group(1):
            setattr(flags, name, True)
        for name in match.group(2) or "":
            setattr(flags, name, False)
        self.pos = match.end()
        return True

    def atom(self, flags: _Flags) -> str | None:
        ch = self.peek()
        if ch == "(":
            return self.group(flags)
        if ch == "[":
            return self.char_class(flags)
        if ch == ".":
            self.pos += 1
            return _ranges_source([(0, MAX_RUNE)] if flags.s else [(0, 9), (11, MAX_RUNE)], False)
        if ch == "^":
            self.pos += 1
            return "(?m:^)" if flags.m else r"\A"
        if ch == "$":
            self.pos += 1
            return "(?m:$)" if flags.m else r"\Z"
        if ch in "*+?":
            raise Untranslatable(f"missing argument to repetition operator {ch!r}")
        if ch == "{" and self._repeat_spec(self.pos) is not None:
            raise Untranslatable("missing argument to repetition operator")
        if ch == "\\":
            return self.escape(flags)
        self.pos += 1
        return self._literal(ord(ch), flags)

    def _literal(self, code: int, flags: _Flags) -> str:
        text = re.escape(chr(code))
        if flags.i and chr(code).lower() != chr(code).upper():
            return f"(?i:{text})"
        return text

    def group(self, flags: _Flags) -> str:
        self.pos += 1  # (
        inner_flags = flags
        if self.startswith("?"):
            match = re.compile(r"\?(?:P?<([A-Za-z0-9_]+)>|:|([imsU]*)(?:-([imsU]*))?:)").match(self.text, self.pos)
            if not match:
                raise Untranslatable(f"invalid or unsupported group syntax at offset {self.pos}")
            if match.group(2) is not None or match.group(3) is not None:
                inner_flags = flags.copy()
                for name in match.group(2) or "":
                    setattr(inner_flags, name, True)
                for name in match.group(3) or "":
                    setattr(inner_flags, name, False)
            self.pos = match.end()
        inner = self.alternation(inner_flags)
        if self.peek() != ")":
            raise Untranslatable("missing closing )")
        self.pos += 1
        return f"(?:{inner})"  # capturing or not, a match is a match

    def _repeat_spec(self, at: int) -> tuple[int, int | None, int] | None:
        """(min, max or None, end offset) of a `{n}`, `{n,}` or `{n,m}` at `at`; else None (literal)."""
        match = re.compile(r"\{([0-9]+)(,([0-9]*))?\}").match(self.text, at)
        if not match:
            return None
        low = int(match.group(1))
        high = low if match.group(2) is None else (int(match.group(3)) if match.group(3) else None)
        if low > _MAX_REPEAT or (high is not None and (high > _MAX_REPEAT or high < low)):
            raise Untranslatable("invalid repeat count")
        return low, high, match.end()

    def repeat(self, atom: str, flags: _Flags) -> str:
        ch = self.peek()
        if ch in ("*", "+", "?"):
            self.pos += 1
            op = ch
        elif ch == "{" and (spec := self._repeat_spec(self.pos)) is not None:
            low, high, self.pos = spec
            op = f"{{{low}}}" if high == low else f"{{{low},{'' if high is None else high}}}"
        else:
            return atom
        lazy = self.peek() == "?"
        if lazy:
            self.pos += 1
        if flags.U:
            lazy = not lazy
        nxt = self.peek()
        if nxt in ("*", "+", "?") or (nxt == "{" and self._repeat_spec(self.pos) is not None):
            raise Untranslatable("invalid nested repetition operator")
        return f"(?:{atom}){op}{'?' if lazy else ''}"

    # -- escapes ------------------------------------------------------------------------------
    def escape(self, flags: _Flags) -> str:
        self.pos += 1  # backslash
        ch = self.take()
        if ch == "Q":
            end = self.text.find("\\E", self.pos)
            literal = self.text[self.pos:] if end < 0 else self.text[self.pos:end]
            self.pos = len(self.text) if end < 0 else end + 2
            return "".join(self._literal(ord(c), flags) for c in literal)
        if ch == "A":
            return r"\A"
        if ch == "z":
            return r"\Z"
        if ch in "bB":
            word = _ranges_source(_WORD, False)
            boundary = f"(?:(?<={word})(?!{word})|(?<!{word})(?={word}))"
            return boundary if ch == "b" else f"(?!{boundary})"
        if ch in "dswDSW":
            ranges = _PERL[ch.lower()]
            return _ranges_source(ranges, ch.isupper())
        if ch in "pP":
            return _ranges_source(self._unicode_class(), ch == "P")
        code = self._escaped_code(ch)
        return self._literal(code, flags)

    def _escaped_code(self, ch: str) -> int:
        """The code point of a single-character escape (after the backslash and `ch`)."""
        if ch in _SIMPLE_ESCAPES:
            return _SIMPLE_ESCAPES[ch]
        if ch in "01234567":
            digits = ch
            if ch != "0" and not (self.peek().isascii() and self.peek().isdigit()):
                raise Untranslatable("backreferences are not supported")
            while len(digits) < 3 and self.peek() in tuple("01234567") and self.peek():
                digits += self.take()
            return int(digits, 8)
        if ch == "x":
            if self.peek() == "{":
                end = self.text.find("}", self.pos)
                if end < 0:
                    raise Untranslatable("invalid escape")
                hexa = self.text[self.pos + 1:end]
                self.pos = end + 1
            else:
                hexa = self.text[self.pos:self.pos + 2]
                self.pos += 2
            if not hexa or not re.fullmatch(r"[0-9A-Fa-f]+", hexa) or int(hexa, 16) > MAX_RUNE:
                raise Untranslatable("invalid escape")
            return int(hexa, 16)
        if ord(ch) < 0x80 and not ch.isalnum():
            return ord(ch)
        raise Untranslatable(f"invalid escape \\{ch}")

    def _unicode_class(self) -> list[tuple[int, int]]:
        if self.peek() == "{":
            end = self.text.find("}", self.pos)
            if end < 0:
                raise Untranslatable("invalid Unicode class")
            name = self.text[self.pos + 1:end]
            self.pos = end + 1
        else:
            name = self.take()
        negate = name.startswith("^")
        name = name[1:] if negate else name
        if name == "Any":
            ranges = [(0, MAX_RUNE)]
        else:
            ranges = list(_category_ranges(name))
        return _negate(ranges) if negate else ranges

    # -- classes ------------------------------------------------------------------------------
    def char_class(self, flags: _Flags) -> str:
        self.pos += 1  # [
        negate = self.peek() == "^"
        if negate:
            self.pos += 1
        ranges: list[tuple[int, int]] = []
        first = True
        while True:
            ch = self.peek()
            if not ch:
                raise Untranslatable("missing closing ]")
            if ch == "]" and not first:
                self.pos += 1
                break
            first = False
            if self.startswith("[:"):
                end = self.text.find(":]", self.pos + 2)
                name = self.text[self.pos + 2:end] if end >= 0 else ""
                posix_negate = name.startswith("^")
                name = name[1:] if posix_negate else name
                if end >= 0 and name in _POSIX:
                    self.pos = end + 2
                    ranges += _negate(_POSIX[name]) if posix_negate else _POSIX[name]
                    continue
            if ch == "\\" and self.peek(1) in tuple("dswDSWpP") and self.peek(1):
                self.pos += 2
                letter = self.text[self.pos - 1]
                if letter in "pP":
                    found = self._unicode_class()
                    ranges += _negate(found) if letter == "P" else found
                else:
                    perl = _PERL[letter.lower()]
                    ranges += _negate(perl) if letter.isupper() else perl
                continue
            low = self._class_char()
            if self.peek() == "-" and self.peek(1) not in ("]", ""):
                self.pos += 1
                high = self._class_char()
                if high < low:
                    raise Untranslatable("invalid character class range")
                ranges.append((low, high))
            else:
                ranges.append((low, low))
        source = _ranges_source(ranges, negate)
        return f"(?i:{source})" if flags.i else source

    def _class_char(self) -> int:
        ch = self.take()
        if ch != "\\":
            return ord(ch)
        nxt = self.take()
        if nxt in "AzbBQ":
            raise Untranslatable(f"\\{nxt} inside a character class")
        return self._escaped_code(nxt)
