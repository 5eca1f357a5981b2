"""Which existing custom resources set a field that the target CRD removes.

A removed field is pruned from stored objects as soon as the new schema is in place, so the
owners of these objects lose data silently unless they are told first.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Iterable

from trainerctl.upgrade.crd_diff import FIELD_REMOVED, Finding

_SEGMENT = re.compile(r"\[\*\]|\.?([^.\[]+)")


@dataclass(frozen=True)
class Usage:
    crd: str
    kind: str
    namespace: str | None
    name: str
    path: str
    version: str | None = None

    @property
    def ref(self) -> str:
        return f"{self.namespace}/{self.name}" if self.namespace else self.name

    def to_dict(self) -> dict[str, Any]:
        return {"crd": self.crd, "kind": self.kind, "namespace": self.namespace,
                "name": self.name, "path": self.path, "version": self.version}


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


def _version_of(obj: dict) -> str | None:
    api_version = str(obj.get("apiVersion", ""))
    return api_version.rsplit("/", 1)[-1] if api_version else None


def find_usages(findings: Iterable[Finding], live_resources: dict[str, list[dict]]) -> list[Usage]:
    """live_resources maps a CRD name (e.g. "trainjobs.trainer.kubeflow.org") to its objects.

    An object is matched against the removed paths of the version it was read at; schemas of
    other versions describe other shapes.
    """
    removed: dict[str, list[Finding]] = {}
    for f in findings:
        if f.kind == FIELD_REMOVED and f.path:
            removed.setdefault(f.crd, []).append(f)
    usages: list[Usage] = []
    for crd, objects in live_resources.items():
        for obj in objects:
            meta = obj.get("metadata") or {}
            version = _version_of(obj)
            for f in removed.get(crd, []):
                if f.version and version and f.version != version:
                    continue
                if has_path(obj, split_path(f.path)):
                    usages.append(Usage(crd, str(obj.get("kind", "")), meta.get("namespace"),
                                        str(meta.get("name", "")), f.path, f.version))
    return sorted(usages, key=lambda u: (u.crd, u.namespace or "", u.name, u.path))
