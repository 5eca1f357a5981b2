"""What install runs before applying anything: the upgrade check, and its refusal.

Light on purpose: every install takes the guard, and only one whose CRDs change calls it; the
check it runs loads then, through the package's lazy names.
"""

from __future__ import annotations

from typing import Any

import trainerctl.upgrade as upgrade
from trainerctl.errors import EXIT_PREFLIGHT, TrainerctlError


class UpgradeBlocked(TrainerctlError):
    """install refuses the upgrade; .report says why (print it before the error line). A refusal
    before anything is applied, like every other preflight check: exit 3."""

    exit_code = EXIT_PREFLIGHT

    def __init__(self, report: Any):
        super().__init__(f"upgrade blocked by {len(report.blocking_findings)} change(s), first: "
                         f"{report.first_blocking_line()}; run `trainerctl upgrade-check` for the report, "
                         "or pass --allow-breaking")
        self.report = report


def guard(cluster: Any, target_objects: list[dict], *, owner_label: Any = None, allow_breaking: bool = False) -> Any:
    """The upgrade report (trainerctl.upgrade.report.UpgradeReport), or UpgradeBlocked."""
    report = upgrade.check_cluster(cluster, target_objects, owner_label=owner_label)
    if report.blocking and not allow_breaking:
        raise UpgradeBlocked(report)
    return report
