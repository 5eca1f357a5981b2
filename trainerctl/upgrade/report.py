"""The upgrade-check result: what changes per CRD, who is affected, and whether it blocks."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from trainerctl.upgrade.crd_diff import (
    CRD_REMOVED,
    FIELD_REMOVED,
    FIELD_REQUIRED,
    SERVED_VERSION_REMOVED,
    STORED_VERSION_UNSERVED,
    TYPE_CHANGED,
    VALIDATION_ADDED,
    VALIDATION_CHANGED,
    VALIDATION_REMOVED,
    Finding,
)
from trainerctl.serialize import json_text, yaml_text
from trainerctl.upgrade.usage import Usage

_LABELS = {
    CRD_REMOVED: "CRD dropped from the target",
    SERVED_VERSION_REMOVED: "served version removed",
    STORED_VERSION_UNSERVED: "stored version no longer served",
    FIELD_REMOVED: "field removed",
    FIELD_REQUIRED: "field now required",
    TYPE_CHANGED: "field type changed",
    VALIDATION_ADDED: "validation rule added",
    VALIDATION_CHANGED: "validation rule changed",
    VALIDATION_REMOVED: "validation rule removed",
}


@dataclass
class UpgradeReport:
    findings: list[Finding] = field(default_factory=list)
    usages: list[Usage] = field(default_factory=list)
    compared: list[str] = field(default_factory=list)  # CRD names present on both sides

    def usages_of(self, finding: Finding) -> list[Usage]:
        return [u for u in self.usages
                if u.crd == finding.crd and u.path == finding.path and u.finding == finding.kind
                and (finding.version is None or u.version in (None, finding.version))]

    def is_blocking(self, finding: Finding) -> bool:
        # A removed field that live objects set means their data is pruned: block.
        return finding.blocking or (finding.kind == FIELD_REMOVED and bool(self.usages_of(finding)))

    @property
    def blocking_findings(self) -> list[Finding]:
        return [f for f in self.findings if self.is_blocking(f)]

    @property
    def blocking(self) -> bool:
        return bool(self.blocking_findings)

    @property
    def exit_code(self) -> int:
        return 1 if self.blocking else 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "blocking": self.blocking,
            "compared": list(self.compared),
            "findings": [dict(f.to_dict(), blocking=self.is_blocking(f),
                              usedBy=[u.ref for u in self.usages_of(f)] if f.kind == FIELD_REMOVED else None,
                              lackedBy=[u.ref for u in self.usages_of(f)] if f.kind == FIELD_REQUIRED else None)
                         for f in self.findings],
            "usages": [u.to_dict() for u in self.usages],
        }

    def _shown(self) -> dict[str, Any]:
        """to_dict() as -o json and -o yaml show it: a finding's empty fields left out."""
        data = self.to_dict()
        data["findings"] = [{k: v for k, v in f.items() if v is not None} for f in data["findings"]]
        return data

    def to_json(self) -> str:
        return json_text(self._shown())

    def to_yaml(self) -> str:
        return yaml_text(self._shown())

    def text(self) -> str:
        lines: list[str] = []
        by_crd: dict[str, list[Finding]] = {}
        for f in self.findings:
            by_crd.setdefault(f.crd, []).append(f)
        for crd in sorted(by_crd):
            lines.append(crd)
            for f in by_crd[crd]:
                lines.extend(_finding_lines(f, self.is_blocking(f), self.usages_of(f)))
        unchanged = [c for c in self.compared if c not in by_crd]
        for crd in unchanged:
            lines.append(f"{crd}: no changes")
        if not self.compared and not self.findings:
            lines.append("no installed CRDs to compare (fresh install)")
        blocking = self.blocking_findings
        if blocking:
            lines.append(f"result: BLOCKED by {len(blocking)} change(s); "
                         "install refuses this upgrade unless --allow-breaking")
        else:
            lines.append("result: nothing blocks the upgrade")
        return "\n".join(lines) + "\n"


def _finding_lines(f: Finding, blocking: bool, usages: list[Usage]) -> list[str]:
    tag = "BLOCKING " if blocking else ""
    where = []
    if f.version:
        where.append(f.version)
    if f.path:
        where.append(f.path)
    head = f"  {tag}{_LABELS.get(f.kind, f.kind)}"
    if where:
        head += ": " + " ".join(where)
    out = [head, f"      {f.detail}"]
    if f.rule:
        if f.old_rule:
            out.append(f"      was:  {f.old_rule}")
        out.append(f"      rule: {f.rule}")
    if f.message:
        out.append(f"      message: {f.message}")
    if f.kind == FIELD_REMOVED:
        if usages:
            out.append(f"      used by {len(usages)} object(s):")
            out.extend(f"        {u.kind} {u.ref}" for u in usages)
        else:
            out.append("      used by no existing object")
    if f.kind == FIELD_REQUIRED and usages:
        out.append(f"      missing in {len(usages)} object(s); their next update is rejected:")
        out.extend(f"        {u.kind} {u.ref}" for u in usages)
    return out
