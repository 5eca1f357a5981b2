"""The upgrade-check result: what changes per CRD, who is affected, and whether it blocks."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from trainerctl.upgrade.crd_diff import (
    CRD_REMOVED,
    FIELD_REMOVED,
    FIELD_REQUIRED,
    NOT_CHECKED,
    OBJECT_REJECTED,
    OBJECTS_UNREAD,
    SERVED_VERSION_REMOVED,
    STORED_VERSION_UNSERVED,
    TYPE_CHANGED,
    VALIDATION_ADDED,
    VALIDATION_CHANGED,
    VALIDATION_REMOVED,
    Finding,
)
from trainerctl.trust.serialize import Reported
from trainerctl.upgrade.stored import Rejection
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
    OBJECT_REJECTED: "stored value rejected by the target",
    OBJECTS_UNREAD: "objects not checked",
    NOT_CHECKED: "not checked",
}


@dataclass(frozen=True)
class Advice:
    """What to do about one existing object that blocks the upgrade (the release's policy says)."""

    kind: str
    ref: str
    state: str  # e.g. "finished (Complete)", "suspended", "running"
    action: str
    notes: tuple[str, ...] = ()  # what converting it to the target's API changes

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "object": self.ref, "state": self.state, "action": self.action,
                "conversion": list(self.notes)}


@dataclass
class UpgradeReport(Reported):
    findings: list[Finding] = field(default_factory=list)
    usages: list[Usage] = field(default_factory=list)
    compared: list[str] = field(default_factory=list)  # CRD names present on both sides
    rejections: list[Rejection] = field(default_factory=list)  # values the target's schema rejects
    advice: list[Advice] = field(default_factory=list)
    # Each blocking object converted to the target's API (the release's policy; not serialized).
    migrated: list[Any] = field(default_factory=list, repr=False)

    def rejections_of(self, finding: Finding) -> list[Rejection]:
        if finding.kind != OBJECT_REJECTED:
            return []
        return [r for r in self.rejections
                if (r.crd, r.version, r.path) == (finding.crd, finding.version, finding.path)]

    def usages_of(self, finding: Finding) -> list[Usage]:
        return [u for u in self.usages
                if u.crd == finding.crd and u.path == finding.path and u.finding == finding.kind
                and (finding.version is None or u.version in (None, finding.version))]

    def is_blocking(self, finding: Finding) -> bool:
        # A removed field that live objects set means their data is pruned: block (unless the
        # install replaces those objects with its own).
        return finding.blocking or (finding.kind == FIELD_REMOVED and
                                    any(not u.replaced for u in self.usages_of(finding)))

    def first_blocking_line(self) -> str:
        """The first blocking change in one line, naming the object and field when there is one."""
        first = self.blocking_findings[0]
        rejected = self.rejections_of(first)
        if rejected:
            return f"{rejected[0].line()} (under the target's {first.crd} {first.version})"
        users = [u for u in self.usages_of(first) if not u.replaced] if first.kind == FIELD_REMOVED else []
        if users:
            return (f"{users[0].kind} {users[0].ref} sets {first.path}, which the target's {first.crd} "
                    f"{first.version} no longer has (its value would be pruned)")
        where = " ".join(p for p in (first.version, first.path) if p)
        return f"{first.crd} {first.kind} {where}".rstrip()

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
                              lackedBy=[u.ref for u in self.usages_of(f)] if f.kind == FIELD_REQUIRED else None,
                              rejectedIn=sorted({r.ref for r in self.rejections_of(f)}) or None)
                         for f in self.findings],
            "usages": [u.to_dict() for u in self.usages],
            "rejected": [r.to_dict() for r in self.rejections],
            "advice": [a.to_dict() for a in self.advice],
        }

    def shown(self) -> dict[str, Any]:
        """to_dict() as -o json and -o yaml show it: a finding's empty fields left out."""
        data = self.to_dict()
        data["findings"] = [{k: v for k, v in f.items() if v is not None} for f in data["findings"]]
        return data



    def text(self) -> str:
        lines: list[str] = []
        by_crd: dict[str, list[Finding]] = {}
        for f in self.findings:
            by_crd.setdefault(f.crd, []).append(f)
        for crd in sorted(by_crd):
            lines.append(crd)
            for f in by_crd[crd]:
                lines.extend(_finding_lines(f, self.is_blocking(f), self.usages_of(f), self.rejections_of(f)))
        unchanged = [c for c in self.compared if c not in by_crd]
        for crd in unchanged:
            lines.append(f"{crd}: no changes")
        if not self.compared and not self.findings:
            lines.append("no installed CRDs to compare (fresh install)")
        if self.advice:
            lines.append("what to do with each object that blocks the upgrade:")
            for a in self.advice:
                lines.append(f"  {a.kind} {a.ref}: {a.state}: {a.action}")
                lines.extend(f"      converted: {note}" for note in a.notes)
        blocking = self.blocking_findings
        if blocking:
            lines.append(f"result: BLOCKED by {len(blocking)} change(s); "
                         "install refuses this upgrade unless --allow-breaking")
        else:
            lines.append("result: nothing blocks the upgrade")
        return "\n".join(lines) + "\n"


def _finding_lines(f: Finding, blocking: bool, usages: list[Usage], rejected: list[Rejection]) -> list[str]:
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
            out.extend(f"        {u.kind} {u.ref}" + (" (the install replaces or prunes it)" if u.replaced else "") for u in usages)
        else:
            out.append("      used by no existing object")
    if rejected:
        out.extend(f"        {r.line()}" for r in rejected)
    if f.kind == FIELD_REQUIRED and usages:
        out.append(f"      missing in {len(usages)} object(s); their next update is rejected:")
        out.extend(f"        {u.kind} {u.ref}" for u in usages)
    return out
