"""JSON as Go's encoding/json writes it, which kustomize's output and hashes follow: keys
sorted, `<`, `>`, `&` and U+2028/U+2029 escaped, floats with the shortest digits (exponent form
below 1e-6 and from 1e21), text that is not UTF-8 as U+FFFD; `pretty` as MarshalIndent with two
spaces."""

from __future__ import annotations

import re

from trainerctl.kustomize.yamlemit import scalar_text

TYPE_CHECKING = False  # typing costs a tenth of a kustomize run's start-up
if TYPE_CHECKING:
    from typing import Any

_ESCAPES = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t",
            "<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028",
            "\u2029": "\\u2029"}
_SPECIAL = re.compile('["\\\\\x00-\x1f<>&\u2028\u2029\ud800-\udfff]')


def string(s: str) -> str:
    def esc(m: re.Match) -> str:
        ch = m.group()
        if "\ud800" <= ch <= "\udfff":  # a lone surrogate is not UTF-8: Go writes U+FFFD
            return "\ufffd"
        return _ESCAPES.get(ch) or "\\u%04x" % ord(ch)

    return '"' + _SPECIAL.sub(esc, s) + '"'


def float_text(f: float) -> str:
    """encoding/json's float64: shortest digits, exponent form below 1e-6 or from 1e21."""
    if f != f or f in (float("inf"), float("-inf")):
        raise ValueError(f"json: unsupported value: {f}")
    a = abs(f)
    if a != 0 and (a < 1e-6 or a >= 1e21):
        text = repr(f)
        mant, _, exp = text.partition("e")
        sign = exp[0] if exp[0] in "+-" else "+"
        digits = exp.lstrip("+-").lstrip("0") or "0"
        return f"{mant}e{sign}{digits if sign == '-' else digits.zfill(2)}"
    from decimal import Decimal  # only for floats: rare, and slow to import

    text = format(Decimal(repr(f)), "f")
    return text.rstrip("0").rstrip(".") if "." in text else text


def dumps(value: Any, pretty: bool = False, level: int = 0) -> str:
    if isinstance(value, float):
        return float_text(value)
    if isinstance(value, str):
        return string(value)
    if not isinstance(value, (dict, list)):
        text = scalar_text(value)  # null, booleans and integers read the same in YAML
        if text is None:
            raise ValueError(f"json: unsupported type: {type(value).__name__}")
        return text
    if isinstance(value, dict):
        if not value:
            return "{}"
        items = [(string(k), dumps(value[k], pretty, level + 1)) for k in sorted(value)]
        if not pretty:
            return "{" + ",".join(f"{k}:{v}" for k, v in items) + "}"
        pad = "\n" + "  " * (level + 1)
        return "{" + ",".join(f"{pad}{k}: {v}" for k, v in items) + "\n" + "  " * level + "}"
    if not value:
        return "[]"
    items = [dumps(v, pretty, level + 1) for v in value]
    if not pretty:
        return "[" + ",".join(items) + "]"
    pad = "\n" + "  " * (level + 1)
    return "[" + ",".join(pad + v for v in items) + "\n" + "  " * level + "]"
