"""JSON values as the API server's Go code sees them, and the comparisons it makes on them.

Go decodes a custom resource's numbers as int64 when the text is an integer that fits, else as
float64; kube-openapi then compares values with reflect's rules (an int64 is "convertible" to a
float64, and to a string, as a code point). These helpers give Python values the same meaning,
so a verdict never depends on Python's `True == 1` or its unbounded integers.
"""

from __future__ import annotations

import math
import re
import struct
from typing import Any

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1
_JSON_INT = float(2**53 - 1)


def kind(value: Any) -> str:
    """The Go kind of a decoded JSON value: null, bool, int, float, string, slice or map."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int" if INT64_MIN <= value <= INT64_MAX else "float"
    if isinstance(value, float):
        return "float"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "slice"
    if isinstance(value, dict):
        return "map"
    return "unknown"


def as_float(value: Any) -> float:
    try:
        return float(value)
    except OverflowError:
        return math.copysign(math.inf, value)


def go_value(value: Any) -> Any:
    """An int beyond int64 is a float64 in Go; everything else is itself."""
    return as_float(value) if kind(value) == "float" and not isinstance(value, float) else value


def float_to_int64(value: float) -> int:
    """Go's int64(f) on amd64: truncation, and the 'integer indefinite' for what does not fit."""
    if math.isnan(value) or not (-(2.0**63) <= value < 2.0**63):
        return INT64_MIN
    return int(value)


def format_float(value: float) -> str:
    """strconv.FormatFloat(f, 'f', -1, 64): the shortest digits that read back as f (Python's repr
    finds the same ones), written without an exponent."""
    if math.isinf(value) or math.isnan(value):
        return "+Inf" if value > 0 else ("-Inf" if value < 0 else "NaN")
    text = repr(value)
    sign, text = ("-", text[1:]) if text.startswith("-") else ("", text)
    mantissa, _, exponent = text.partition("e")
    whole, _, fraction = mantissa.partition(".")
    digits, point = whole + fraction, len(whole) + int(exponent or 0)
    if point <= 0:
        whole, fraction = "0", "0" * -point + digits
    elif point >= len(digits):
        whole, fraction = digits + "0" * (point - len(digits)), ""
    else:
        whole, fraction = digits[:point], digits[point:]
    whole, fraction = whole.lstrip("0") or "0", fraction.rstrip("0")
    return sign + whole + (f".{fraction}" if fraction else "")


def is_json_integer(value: float) -> bool:
    """swag.IsFloat64AJSONInteger: integral (within a relative 1e-9) and within ±(2^53-1)."""
    if math.isnan(value) or math.isinf(value) or value < -_JSON_INT or value > _JSON_INT:
        return False
    whole = float(math.floor(abs(value)))
    rounded = math.copysign(whole + 1.0 if abs(value) - whole >= 0.5 else whole, value)  # math.Round
    if value == rounded:
        return True
    if rounded == 0:
        return False
    diff = abs(value - rounded)
    return diff == 0 or diff < 1e-9 * abs(rounded)


def text_of_number(value: Any) -> str:
    """How kube-openapi writes a number before parsing it back as the format's Go type."""
    return str(value) if kind(value) == "int" else format_float(as_float(value))


_GO_INT = re.compile(r"[+-]?[0-9]+")


def parses_as(text: str, go_type: str) -> bool:
    """strconv.ParseInt(text, 10, 32|64) or strconv.ParseFloat(text, 32) succeeding."""
    if go_type in ("int32", "int64"):
        if not _GO_INT.fullmatch(text):
            return False
        low, high = (INT32_MIN, INT32_MAX) if go_type == "int32" else (INT64_MIN, INT64_MAX)
        return low <= int(text) <= high
    if go_type == "float32":
        try:
            number = float(text)
            narrowed = struct.unpack("f", struct.pack("f", number))[0]  # the nearest float32, as ParseFloat rounds
        except (OverflowError, ValueError):
            return False
        return not (math.isinf(narrowed) and not math.isinf(number))
    return True


def deep_equal(a: Any, b: Any) -> bool:
    """reflect.DeepEqual on decoded JSON: an int64 never equals a float64, true never equals 1."""
    ka, kb = kind(a), kind(b)
    if ka != kb:
        return False
    if ka == "slice":
        return len(a) == len(b) and all(deep_equal(x, y) for x, y in zip(a, b))
    if ka == "map":
        return a.keys() == b.keys() and all(deep_equal(a[k], b[k]) for k in a)
    if ka == "float":
        return as_float(a) == as_float(b)
    return a == b


def _int_to_string(value: int) -> str:
    """Go's string(rune(i)) as reflect converts an int64 to a string."""
    if not (INT32_MIN <= value <= INT32_MAX) or not (0 <= value <= 0x10FFFF) or 0xD800 <= value <= 0xDFFF:
        return "\ufffd"
    return chr(value)


def enum_matches(value: Any, allowed: Any) -> bool:
    """kube-openapi's enum check of one allowed value: equal, or equal once `value` is converted
    to the allowed value's Go type (reflect.Value.Convert)."""
    if allowed is None or value is None:
        return False
    if deep_equal(value, allowed):
        return True
    have, want = kind(value), kind(allowed)
    if have == "int" and want == "float":
        return float(value) == as_float(allowed)
    if have == "int" and want == "string":
        return _int_to_string(value) == allowed
    if have == "float" and want == "int":
        return float_to_int64(as_float(value)) == allowed
    return False
