"""What a run did, per object and per stage; rendered for humans or as JSON for pipelines."""

from __future__ import annotations

import dataclasses
from dataclasses import asdict, dataclass, field
from typing import Any

from trainerctl.cluster.manager.objects import Ref
from trainerctl.errors import TrainerctlError
from trainerctl.trust.serialize import Reported

ACTIONS = ("created", "configured", "unchanged", "recreated", "pruned", "deleted", "skipped", "failed")
CHANGES = ("created", "configured", "recreated", "pruned", "deleted")


@dataclass
class ObjectResult:
    kind: str
    name: str
    namespace: str
    group: str
    stage: str
    action: str
    message: str = ""
    took_over_from: list[str] = field(default_factory=list)

    @property
    def display(self) -> str:
        gk = f"{self.kind}.{self.group}" if self.group else self.kind
        return f"{gk} {self.namespace}/{self.name}" if self.namespace else f"{gk} {self.name}"

    @property
    def key(self) -> str:
        """The object's Ref key, as plans and inventories key it."""
        return Ref(self.group, self.kind, self.namespace, self.name).key

    def add_note(self, note: str) -> None:
        """One more thing said of the object, after what is said already (an empty note adds nothing)."""
        if note:
            self.message = f"{self.message}; {note}" if self.message else note


@dataclass
class StageResult:
    name: str
    seconds: float = 0.0
    objects: int = 0
    waited_seconds: float = 0.0


@dataclass
class Report(Reported):
    command: str
    dry_run: bool = False
    namespace: str = ""
    source: dict = field(default_factory=dict)
    objects: list[ObjectResult] = field(default_factory=list)
    stages: list[StageResult] = field(default_factory=list)
    seconds: float = 0.0
    error: str = ""
    upgrade: dict = field(default_factory=dict)  # upgrade-check report (issue 6), when it ran
    diagnosis: list[dict] = field(default_factory=list)  # why a wait failed: manager/diagnose.py, per object
    lock: dict = field(default_factory=dict)  # how the install lock was taken (lock.Acquired), when it was
    history: dict = field(default_factory=dict)  # the install history: the revision recorded, or what was kept

    def add(self, result: ObjectResult) -> None:
        self.objects.append(result)

    def counts(self) -> dict[str, int]:
        out = {a: 0 for a in ACTIONS}
        for o in self.objects:
            out[o.action] = out.get(o.action, 0) + 1
        return {k: v for k, v in out.items() if v}

    @property
    def changed(self) -> int:
        return sum(1 for o in self.objects if o.action in CHANGES)

    @property
    def failed(self) -> list[ObjectResult]:
        return [o for o in self.objects if o.action == "failed"]

    def to_dict(self) -> dict:
        return {
            "command": self.command,
            "dryRun": self.dry_run,
            "namespace": self.namespace,
            "source": self.source,
            "summary": {"changed": self.changed, **self.counts()},
            "seconds": round(self.seconds, 3),
            "stages": [{"name": s.name, "seconds": round(s.seconds, 3), "objects": s.objects,
                        "waitedSeconds": round(s.waited_seconds, 3)} for s in self.stages],
            "objects": [{k: v for k, v in asdict(o).items() if v or k == "namespace"} for o in self.objects],
            **({"upgrade": self.upgrade} if self.upgrade else {}),
            **({"diagnosis": self.diagnosis} if self.diagnosis else {}),
            **({"lock": self.lock} if self.lock else {}),
            **({"history": self.history} if self.history else {}),
            **({"error": self.error} if self.error else {}),
        }



    def summary_line(self) -> str:
        verb = "would be " if self.dry_run else ""
        parts = [f"{n} {verb}{a}" for a, n in self.counts().items()]
        if not parts:  # a run that failed did not find "nothing to do"; it stopped first
            parts = ["failed before any change"] if self.error else ["nothing to do"]
        return f"{self.command}: " + ", ".join(parts) + f" ({self.seconds:.1f}s)"

    def text(self, objects: bool = True) -> str:
        """Each object that changed (unless `objects` is False: a terminal saw each stage's
        counts instead), what else the run says, and its summary line."""
        lines = []
        for o in self.objects if objects else ():
            if o.action == "unchanged":
                continue
            suffix = f" ({o.message})" if o.message else ""
            lines.append(f"{o.display} {'would be ' if self.dry_run and o.action != 'failed' else ''}{o.action}{suffix}")
        findings = self.upgrade.get("findings") if self.upgrade else None
        if findings:
            lines.append(f"upgrade-check: {len(findings)} CRD change(s); run `trainerctl upgrade-check` for details")
        if self.history.get("message"):
            lines.append(f"history: {self.history['message']}")
        lines.append(self.summary_line())
        return "\n".join(lines) + "\n"


class RunFailed(TrainerctlError):
    """A run that stopped: carries the partial report so the CLI can still print what was done."""

    def __init__(self, message: str, report: Report, exit_code: int | None = None):
        super().__init__(message, exit_code)
        self.report = report
        self.upgrade_report = None  # the blocking upgrade report, for the CLI to print
        self.diagnoses: list = []  # manager/diagnose.py Diagnosis per object a wait gave up on


def source_dict(source: Any) -> dict:
    """What a run installs from, as its report and record hold it: a render's SourceInfo (its
    empty fields left out), or the mapping -f FILE gave."""
    if source is None:
        return {}
    if dataclasses.is_dataclass(source):
        return {k: v for k, v in dataclasses.asdict(source).items() if v not in (None, "")}
    return dict(source)
