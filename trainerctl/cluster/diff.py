"""`diff`: what `install` would change, by server-side dry-run, with Trainer's stages and prune rules."""

from __future__ import annotations

from trainerctl.cluster.engine import diff as engine_diff
from trainerctl.cluster.engine.client import Cluster
from trainerctl.cluster.engine.diff import DiffResult, ObjectDiff
from trainerctl.cluster.trainer.policy import NEVER_PRUNE, STAGES
from trainerctl.owner_label import DEFAULT_OWNER_LABEL

__all__ = ["DiffResult", "ObjectDiff", "diff"]


def diff(objects: list[dict], *, cluster: Cluster, namespace: str, owner_label=DEFAULT_OWNER_LABEL,
         field_manager: str = "trainerctl", force_conflicts: bool = False) -> DiffResult:
    return engine_diff.diff(objects, cluster=cluster, namespace=namespace, owner_label=owner_label, stages=STAGES,
                            never_prune=NEVER_PRUNE, field_manager=field_manager, force_conflicts=force_conflicts)
