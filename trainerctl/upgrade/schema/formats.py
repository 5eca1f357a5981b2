"""The string formats a CRD schema may name, checked as the API server checks them.

The API server keeps a string format only when it is one it supports (its name compared with
dashes removed: `date-time` is `datetime`), drops every other one, and then checks the value with
kube-openapi's format registry (k8s.io/kube-openapi/pkg/validation/strfmt). Each check here
follows that registry's function. Those whose Go library this module does not reproduce exactly
(`uri`, `email`, `hostname`, `ipv4`, `ipv6`, `cidr`) are `UNCHECKED`: a value in such a field is
listed as not checked, never as passing.
"""

from __future__ import annotations

import re
from typing import Callable

from trainerctl.upgrade.schema.goregex import compile_go

# The formats the API server keeps on a string (or untyped) schema, by normalised name.
SUPPORTED = frozenset({
    "bsonobjectid", "uri", "email", "hostname", "ipv4", "ipv6", "cidr", "mac", "uuid", "uuid3", "uuid4",
    "uuid5", "isbn", "isbn10", "isbn13", "creditcard", "ssn", "hexcolor", "rgbcolor", "byte", "password",
    "date", "duration", "datetime", "k8sshortname", "k8slongname",
})
UNCHECKED = frozenset({"uri", "email", "hostname", "ipv4", "ipv6", "cidr"})


def normalise(name: str) -> str:
    return name.replace("-", "")


def kept_format(schema_type: str | None, int_or_string: bool, fmt: str) -> str:
    """The format the API server keeps for this schema (StripUnsupportedFormatsPostProcessor), or ""."""
    if not fmt:
        return ""
    kind = None if int_or_string else (schema_type or "")
    if kind in (None, "", "string"):
        return fmt if normalise(fmt) in SUPPORTED else ""
    if kind == "integer":
        return fmt if fmt in ("int32", "int64") else ""
    if kind == "number":
        return fmt if fmt in ("float", "double") else ""
    return ""


def _go(pattern: str) -> Callable[[str], bool]:
    """A format's Go regular expression as a check, translated on first use (most runs need none)."""
    return lambda text: compile_go(pattern).search(text) is not None


_UUID = _go(r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$")
_UUID3 = _go(r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?3[0-9a-f]{3}-?[0-9a-f]{4}-?[0-9a-f]{12}$")
_UUID4 = _go(r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?4[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$")
_UUID5 = _go(r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?5[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$")
_HEXCOLOR = _go(r"^#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$")
_RGB = r"(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])"
_RGBCOLOR = _go(rf"^rgb\(\s*{_RGB}\s*,\s*{_RGB}\s*,\s*{_RGB}\s*\)$")
_BASE64 = _go(r"^(?:[A-Za-z0-9+\/]{4})*(?:[A-Za-z0-9+\/]{2}==|[A-Za-z0-9+\/]{3}=|[A-Za-z0-9+\/]{4})$")
_SSN = _go(r"^\d{3}[- ]?\d{2}[- ]?\d{4}$")
_ISBN10 = _go(r"^(?:[0-9]{9}X|[0-9]{10})$")
_ISBN13 = _go(r"^(?:[0-9]{13})$")
_CREDITCARD = _go(r"^(?:4[0-9]{12}(?:[0-9]{3})?|5[1-5][0-9]{14}|6(?:011|5[0-9][0-9])[0-9]{12}|3[47][0-9]{13}|"
                  r"3(?:0[0-5]|[68][0-9])[0-9]{11}|(?:2131|1800|35\d{3})\d{11})$")
_SHORT_NAME = _go(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_LONG_NAME = _go(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
# Go's `^([0-9]{2}):([0-9]{2}):([0-9]{2})(.[0-9]+)?(z|([+-][0-9]{2}:[0-9]{2}))$`, written for Python by
# hand because its groups are read (the translation keeps none).
_TIME_OF_DAY = re.compile(r"\A([0-9]{2}):([0-9]{2}):([0-9]{2})(?:[^\n][0-9]+)?(?:z|[+-][0-9]{2}:[0-9]{2})\Z")
# Go's `((\d+)\s*([A-Za-zµ]+))` (strfmt's durationMatcher), its groups read, so written by hand.
_DURATION_PART = re.compile(r"([0-9]+)[\t\n\f\r ]*([A-Za-zµ]+)")
_WHITESPACE_AND_MINUS = r"[\t\n\f\r -]+"  # Go's [\s-]+
_NOT_NUMBER = r"[^0-9]+"
_MAC_COLON = _go(r"^[0-9a-fA-F]{2}(?:(:)[0-9a-fA-F]{2})+$")
_MAC_DASH = _go(r"^[0-9a-fA-F]{2}(?:(-)[0-9a-fA-F]{2})+$")
_MAC_DOT = _go(r"^[0-9a-fA-F]{4}(?:\.[0-9a-fA-F]{4})+$")
_HEX = _go(r"^[0-9a-fA-F]*$")


def _days_in(month: int, year: int) -> int:
    if month == 2:
        return 29 if year % 4 == 0 and (year % 100 != 0 or year % 400 == 0) else 28
    return 30 if month in (4, 6, 9, 11) else 31


def is_date(text: str) -> bool:
    """Go's time.Parse("2006-01-02", text): four-digit year, two-digit month and day, a real day."""
    if len(text) != 10 or text[4] != "-" or text[7] != "-":
        return False
    year, month, day = text[0:4], text[5:7], text[8:10]
    if not (year.isascii() and year.isdigit() and month.isascii() and month.isdigit()
            and day.isascii() and day.isdigit()):
        return False
    return 1 <= int(month) <= 12 and 1 <= int(day) <= _days_in(int(month), int(year))


def is_date_time(text: str) -> bool:
    """strfmt.IsDateTime: a date, a `t`, a time of day; the text is split at every `t` and only
    the first two parts are looked at."""
    if len(text.encode("utf-8")) < 4:
        return False
    parts = _go_lower(text).split("t")
    if len(parts) < 2 or not is_date(parts[0]):
        return False
    match = _TIME_OF_DAY.search(parts[1])
    return bool(match) and match.group(1) <= "23" and match.group(2) <= "59" and match.group(3) <= "59"


def _go_lower(text: str) -> str:
    """strings.ToLower for what matters here (ASCII letters; other characters fail later anyway)."""
    return "".join(c.lower() if c.isascii() else c for c in text)


_UNITS = {"ns": 1, "us": 1_000, "µs": 1_000, "μs": 1_000, "ms": 1_000_000, "s": 10**9, "m": 60 * 10**9,
          "h": 3600 * 10**9}
_INT64 = 2**63 - 1


def _go_parse_duration(text: str) -> bool:
    """Whether Go's time.ParseDuration accepts the text."""
    s = text
    negative = False
    if s and s[0] in "+-":
        negative = s[0] == "-"
        s = s[1:]
    if s == "0":
        return True
    if not s:
        return False
    total = 0
    while s:
        if not (s[0] == "." or "0" <= s[0] <= "9"):
            return False
        i = 0
        while i < len(s) and "0" <= s[i] <= "9":
            i += 1
        whole = int(s[:i]) if i else 0
        if whole > 2**63:
            return False
        pre = i > 0
        s = s[i:]
        frac, scale, post = 0, 1, False
        if s.startswith("."):
            s = s[1:]
            j = 0
            overflow = False  # Go stops taking digits, as precise as it can be
            while j < len(s) and "0" <= s[j] <= "9":
                if not overflow:
                    following = frac * 10 + int(s[j])
                    if frac > _INT64 // 10 or following > 2**63:
                        overflow = True
                    else:
                        frac, scale = following, scale * 10
                j += 1
            post = j > 0
            s = s[j:]
        if not pre and not post:
            return False
        k = 0
        while k < len(s) and not (s[k] == "." or "0" <= s[k] <= "9"):
            k += 1
        unit = _UNITS.get(s[:k])
        if unit is None:
            return False
        s = s[k:]
        if whole > 2**63 // unit:
            return False
        value = whole * unit
        if frac:
            value += int(float(frac) * (float(unit) / float(scale)))
            if value > 2**63:
                return False
        total += value
        if total > 2**63:
            return False
    return total <= _INT64 or negative


_TIME_UNITS = (("ns", "nano"), ("us", "µs", "micro"), ("ms", "milli"), ("s", "sec"), ("m", "min"),
               ("h", "hr", "hour"), ("d", "day"), ("w", "wk", "week"))


def is_duration(text: str) -> bool:
    """strfmt.ParseDuration: Go's duration syntax, else any `<digits><unit>` inside the text."""
    if _go_parse_duration(text):
        return True
    ok = False
    for match in _DURATION_PART.finditer(text):
        if int(match.group(1)) > _INT64:
            return False  # strconv.Atoi fails, and so does the whole parse
        unit = _go_lower(match.group(2).strip())
        for variants in _TIME_UNITS:
            for i, variant in enumerate(variants):
                if (i == len(variants) - 1 and unit.startswith(variant)) or variant.casefold() == unit.casefold():
                    ok = True
    return ok


def _isbn(text: str, version: int) -> bool:
    s = re.sub(_WHITESPACE_AND_MINUS, "", text)
    if version == 10:
        if not _ISBN10(s):
            return False
        checksum = sum((i + 1) * (ord(s[i]) - 48) for i in range(9))
        checksum += 100 if s[9] == "X" else 10 * (ord(s[9]) - 48)
        return checksum % 11 == 0
    if not _ISBN13(s):
        return False
    checksum = sum((1, 3)[i % 2] * (ord(s[i]) - 48) for i in range(12))
    return (int(s[12]) - ((10 - (checksum % 10)) % 10)) == 0


def _credit_card(text: str) -> bool:
    s = re.sub(_NOT_NUMBER, "", text)
    if not _CREDITCARD(s):
        return False
    total, double = 0, False
    for ch in reversed(s):
        n = int(ch)
        if double:
            n *= 2
            total += n % 10 + 1 if n >= 10 else n
        else:
            total += n
        double = not double
    return total % 10 == 0


def _mac(text: str) -> bool:
    """net.ParseMAC: 6, 8 or 20 octets as xx:xx:..., xx-xx-... or xxxx.xxxx...."""
    if len(text) < 14 or not text.isascii():
        return False
    if text[2] in ":-":
        return (len(text) + 1) % 3 == 0 and (len(text) + 1) // 3 in (6, 8, 20) and \
            (_MAC_COLON(text) if text[2] == ":" else _MAC_DASH(text))
    if text[4] == ".":
        return (len(text) + 1) % 5 == 0 and 2 * (len(text) + 1) // 5 in (6, 8, 20) and _MAC_DOT(text)
    return False


CHECKS: dict[str, Callable[[str], bool]] = {
    "bsonobjectid": lambda s: len(s) == 24 and _HEX(s),
    "mac": _mac,
    "uuid": _UUID, "uuid3": _UUID3, "uuid4": _UUID4, "uuid5": _UUID5,
    "isbn": lambda s: _isbn(s, 10) or _isbn(s, 13), "isbn10": lambda s: _isbn(s, 10),
    "isbn13": lambda s: _isbn(s, 13),
    "creditcard": _credit_card,
    "ssn": lambda s: len(s.encode("utf-8")) == 11 and _SSN(s),
    "hexcolor": _HEXCOLOR, "rgbcolor": _RGBCOLOR, "byte": _BASE64, "password": lambda s: True,
    "date": is_date, "duration": is_duration, "datetime": is_date_time,
    "k8sshortname": lambda s: len(s.encode("utf-8")) <= 63 and _SHORT_NAME(s),
    "k8slongname": lambda s: len(s.encode("utf-8")) <= 253 and _LONG_NAME(s),
}
