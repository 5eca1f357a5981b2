"""Which existing custom resources set a field that the target CRD removes.

A removed field is pruned from stored objects as soon as the new schema is in place, so the
owners of these objects lose data silently unless they are told first.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Callable, Iterable

from trainerctl.upgrade.crd_diff import FIELD_REMOVED, FIELD_REQUIRED, Finding

# Findings whose impact depends on what live objects hold.
OBJECT_FINDINGS = (FIELD_REMOVED, FIELD_REQUIRED)

_SEGMENT = re.compile(r"\[\*\]|\.?([^.\[]+)")


@dataclass(frozen=True)
class Usage:
    crd: str
    kind: str
    namespace: str | None
    name: str
    path: str
    version: str | None = None
    # FIELD_REMOVED: the object sets the field (its value will be pruned);
    # FIELD_REQUIRED: the object lacks it (its next update will be rejected).
    finding: str = FIELD_REMOVED
    # The install replaces this object (the render has it) or prunes it (it carries the ownership
    # label): its own content wins, nothing of the user's is lost.
    replaced: bool = False

    @property
    def ref(self) -> str:
        return f"{self.namespace}/{self.name}" if self.namespace else self.name

    def to_dict(self) -> dict[str, Any]:
        out = {"crd": self.crd, "kind": self.kind, "namespace": self.namespace,
               "name": self.name, "path": self.path, "version": self.version, "finding": self.finding}
        if self.replaced:
            out["replacedByInstall"] = True
        return out


def split_path(path: str) -> list[str]:
    """`spec.env[*].name` -> ["spec", "env", "[*]", "name"]; `*` stands for any map key."""
    parts: list[str] = []
    for m in _SEGMENT.finditer(path):
        parts.append("[*]" if m.group(0) == "[*]" else m.group(1))
    return parts


def has_path(obj: Any, parts: list[str]) -> bool:
    """True when the object sets a value at the path (in any list item / map entry)."""
    if not parts:
        return True
    head, rest = parts[0], parts[1:]
    if head == "[*]":
        return isinstance(obj, list) and any(has_path(item, rest) for item in obj)
    if not isinstance(obj, dict):
        return False
    if head == "*":
        return any(has_path(v, rest) for v in obj.values())
    return head in obj and has_path(obj[head], rest)


def lacks_path(obj: Any, parts: list[str]) -> bool:
    """True when some instance of the parent exists but does not set the last segment."""
    if len(parts) == 1:
        return isinstance(obj, dict) and parts[0] not in obj
    head, rest = parts[0], parts[1:]
    if head == "[*]":
        return isinstance(obj, list) and any(lacks_path(item, rest) for item in obj)
    if not isinstance(obj, dict):
        return False
    if head == "*":
        return any(lacks_path(v, rest) for v in obj.values())
    return head in obj and lacks_path(obj[head], rest)


def _version_of(obj: dict) -> str | None:
    api_version = str(obj.get("apiVersion", ""))
    return api_version.rsplit("/", 1)[-1] if api_version else None


def find_usages(findings: Iterable[Finding], live_resources: dict[str, list[dict]],
                replaced: Callable[[dict], bool] = lambda obj: False) -> list[Usage]:
    """Objects that set a removed field or lack a newly required one.

    live_resources maps a CRD name (e.g. "trainjobs.trainer.kubeflow.org") to its objects.

    An object is matched against the removed paths of the version it was read at; schemas of
    other versions describe other shapes.
    """
    relevant: dict[str, list[Finding]] = {}
    for f in findings:
        if f.kind in OBJECT_FINDINGS and f.path:
            relevant.setdefault(f.crd, []).append(f)
    usages: list[Usage] = []
    for crd, objects in live_resources.items():
        for obj in objects:
            meta = obj.get("metadata") or {}
            version = _version_of(obj)
            for f in relevant.get(crd, []):
                if f.version and version and f.version != version:
                    continue
                parts = split_path(f.path)
                hit = has_path(obj, parts) if f.kind == FIELD_REMOVED else lacks_path(obj, parts)
                if hit:
                    usages.append(Usage(crd, str(obj.get("kind", "")), meta.get("namespace"),
                                        str(meta.get("name", "")), f.path, f.version, f.kind, replaced(obj)))
    return sorted(usages, key=lambda u: (u.crd, u.namespace or "", u.name, u.path))
