"""Upgrade safety: what replacing the installed CRDs with a target render's CRDs would break.

`check` is pure (plain dicts in, report out); `check_cluster` reads the live side from the API
server. install calls one of them before applying and refuses a blocking report unless told to.
"""

from __future__ import annotations

from trainerctl.errors import EXIT_PREFLIGHT, TrainerctlError
from trainerctl.upgrade.crd_diff import Finding, diff_crds, is_crd
from trainerctl.upgrade.live import list_custom_objects, read_live_crds
from trainerctl.upgrade.report import UpgradeReport
from trainerctl.upgrade.usage import Usage, find_usages

__all__ = ["Finding", "Usage", "UpgradeBlocked", "UpgradeReport", "check", "check_cluster", "guard"]


class UpgradeBlocked(TrainerctlError):
    """install refuses the upgrade; .report says why (print it before the error line). A refusal
    before anything is applied, like every other preflight check: exit 3."""

    exit_code = EXIT_PREFLIGHT

    def __init__(self, report: "UpgradeReport"):
        first = report.blocking_findings[0]
        where = " ".join(p for p in (first.version, first.path) if p)
        super().__init__(f"upgrade blocked by {len(report.blocking_findings)} CRD change(s), first: {first.crd} "
                         f"{first.kind} {where}; run `trainerctl upgrade-check` for the report, "
                         "or pass --allow-breaking")
        self.report = report


def check(live_crds: list[dict], target_crds: list[dict], live_resources: dict[str, list[dict]]) -> UpgradeReport:
    """live_resources maps a CRD name to the objects of that CRD currently on the cluster."""
    live_crds = [c for c in live_crds if is_crd(c)]
    target_names = {c["metadata"]["name"] for c in target_crds if is_crd(c)}
    findings = diff_crds(live_crds, target_crds)
    return UpgradeReport(
        findings=findings,
        usages=find_usages(findings, live_resources),
        compared=sorted(c["metadata"]["name"] for c in live_crds if c["metadata"]["name"] in target_names),
    )


def check_cluster(cluster, target_objects: list[dict], *, owner_label: str | None = None) -> UpgradeReport:
    """Read the installed CRDs the target defines (plus, with owner_label, CRDs we installed
    before that the target no longer has); list objects only where a field is removed.

    cluster: a trainerctl.cluster.client.client.Cluster (connect()).
    """
    live_crds = read_live_crds(cluster, target_objects, owner_label=owner_label)
    findings = diff_crds(live_crds, target_objects)
    live_resources = list_custom_objects(cluster, live_crds, findings)
    return check(live_crds, target_objects, live_resources)


def guard(cluster, target_objects: list[dict], *, owner_label: str | None = None,
          allow_breaking: bool = False) -> UpgradeReport:
    """What install calls before applying anything: the report, or UpgradeBlocked."""
    report = check_cluster(cluster, target_objects, owner_label=owner_label)
    if report.blocking and not allow_breaking:
        raise UpgradeBlocked(report)
    return report
