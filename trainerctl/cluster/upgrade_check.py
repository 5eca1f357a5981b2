"""`upgrade-check`: the UpgradeCheck action: what installing a target render would break on the
session's cluster (trainerctl/upgrade: the CRD diff, and every stored object of a changed CRD
validated against the target's schema). `install` runs the same check as its guard."""

from __future__ import annotations

from dataclasses import dataclass

from trainerctl.cluster.manager.session import Session
from trainerctl.upgrade.compatibility import check_cluster
from trainerctl.upgrade.report import UpgradeReport


@dataclass(frozen=True)
class UpgradeCheck:
    """The upgrade-check action: the installed CRDs the target defines, and those the session's
    ownership label marks that it no longer has, against the target's."""

    def run(self, session: Session, objects: list[dict]) -> UpgradeReport:
        return check_cluster(session.cluster, objects, owner_label=session.owner_label)
