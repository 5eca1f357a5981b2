"""The checks of settings: each takes a value as it was given and where it came from (a flag,
`trainerctl.yaml: key:`, an environment variable), and returns the value to use or raises one
InputError line naming that place.

What only the render can judge (image references, a registry, the `manager:` block) is checked
by the render's options as they are made (trainerctl.render.render_options), with the same origins.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any, Mapping, NamedTuple

from trainerctl import source
from trainerctl.errors import InputError
from trainerctl.owner_label import OwnerLabel
from trainerctl.source.validate import is_git_url
from trainerctl.trust.bounded_read import os_problem, shown_path
from trainerctl.trust.redact import redact

COMPONENTS = ("manifests", "runtimes", "imagestreams")
PLATFORMS = ("openshift", "kubernetes")
_DNS1123_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")


def text(value: str, where: str) -> str:
    """A string that says something (not empty, not only blanks)."""
    if not value.strip():
        raise InputError(f"{where} '': expected a value")
    return value


def file(value: str, where: str) -> str:
    """A file name that says something; whether it can be read is for its reader to say."""
    if not value.strip():
        raise InputError(f"{where} '': expected a file")
    return value


def directory(value: str, where: str) -> str:
    """A directory, or a path where one can be made: nothing on the way is a file."""
    text(value, where)
    try:
        existing = next((p for p in (Path(value), *Path(value).parents) if p.exists()), None)
    except OSError as exc:  # a name longer than the system allows, no permission to look, ...
        raise InputError(f"{where} {shown_path(value)}: {os_problem(exc)}") from None
    except ValueError:  # a NUL byte (only a file can hold one: argv cannot)
        raise InputError(f"{where} {shown_path(value)}: a path cannot hold a NUL byte") from None
    if existing is not None and not existing.is_dir():
        raise InputError(f"{where} {shown_path(value)}: {shown_path(str(existing))} is a file, not a directory")
    return value


def namespace(value: str, where: str = "--namespace") -> str:
    if not isinstance(value, str) or not _DNS1123_LABEL.match(value) or len(value) > 63:
        raise InputError(f"{where} {value!r}: expected a DNS-1123 label (lower case, digits, '-', at most 63)")
    return value


def channel(value: str, where: str) -> str:
    """A release channel's name (data/pins.yaml, read only when one is given)."""
    return source.channel(text(value, where), where).name


def overlay(value: str, where: str) -> str:
    """A folder inside manifests/: a relative path (leading slashes are dropped, as kustomize
    reads it under the tree) with no `..` and nothing unprintable, so no value, whoever wrote it,
    climbs out of the tree it names."""
    rel = value.strip("/") if isinstance(value, str) else ""
    if not rel or not rel.isprintable() or len(rel) > 1024 or ".." in rel.split("/"):
        shown = repr(value) if isinstance(value, str) and len(value) <= 200 else f"{repr(value)[:200]}…"
        raise InputError(f"{where} {shown}: expected a directory path inside manifests/ (no '..')")
    return value


def platform(value: str, where: str) -> str:
    if value not in PLATFORMS:
        raise InputError(f"{where} {value!r}: expected one of {', '.join(PLATFORMS)}")
    return value


def components(value, where: str) -> frozenset[str]:
    unknown = sorted(set(value) - set(COMPONENTS))
    if unknown or not value:
        shown = ", ".join(map(repr, unknown)) or "(none)"
        raise InputError(f"{where} {shown}: expected some of {', '.join(COMPONENTS)}")
    return frozenset(value)


def owner_label(value: str, where: str) -> OwnerLabel:
    return OwnerLabel.parse(value, where)


def pairs(value: list[str] | Mapping[str, str], where: str) -> dict[str, str]:
    """KEY=VALUE flags, or a mapping the settings file holds."""
    if isinstance(value, Mapping):
        return dict(value)
    out = {}
    for item in value:
        key, sep, val = item.partition("=")
        if not sep or not key:
            raise InputError(f"{where} {item!r}: expected KEY=VALUE")
        out[key] = val
    return out


def mirrors(value: list[str], where: str) -> tuple[str, ...]:
    """PREFIX=REPLACEMENT entries (what kustomize's remote loader reads them as)."""
    for item in value:
        prefix, sep, replacement = item.partition("=")
        if not sep or not prefix or not replacement:
            raise InputError(f"{where} {redact(item)!r}: expected PREFIX=REPLACEMENT")
    return tuple(value)


def seconds(value: float, where: str) -> float:
    if not math.isfinite(value) or value <= 0:
        raise InputError(f"{where} {value:g}: expected a positive number of seconds")
    return float(value)


def seconds_or_zero(value: float, where: str) -> float:
    if not math.isfinite(value) or value < 0:
        raise InputError(f"{where} {value:g}: expected a number of seconds, 0 or more")
    return float(value)


def count(value: float, where: str) -> int:
    """A whole number, 0 or more (read as a number: a flag's float, a file's number)."""
    if isinstance(value, bool) or not math.isfinite(value) or value < 0 or value != int(value) or value > 2**31 - 1:
        raise InputError(f"{where} {value:g}: expected a whole number, 0 or more")
    return int(value)


class Source(NamedTuple):
    """Where the manifests come from: a git URL or a local checkout (neither: a channel)."""

    url: str | None = None
    path: str | None = None

    @classmethod
    def check(cls, value: str | Mapping[str, Any], where: str) -> "Source | None":
        """`--source URL|PATH`, or the settings file's `source:` (its url or path; None when it
        holds neither, only a ref for the default channel's repository)."""
        if isinstance(value, Mapping):
            return cls(value.get("url"), value.get("path")) if value.get("url") or value.get("path") else None
        text(value, where)
        return cls(url=value) if is_git_url(value) else cls(path=value)
