"""`diff`: what `install` would change, by server-side dry-run, with Trainer's stages and prune rules.

Runtimes that carry the ownership label but are no longer rendered, and that no install record
would prune (a GitOps engine applied them, and never prunes runtimes), come out as "kept" with the
unfinished TrainJobs still using them: not drift, but what someone may delete once they finish.
"""

from __future__ import annotations

from dataclasses import dataclass

from trainerctl.cluster.manager.live_diff import DiffResult, ObjectDiff
from trainerctl.cluster.manager.session import Session
from trainerctl.cluster.trainer.in_use import left_behind
from trainerctl.cluster.trainer.policy import NEVER_PRUNE, STAGES

__all__ = ["Diff", "DiffResult", "ObjectDiff"]


@dataclass(frozen=True)
class Diff:
    """The diff action: what `install` would change, by server-side dry-run."""

    force_conflicts: bool = False

    def run(self, session: Session, objects: list[dict]) -> DiffResult:
        result = session.resources.diff(objects, stages=STAGES, never_prune=NEVER_PRUNE,
                                        force_conflicts=self.force_conflicts)
        reported = {d.ref.key for d in result.diffs}
        for ref, jobs in left_behind(session.resources, objects):
            if ref.key in reported:
                continue  # an install would prune it (its record has it): already a "prune"
            why = (f"still used by unfinished TrainJob {', '.join(jobs)}" if jobs else
                   f"no unfinished TrainJob uses it: delete it (kubectl delete {ref.kind.lower()} {ref.name}"
                   f"{' -n ' + ref.namespace if ref.namespace else ''})")
            result.diffs.append(ObjectDiff(ref, "kept", message=f"no longer rendered, left on the cluster; {why}"))
        return result
