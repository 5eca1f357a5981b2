"""What a `kubectl apply` install left: found before our apply takes kubectl's fields over (after
it the sign is gone), reported (skipped, with what to do) before the record is written."""

from __future__ import annotations

from trainerctl.cluster.manager.apply import Planned
from trainerctl.cluster.manager.listing import CRD
from trainerctl.cluster.manager.report import ObjectResult
from trainerctl.cluster.operations import leftovers
from trainerctl.cluster.trainer.helm_handover import ReleaseObjects
from trainerctl.cluster.trainer.policy import NEVER_PRUNE
from trainerctl.cluster.trainer.steps.base import Run, Step


class KubectlLeftovers(Step):
    def __init__(self, release: ReleaseObjects | None):
        self.releasing = release.entries if release is not None else {}  # a Helm hand-over prunes those
        self.found: list[leftovers.Leftover] = []

    def prepared(self, run: Run, planned: list[Planned]) -> None:
        """When the render's objects were applied by kubectl, what else that install made."""
        if not leftovers.any_applied_by_kubectl((p.live or {}).get("metadata") for p in planned):
            return
        s = run.session
        found = leftovers.find(s.cluster, s.discovery, [p.body for p in planned], {p.ref.key for p in planned},
                               s.namespace, s.owner_label, never=NEVER_PRUNE - {CRD})
        self.found = [f for f in found if f.ref.key not in self.releasing]

    def before_record(self, run: Run) -> None:
        for left in self.found:
            run.done(ObjectResult(left.ref.kind, left.ref.name, left.ref.namespace, left.ref.group, "prune",
                                  "skipped", left.message))
