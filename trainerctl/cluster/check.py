"""`check`: every check install makes before its first write, all of them listed, nothing applied.

It runs the list install runs (trainer/checklist.py): where install stops at the first refusal,
check goes on so one run shows everything to fix, and its exit code is the one install's first
refusal would have (3; 4 for a held lock). With --images its first check asks whether every image
exists at its registry (the list's `images`, which install runs with --check-images). A read the user may not make is a finding, not a crash; the access review is
asked for everything an install may do, not only what this one would change.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from trainerctl.cluster.client.client import Cluster
from trainerctl.cluster.manager.plan import ensure_namespace
from trainerctl.cluster.manager.report import source_dict
from trainerctl.cluster.manager.session import Session
from trainerctl.cluster.trainer import checklist
from trainerctl.cluster.trainer.install_options import InstallOptions
from trainerctl.cluster.trainer.preflight import FAIL, OK, WARN, Finding
from trainerctl.cluster.trainer.verify import pods
from trainerctl.cluster.trainer.verify.owned import LABEL
from trainerctl.cluster.trainer.verify.runtimes import rendered
from trainerctl.trust.serialize import Reported


@dataclass
class CheckReport(Reported):
    namespace: str
    findings: list[Finding] = field(default_factory=list)

    @property
    def failed(self) -> list[Finding]:
        return [f for f in self.findings if f.failed]

    def to_dict(self) -> dict:
        return {"namespace": self.namespace, "ok": not self.failed,
                "findings": [f.to_dict() for f in self.findings]}



    def text(self) -> str:
        lines = []
        for f in self.findings:
            lines.append(f"{f.status.upper() if f.status != OK else 'ok':<5} {f.check}: {f.message}")
            lines.extend(f"        {d}" for d in f.details)
        warned = sum(1 for f in self.findings if f.status == WARN)
        lines.append(f"check: {len(self.failed)} failed, {warned} warning(s), "
                     f"{len(self.findings) - len(self.failed) - warned} ok")
        return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class Check:
    """The check action: `options`, the install's options it checks for (prune, the upgrade check,
    the hand-overs asked, the image check); `job_namespace` (check --job-namespace): whether that
    namespace admits the pods of each rendered runtime (verify's namespace tier)."""

    options: InstallOptions
    job_namespace: str | None = None

    def run(self, session: Session, objects: list[dict], source: Any = None) -> CheckReport:
        """`source`: what the objects were rendered from (a SourceInfo, or -f's mapping)."""
        source = source_dict(source)
        report = CheckReport(session.namespace)
        found = report.findings
        facts = checklist.Facts(session, ensure_namespace(objects, session.namespace, session.owner_label),
                                self.options, target=source.get("trainer_version"), thorough=True)
        facts.read_ahead()
        found.extend(finding for _, finding in checklist.run(facts))
        if self.job_namespace:
            found.extend(_namespace_admission(session.cluster, objects, self.job_namespace))
        return report


def _namespace_admission(cluster: Cluster, objects: list[dict], namespace: str) -> list[Finding]:
    results = pods.check(cluster, rendered(objects, namespace), namespace, {LABEL: "check"})
    return [Finding("namespace-admission", OK if r.status == OK else FAIL, f"{r.check}: {r.message}", r.details)
            for r in results]
