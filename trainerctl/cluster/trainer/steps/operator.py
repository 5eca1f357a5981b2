"""The Go trainer-operator's hand-over, before the first stage (`--take-over-operator`): stop the
operator and release its CR (go_operator.hand_over), then read the live objects again."""

from __future__ import annotations

import time

from trainerctl.cluster.manager.apply import Planned
from trainerctl.cluster.manager.report import StageResult
from trainerctl.cluster.trainer import go_operator
from trainerctl.cluster.trainer.steps.base import Run, Step


class GoOperatorHandOver(Step):
    def before_apply(self, run: Run, planned: list[Planned]) -> None:
        run.check_lock()
        run.enter("handover")
        t = time.monotonic()
        session = run.session
        session.progress.stage("handover", 2)
        results = go_operator.hand_over(session.cluster, run.facts.operator(), run.facts.operator_labelled(),
                                        field_manager=session.field_manager, timeout=run.options.timeout,
                                        dry_run=run.dry_run)
        for r in results:
            run.done(r)
        run.report.stages.append(StageResult("handover", time.monotonic() - t, len(results)))
        if results and not run.dry_run:
            session.resources.read_live(planned)  # releasing the CR's objects changed resourceVersions
