"""Trainer 2.0-2.2 put a finalizer on runtimes in use; 2.3 only removes it. Like the operator,
every install strips it from the runtimes it keeps, once the new controller runs (after the stage
that admits runtimes)."""

from __future__ import annotations

from trainerctl.cluster.manager.apply import Planned
from trainerctl.cluster.manager.objects import is_exempt
from trainerctl.cluster.manager.stages import StageSpec
from trainerctl.cluster.trainer import finalizers
from trainerctl.cluster.trainer.policy import LEGACY_FINALIZER, STAGES, is_runtime
from trainerctl.cluster.trainer.steps.base import Run, Step


class LegacyFinalizers(Step):
    def after_stage(self, run: Run, spec: StageSpec, items: list[Planned]) -> None:
        if spec.name != STAGES.admitted:
            return
        for p in items:
            if not is_runtime(p.ref.group, p.ref.kind):
                continue
            meta = (p.applied or p.live or {}).get("metadata") or {}
            if LEGACY_FINALIZER not in (meta.get("finalizers") or []) or is_exempt(meta):
                continue
            result = run.result_of(p)
            if not run.dry_run:
                run.applier.note_rv(p.ref.key, finalizers.strip(run.session.cluster, p.path, meta))
            if result is not None:
                result.add_note(f"legacy finalizer {LEGACY_FINALIZER} {'would be ' if run.dry_run else ''}removed")
