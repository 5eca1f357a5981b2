"""Reading one field of a server object by its declared type, or naming why it cannot be read.

A view is built through a `Cursor` over the object's JSON: each accessor takes a key, checks the
value's type (and an integer's bounds, a time's zone), and returns it, or raises `Unreadable`
naming the object, the field's path and what was expected. JSON null is read as absent, as the
API's Go decoder reads it.
"""

from __future__ import annotations

import datetime as _dt
import re
from typing import Any

from trainerctl.errors import EXIT_PREFLIGHT, TrainerctlError
from trainerctl.trust.safe_text import clean

INT32 = 2**31 - 1
INT64 = 2**63 - 1

TIME = "an RFC 3339 time with a zone (e.g. 2026-08-21T09:40:12Z)"
MICRO_TIME = "an RFC 3339 time with a zone and microseconds (e.g. 2026-08-21T09:40:12.000000Z)"
# metav1.Time and metav1.MicroTime: a zone is required; Go's parser takes any fraction for both.
_TIME = re.compile(r"(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(?:([Zz])|([+-])(\d{2}):(\d{2}))", re.ASCII)
# Kubernetes' name rules (DNS-1123), for the kinds whose names end up in paths and queries.
LABEL_NAME = re.compile(r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?")
SUBDOMAIN_NAME = re.compile(r"(?=.{1,253}\Z)[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
DNS_LABEL = "a Kubernetes name (DNS-1123 label: lower-case letters, digits and '-', at most 63)"
DNS_SUBDOMAIN = "a Kubernetes name (DNS-1123 subdomain: lower-case letters, digits, '-' and '.', at most 253)"

_PLAIN_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")
_MISSING = object()


class Unreadable(TrainerctlError):
    """A server object that does not fit the shape trainerctl reads it by. Where a command can go
    on (status, a diagnosis, a support bundle) it reports the line and skips the object; where it
    cannot (the install lock) the command ends with it (exit 3)."""

    exit_code = EXIT_PREFLIGHT

    def __init__(self, kind: str, name: str, field: str, expected: str, got: Any = _MISSING, hint: str = ""):
        self.kind, self.name, self.field, self.expected, self.got = kind, name, field, expected, got
        shown = "" if got is _MISSING else f", got {shown_value(got)}"
        super().__init__(f"unreadable {kind} {name or '(without a name)'}: {field}: expected {expected}{shown}"
                         + (f"; {hint}" if hint else ""))

    def hinted(self, hint: str) -> "Unreadable":
        """The same line with what it means for the command (and what to do) after it."""
        return Unreadable(self.kind, self.name, self.field, self.expected, self.got, hint)


def shown_value(value: Any) -> str:
    """A value as an error line quotes it: short, one line, never megabytes or 5,000 digits."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        digits = int(value.bit_length() * 0.30103) + 1
        return str(value) if digits <= 24 else f"a number of about {digits} digits"
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, str):
        return repr(clean(value, 60)) if len(value) <= 60 else repr(clean(value[:60], 60) + "…")
    if isinstance(value, list):
        return f"a list of {len(value)}"
    if isinstance(value, dict):
        return "a mapping"
    return type(value).__name__


def parse_time(text: str) -> _dt.datetime | None:
    """An RFC 3339 time with its zone (metav1.Time, metav1.MicroTime); None when it is not one."""
    match = _TIME.fullmatch(text) if isinstance(text, str) else None
    if match is None:
        return None
    year, month, day, hour, minute, second, fraction, utc, sign, zh, zm = match.groups()
    try:
        zone = _dt.timezone.utc if utc else _dt.timezone(
            (1 if sign == "+" else -1) * _dt.timedelta(hours=int(zh), minutes=int(zm)))
        return _dt.datetime(int(year), int(month), int(day), int(hour), int(minute), int(second),
                            int((fraction or "0")[:6].ljust(6, "0")), tzinfo=zone)
    except ValueError:  # month 13, a zone of 24 hours or more
        return None


def object_name(raw: Any) -> str:
    """'namespace/name' (or 'name') of a raw object for messages, whatever its shape."""
    meta = raw.get("metadata") if isinstance(raw, dict) else None
    if not isinstance(meta, dict):
        return ""
    name, namespace = meta.get("name"), meta.get("namespace")
    name = clean(name, 120) if isinstance(name, str) else ""
    if isinstance(namespace, str) and namespace:
        return f"{clean(namespace, 80)}/{name}"
    return name


class Cursor:
    """One mapping inside an object, and the path to it (for messages)."""

    __slots__ = ("kind", "name", "data", "path")

    def __init__(self, kind: str, name: str, data: dict, path: str = ""):
        self.kind, self.name, self.data, self.path = kind, name, data, path

    @classmethod
    def of(cls, kind: str, raw: Any, name: str | None = None) -> "Cursor":
        """The top of an object, which must be a mapping; `name`: for an answer that is no object
        with metadata (the API server's /version), what messages call it."""
        if not isinstance(raw, dict):
            raise Unreadable(kind, name or "", "the object", "a mapping", raw)
        return cls(kind, object_name(raw) if name is None else name, raw)

    def where(self, key: str | int) -> str:
        if isinstance(key, int):
            return f"{self.path}[{key}]"
        if not _PLAIN_KEY.fullmatch(key):  # an annotation key, say: quoted, so the path stays readable
            return f"{self.path}[{clean(repr(key), 120)}]"
        return f"{self.path}.{key}" if self.path else key

    def fail(self, key: str | int, expected: str, value: Any = _MISSING) -> Unreadable:
        return Unreadable(self.kind, self.name, self.where(key), expected, value)

    def has(self, key: str) -> bool:
        return self.data.get(key) is not None

    # -- scalars -------------------------------------------------------------------------------
    def string(self, key: str, default: str = "", *, required: bool = False, rule: re.Pattern | None = None,
               expected: str = "") -> str:
        """A string; `required`: present and non-empty; `rule`: a name rule it must match."""
        value = self.data.get(key)
        if value is None:
            if required:
                raise self.fail(key, expected or "a non-empty string")
            return default
        if not isinstance(value, str) or (required and not value) or (rule is not None and not rule.fullmatch(value)):
            raise self.fail(key, expected or ("a non-empty string" if required else "a string"), value)
        return value

    def text(self, key: str) -> str:
        """Free text a server wrote (a message, a reason), as every message and report shows
        server text: one printable line, credentials masked, cut at MESSAGE_LIMIT (safe_text.clean)."""
        return clean(self.string(key))

    def integer(self, key: str, low: int, high: int, default: int | None = None) -> int | None:
        value = self.data.get(key)
        if value is None:
            return default
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise self.fail(key, f"an integer {low}..{high}", value)
        return value

    def int_or_string(self, key: str, low: int, high: int, expected: str) -> int | str | None:
        """An IntOrString (a port number or name): an integer low..high, or a string."""
        value = self.data.get(key)
        if isinstance(value, int) and not isinstance(value, bool):
            return self.integer(key, low, high)
        return self.string(key, expected=expected) if value is not None else None

    def boolean(self, key: str, default: bool = False) -> bool:
        value = self.data.get(key)
        if value is None:
            return default
        if not isinstance(value, bool):
            raise self.fail(key, "true or false", value)
        return value

    def time(self, key: str, expected: str = TIME) -> _dt.datetime | None:
        value = self.data.get(key)
        if value is None or value == "":  # a zero metav1.Time is written as null, older servers wrote ""
            return None
        parsed = parse_time(value)
        if parsed is None:
            raise self.fail(key, expected, value)
        return parsed

    def micro_time(self, key: str) -> _dt.datetime | None:
        return self.time(key, MICRO_TIME)

    # -- structures -------------------------------------------------------------------------------
    def mapping(self, key: str) -> "Cursor":
        """A nested mapping (empty when absent)."""
        value = self.data.get(key)
        if value is None:
            return Cursor(self.kind, self.name, {}, self.where(key))
        if not isinstance(value, dict):
            raise self.fail(key, "a mapping", value)
        return Cursor(self.kind, self.name, value, self.where(key))

    def items(self, key: str) -> list[Any]:
        """A list whose items the caller reads one by one (each its own Cursor or line)."""
        value = self.data.get(key)
        if value is None:
            return []
        if not isinstance(value, list):
            raise self.fail(key, "a list of mappings", value)
        return value

    def mappings(self, key: str) -> list["Cursor"]:
        """A list of mappings (empty when absent)."""
        value = self.data.get(key)
        if value is None:
            return []
        if not isinstance(value, list):
            raise self.fail(key, "a list of mappings", value)
        where = self.where(key)
        out = []
        for i, item in enumerate(value):
            if not isinstance(item, dict):
                raise Unreadable(self.kind, self.name, f"{where}[{i}]", "a mapping", item)
            out.append(Cursor(self.kind, self.name, item, f"{where}[{i}]"))
        return out

    def strings(self, key: str) -> tuple[str, ...]:
        value = self.data.get(key)
        if value is None:
            return ()
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise self.fail(key, "a list of strings", value)
        return tuple(value)

    def string_map(self, key: str) -> dict[str, str]:
        value = self.data.get(key)
        if value is None:
            return {}
        if not isinstance(value, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
            raise self.fail(key, "a mapping of strings", value)
        return dict(value)
