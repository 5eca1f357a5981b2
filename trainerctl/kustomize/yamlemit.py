"""Writing YAML exactly as `kustomize build` prints it.

Each object goes through JSON and then go-yaml v2, so keys are sorted with go-yaml's "natural"
order, strings that would read back as something else are double-quoted, multi-line strings are
literal blocks and long plain scalars fold at 80 columns. The emitter is our own because
libyaml's style choices, reached through PyYAML, differ in the details (quote characters,
implicit resolution) from go-yaml v2's. The scalar writers are public for embedded_yaml.py, which
writes YAML as kyaml's encoder does (no folding).
"""

from __future__ import annotations

import math
import re

from trainerctl.kustomize import roundtrip
from trainerctl.kustomize.errors import KustomizeError
from trainerctl.kustomize.plainstyle import ANY_BREAK, analyze, has_nonprintable
from trainerctl.kustomize.yamlread import resolves_to_non_string_v2

TYPE_CHECKING = False  # typing costs a tenth of a kustomize run's start-up
if TYPE_CHECKING:
    from typing import Any

_BREAKS = "\r\n\x85\u2028\u2029"


def _is_printable(ch: str) -> bool:
    return not has_nonprintable(ch)


_ESCAPES = {
    "\0": "0", "\a": "a", "\b": "b", "\t": "t", "\n": "n", "\v": "v", "\f": "f",
    "\r": "r", "\x1b": "e", '"': '"', "\\": "\\", "\x85": "N", "\xa0": "_",
    "\u2028": "L", "\u2029": "P",
}

WIDTH = 80


class Writer:
    """Block-style emitter state: the output pieces and the current column."""

    __slots__ = ("out", "column")

    def __init__(self) -> None:
        self.out: list[str] = []
        self.column = 0

    def write(self, text: str) -> None:
        self.out.append(text)
        self.column += len(text)

    def newline(self, indent: int) -> None:
        self.out.append("\n" + " " * indent)
        self.column = indent


# Where libyaml may fold a plain scalar: a single space (none before it, a non-space after).
_FOLD_POINT = re.compile("(?<! ) (?=[^ ])")


def write_plain(w: Writer, value: str, indent: int, allow_breaks: bool) -> None:
    if not allow_breaks or w.column + len(value) <= WIDTH or " " not in value:
        w.write(value)
        return
    # Fold at a single space once past the width, as libyaml does: each line ends at the first
    # fold point where the column has passed the width (one search per line, not per space).
    start, column, out, search = 0, w.column, w.out, _FOLD_POINT.search
    pad = "\n" + " " * indent
    while True:
        m = search(value, max(start, start + WIDTH - column + 1))
        if m is None:
            break
        i = m.start()
        out.append(value[start:i])
        out.append(pad)
        column = indent
        start = i + 1
    out.append(value[start:])
    w.column = column + len(value) - start


def write_single(w: Writer, value: str, indent: int, allow_breaks: bool) -> None:
    """go-yaml's single-quoted writer: folds at a single space past the width; a line separator
    (U+2028, U+2029) is written as a line break, and the text after it starts at the
    indentation (spaces right after it are written where they fall)."""
    out = w.out
    out.append("'")
    column = w.column + 1
    spaces = breaks = whitespace = indention = False
    n = len(value)
    buf: list[str] = []
    for i, ch in enumerate(value):
        if ch == " ":
            if allow_breaks and not spaces and column > WIDTH and i != 0 and i != n - 1 \
                    and value[i + 1] != " ":
                out.append("".join(buf) + "\n" + " " * indent)
                buf = []
                column, whitespace, indention = indent, True, True
            else:
                buf.append(ch)
                column += 1
            spaces = True
        elif ch in _BREAKS:
            buf.append(ch)
            column, indention, breaks = 0, True, True
        else:
            if breaks:
                if not indention or column > indent or (column == indent and not whitespace):
                    buf.append("\n")
                    column = 0
                buf.append(" " * (indent - column))
                column, whitespace, indention = max(column, indent), True, True
            buf.append("''" if ch == "'" else ch)
            column += 2 if ch == "'" else 1
            spaces = breaks = indention = False
    out.append("".join(buf) + "'")
    w.column = column + 1


def _escape(ch: str) -> str:
    if ch in _ESCAPES:
        return "\\" + _ESCAPES[ch]
    o = ord(ch)
    if o <= 0xFF:
        return "\\x%02X" % o
    if o <= 0xFFFF:
        return "\\u%04X" % o
    return "\\U%08X" % o


_DOUBLE_ESCAPED = frozenset('"\\\ufeff' + _BREAKS)


def write_double(w: Writer, value: str, indent: int, allow_breaks: bool) -> None:
    w.write('"')
    spaces = False
    n = len(value)
    buf: list[str] = []
    col = w.column
    for i, ch in enumerate(value):
        if ch in _DOUBLE_ESCAPED or not ("\x20" <= ch <= "\x7e" or _is_printable(ch)):
            e = _escape(ch)
            buf.append(e)
            col += len(e)
            spaces = False
        elif ch == " ":
            if allow_breaks and not spaces and col > WIDTH and i != 0 and i != n - 1:
                w.write("".join(buf))
                buf = []
                w.newline(indent)
                col = indent
                if value[i + 1] == " ":
                    buf.append("\\")
                    col += 1
            else:
                buf.append(ch)
                col += 1
            spaces = True
        else:
            buf.append(ch)
            col += 1
            spaces = False
    w.write("".join(buf))
    w.write('"')


_LINES = re.compile("([\n\u2028\u2029])")
_NO_BREAK = "\x00"  # never in the output otherwise: go-yaml escapes NUL


def _write_literal(w: Writer, value: str, indent: int) -> None:
    hints = "|"
    if value[0] in " \n\x85\u2028\u2029":
        hints += "2"
    if value[-1] not in _BREAKS:
        hints += "-"
    elif len(value) == 1 or value[-2] in _BREAKS:
        hints += "+"
    pad = " " * indent  # before every line but an empty one
    if "\u2028" in value or "\u2029" in value:  # line separators break lines too
        text = "".join(part if i % 2 or not part else pad + part
                       for i, part in enumerate(_LINES.split(value)))
    elif "\n\n" in value or value[0] == "\n":
        text = "\n".join([pad + line if line else "" for line in value.split("\n")])
    else:
        text = pad + value.replace("\n", "\n" + pad)
        if value[-1] == "\n":
            text = text[:len(text) - indent]
    # A trailing break is left to whatever comes next, which starts with a line break anyway.
    if text.endswith("\n"):
        text = text[:-1]
    elif value[-1] in "\u2028\u2029":
        # After a line separator go-yaml goes on without a line break: dump drops the next one.
        text += _NO_BREAK
    w.out.append(hints + "\n" + text)
    w.column = indent + 1  # never at line start: the next key or item begins a new line


def go_float(f: float) -> str:
    """A float64 as kustomize prints it: JSON (integral values become ints), then Go's %g."""
    if math.isnan(f) or math.isinf(f):
        raise KustomizeError(f"json: unsupported value: {f}")
    from decimal import Decimal

    if f == int(f) and abs(f) < 1e21:
        # Go writes the shortest digits that read back as f, then zeros: beyond 2**53 that is
        # not int(f) (1.2345678901234567e19 is 12345678901234567000, not ...168). Read back as
        # YAML those digits are an integer only within int64 or uint64; beyond, a float again.
        digits = f"{Decimal(repr(f)):f}" if abs(f) > 2 ** 53 else str(int(f))
        if -(1 << 63) <= int(digits) < (1 << 64):
            return digits

    sign, digit_tuple, dexp = Decimal(repr(f)).as_tuple()
    digits = "".join(map(str, digit_tuple)).rstrip("0") or "0"
    dexp += len("".join(map(str, digit_tuple))) - len(digits)
    dp = len(digits) + dexp
    exp = dp - 1
    minus = "-" if sign else ""
    if exp < -4 or exp >= 6:  # strconv.FormatFloat(f, 'g', -1, 64) with shortest digits
        mant = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
        return f"{minus}{mant}e{'-' if exp < 0 else '+'}{abs(exp):02d}"
    if dp <= 0:
        return f"{minus}0.{'0' * -dp}{digits}"
    if dp >= len(digits):
        return minus + digits + "0" * (dp - len(digits))
    return f"{minus}{digits[:dp]}.{digits[dp:]}"


def scalar_text(value: Any) -> str | None:
    """Text of a non-string scalar, or None when `value` is a string."""
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return go_float(value)
    return None


def _style(s: str, key: bool) -> str:
    """go-yaml v2's requested style, then libyaml's downgrade: '' plain, "'", '"' or '|'."""
    a = analyze(s)
    if "\n" in s and not key:
        style = "|"
    elif resolves_to_non_string_v2(s):
        style = '"'
    else:
        style = ""
    if key and a.multiline:
        style = '"'
    if style == "" and (not a.block_plain or (not s and key)):
        style = "'"
    if style == "'" and not a.single:
        style = '"'
    if style == "|" and not a.block:
        style = '"'
    return style


_value_styles: dict[str, str] = {}


# Long values as written, by (value, column, indent): a build prints the same descriptions again
# and again (a namespaced and a cluster-scoped CRD share their schema), and folding them is the
# costly part of writing them.
_written: dict[tuple[str, int, int], tuple[str, int]] = {}
_MEMO_MIN = 64


def write_string(w: Writer, s: str, indent: int, key: bool) -> None:
    if "\x85" in s:
        s = roundtrip.nel_folded(s)
    if key:
        _write_styled(w, s, indent, _style(s, True), False)
        return
    memo = (s, w.column, indent) if len(s) >= _MEMO_MIN else None
    if memo is not None:
        done = _written.get(memo)
        if done is not None:
            w.out.append(done[0])
            w.column = done[1]
            return
    style = _value_styles.get(s)
    if style is None:
        style = _style(s, False)
        if len(_value_styles) < 200000:
            _value_styles[s] = style
    if memo is None:
        _write_styled(w, s, indent, style, True)
        return
    out = w.out
    start = len(out)
    _write_styled(w, s, indent, style, True)
    text = "".join(out[start:])
    del out[start:]
    out.append(text)
    if len(_written) < 20000:
        _written[memo] = (text, w.column)


def _write_styled(w: Writer, s: str, indent: int, style: str, allow_breaks: bool) -> None:
    if style == "":
        write_plain(w, s, indent, allow_breaks)
    elif style == "'":
        write_single(w, s, indent, allow_breaks)
    elif style == '"':
        write_double(w, s, indent, allow_breaks)
    else:
        _write_literal(w, s, indent)


def _key_less_sorted(keys: list[str]) -> list[str]:
    import functools

    return sorted(keys, key=functools.cmp_to_key(_go_key_cmp))


def _go_key_cmp(a: str, b: str) -> int:
    """go-yaml v2's keyList.Less for string keys, as a cmp function."""
    if a == b:
        return 0
    return -1 if _go_key_less(a, b) else 1


def _int64(n: int) -> int:
    """n as Go's int64 holds it (wrapped)."""
    return (n + (1 << 63)) % (1 << 64) - (1 << 63)


def _go_key_less(a: str, b: str) -> bool:
    # Go's unicode.IsDigit is category Nd (str.isdecimal; isdigit takes superscripts too), and a
    # digit's value is its code point minus '0' in an int64 that wraps: a key of any digits sorts.
    la, lb = len(a), len(b)
    i = 0
    while i < la and i < lb:
        ca, cb = a[i], b[i]
        if ca == cb:
            i += 1
            continue
        al, bl = ca.isalpha(), cb.isalpha()
        if al and bl:
            return ca < cb
        if al or bl:
            return bl
        an = bn = 0
        if ca == "0" or cb == "0":
            j = i - 1
            while j >= 0 and a[j].isdecimal():
                if a[j] != "0":
                    an = bn = 1
                    break
                j -= 1
        ai = i
        while ai < la and a[ai].isdecimal():
            an = _int64(an * 10 + ord(a[ai]) - 48)
            ai += 1
        bi = i
        while bi < lb and b[bi].isdecimal():
            bn = _int64(bn * 10 + ord(b[bi]) - 48)
            bi += 1
        if an != bn:
            return an < bn
        if ai != bi:
            return ai < bi
        return ca < cb
    return la < lb


_SIMPLE_KEY = re.compile(r"^[a-z][a-zA-Z]*\Z")
# Key tuples seen (most objects share their shapes) -> their keys in go-yaml's order, each with
# its text as written ("key:").
_sorted_cache: dict[tuple, list[tuple[str, str]]] = {}


def _sorted_items(d: dict) -> list[tuple[str, str]]:
    keys = tuple(d)
    cached = _sorted_cache.get(keys)
    if cached is None:
        # Lower-initial keys of letters only sort like plain strings; others need go-yaml's order.
        if all(_SIMPLE_KEY.match(k) for k in keys):
            ordered = sorted(keys)
        else:
            ordered = _key_less_sorted(list(keys))
        cached = [(k, _key_text(k)) for k in ordered]
        if len(_sorted_cache) < 50000:
            _sorted_cache[keys] = cached
    return cached


# Plain keys that need no analysis: the overwhelmingly common case in Kubernetes objects.
_PLAIN_SAFE = re.compile(r"^[A-Za-z_/][A-Za-z0-9_./-]*\Z")
_key_cache: dict[str, str] = {}


def _key_text(k: str) -> str | None:
    """The key as written, with its colon; None for a key go-yaml writes as a complex key (`? `):
    one with a line break or longer than 128 bytes."""
    cached = _key_cache.get(k)
    if cached is not None:
        return cached or None
    if "\x85" in k or len(k) > 170 and _json_length(k) > 1024:
        # kustomize's last step reads its JSON as YAML, where such a key is no simple key.
        raise KustomizeError(f"key {k[:40]!r}...: a key with U+0085 or longer than 1024 characters "
                             "as JSON: kubectl's YAML writer fails on it")
    if _PLAIN_SAFE.match(k) and not resolves_to_non_string_v2(k) and len(k) <= 128:
        text = k + ":"
    elif len(k.encode("utf-8", "surrogatepass")) > 128 or ANY_BREAK.search(k):
        text = ""
    else:
        w = Writer()
        write_string(w, k, 0, key=True)
        text = "".join(w.out) + ":"
    _key_cache[k] = text
    return text or None


def _json_length(k: str) -> int:
    """The length of `k` as Go's encoding/json quotes it."""
    import json

    return len(json.dumps(k, ensure_ascii=False).replace("<", "\\u003c").replace(">", "\\u003e")
               .replace("&", "\\u0026").replace("\u2028", "\\u2028").replace("\u2029", "\\u2029"))


# The emitters below are the hot loop of every build's output. Writer.column is kept only where
# it is read: a string that may fold reads it, and every path that writes one sets it first.


def _emit_mapping(w: Writer, d: dict, indent: int, first_inline: bool) -> None:
    """A block mapping whose keys start at column `indent`.

    `first_inline` means the cursor already sits where the first key goes (after "- ").
    """
    out = w.out
    append = out.append
    newline = _NEWLINES[indent] if indent < len(_NEWLINES) else "\n" + " " * indent
    plain_get = _plain_values.get
    sep = "" if first_inline else newline
    for k, kt in _sorted_items(d):
        v = d[k]
        cls = v.__class__
        if not kt:
            _emit_complex_key(w, k, v, indent, sep, newline)
        elif cls is str:  # the common case, inline: a plain string that fits
            plain = plain_get(v)
            if plain is None:
                plain = _plain_value(v)
            column = indent + len(kt)
            if plain and len(v) + column < WIDTH:
                append(f"{sep}{kt} {v}")
            else:
                append(f"{sep}{kt} ")
                w.column = column + 1
                write_string(w, v, indent + 2, key=False)
        elif cls is dict and v:
            append(sep + kt)
            _emit_mapping(w, v, indent + 2, False)
        elif cls is list and v:
            append(sep + kt)
            # Sequences inside mappings are not indented (libyaml's "indentless" sequences).
            _emit_sequence(w, v, indent, False)
        else:
            append(sep + kt)
            w.column = indent + len(kt)
            _emit_value(w, v, indent, True)
        sep = newline


def _emit_complex_key(w: Writer, k: str, v: Any, indent: int, sep: str, newline: str) -> None:
    """`? key` then `: value`, each written as a sequence item's content is."""
    w.out.append(sep + "? ")
    w.column = indent + 2
    write_string(w, k, indent + 2, key=False)
    w.out.append(newline + ":")
    w.column = indent + 1
    _emit_value(w, v, indent, False)


def _emit_sequence(w: Writer, seq: list, indent: int, first_inline: bool) -> None:
    out = w.out
    append = out.append
    newline = _NEWLINES[indent] if indent < len(_NEWLINES) else "\n" + " " * indent
    plain_get = _plain_values.get
    sep = "" if first_inline else newline
    for item in seq:
        cls = item.__class__
        if cls is dict and item:
            append(sep + "- ")
            _emit_mapping(w, item, indent + 2, True)
        elif cls is str:
            plain = plain_get(item)
            if plain is None:
                plain = _plain_value(item)
            if plain and len(item) + indent + 1 < WIDTH:
                append(f"{sep}- {item}")
            else:
                append(sep + "- ")
                w.column = indent + 2
                write_string(w, item, indent + 2, key=False)
        else:
            append(sep + "-")
            w.column = indent + 1
            _emit_value(w, item, indent, False)
        sep = newline


_NEWLINES = ["\n" + " " * i for i in range(64)]
# Strings written as they are after "key: " while they fit the line: plain-safe, and reading
# back as strings.
_plain_values: dict[str, bool] = {}


def _plain_value(v: str) -> bool:
    plain = bool(_PLAIN_SAFE.match(v)) and not resolves_to_non_string_v2(v)
    if len(_plain_values) < 200000:
        _plain_values[v] = plain
    return plain


def _emit_value(w: Writer, v: Any, indent: int, in_mapping: bool) -> None:
    """Emit `v` after a "key:" (in_mapping) or a "-" indicator at `indent`, with w.column set."""
    out = w.out
    if v.__class__ is str:
        plain = _plain_values.get(v)
        if plain is None:
            plain = _plain_value(v)
        if plain and len(v) + w.column < WIDTH:
            out.append(" " + v)
        else:
            out.append(" ")
            w.column += 1
            write_string(w, v, indent + 2, key=False)
    elif isinstance(v, dict):
        if not v:
            out.append(" {}")
        elif in_mapping:
            _emit_mapping(w, v, indent + 2, first_inline=False)
        else:
            out.append(" ")
            _emit_mapping(w, v, indent + 2, first_inline=True)
    elif isinstance(v, list):
        if not v:
            out.append(" []")
        elif in_mapping:
            # Sequences inside mappings are not indented (libyaml's "indentless" sequences).
            _emit_sequence(w, v, indent, first_inline=False)
        else:
            out.append(" ")
            _emit_sequence(w, v, indent + 2, first_inline=True)
    elif isinstance(v, str):  # a str subclass
        out.append(" ")
        w.column += 1
        write_string(w, v, indent + 2, key=False)
    else:
        text = scalar_text(v)
        if text is None:
            raise KustomizeError(f"cannot encode value of type {type(v).__name__}")
        out.append(" " + text)


def dump(obj: Any) -> str:
    """One document, exactly as `kustomize build` prints it (ends with a newline)."""
    w = Writer()
    if isinstance(obj, dict) and obj:
        _emit_mapping(w, obj, 0, first_inline=True)
    elif isinstance(obj, list) and obj:
        _emit_sequence(w, obj, 0, first_inline=True)
    elif isinstance(obj, str):
        write_string(w, obj, 0, key=False)
    elif isinstance(obj, dict):
        w.write("{}")
    elif isinstance(obj, list):
        w.write("[]")
    else:
        w.write(scalar_text(obj) or "")
    # A block scalar leaves its last line break to what follows; here that is the end.
    text = "".join(w.out) + "\n"
    return text.replace(_NO_BREAK + "\n", "") if _NO_BREAK in text else text


def dump_all(objs: list[Any]) -> str:
    """Documents joined by `---` lines, as kustomize writes a ResMap."""
    return "---\n".join(dump(o) for o in objs)
