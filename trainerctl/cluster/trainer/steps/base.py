"""A step of the install and the run it sees (steps/__init__.py says which steps there are)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from trainerctl.cluster.manager.apply import Planned
from trainerctl.cluster.manager.inventory_configmap import Entry
from trainerctl.cluster.manager.prune import PruneRules
from trainerctl.cluster.manager.report import ObjectResult, Report
from trainerctl.cluster.manager.session import Session
from trainerctl.cluster.manager.stages import StageSpec
from trainerctl.cluster.manager.staged import StagedApply
from trainerctl.cluster.trainer.checklist import Facts
from trainerctl.cluster.trainer.install_options import InstallOptions


@dataclass
class Run:
    """One install run as its steps see it: the session, the install's options, what the preflight
    read, the report and the staged apply."""

    session: Session
    options: InstallOptions
    facts: Facts
    report: Report
    applier: StagedApply
    check_lock: Callable[[], None]
    stage_name: str = "preflight"  # where an interrupted run stopped

    @property
    def dry_run(self) -> bool:
        return self.options.dry_run

    def enter(self, stage: str) -> None:
        self.stage_name = stage

    def done(self, result: ObjectResult, *, add: bool = True) -> None:
        """`result` is finished: shown, and (`add`) added to the report."""
        if add:
            self.report.add(result)
        self.session.progress.object_done(result.display, self.applier.verb(result.action), result.message)

    def result_of(self, p: Planned) -> ObjectResult | None:
        return next((r for r in self.report.objects if r.key == p.ref.key), None)


class Step:
    """Hooks Install calls, in this order; `unrecorded` and `more_legacy` are read when the staged
    apply is made."""

    unrecorded: frozenset[str] = frozenset()  # keys the record written before the apply leaves out
    more_legacy: Callable[[dict], tuple[str, ...]] | None = None  # field managers to take over, per object

    def prepared(self, run: Run, planned: list[Planned]) -> None:
        """After the preflight, before the first write."""

    def before_apply(self, run: Run, planned: list[Planned]) -> None:
        """Before the first stage is applied."""

    def after_stage(self, run: Run, spec: StageSpec, items: list[Planned]) -> None:
        """A stage is applied and waited for."""

    def after_apply(self, run: Run, planned: list[Planned]) -> None:
        """Every stage is applied."""

    def prune_rules(self, rules: PruneRules) -> PruneRules:
        return rules

    def after_prune(self, run: Run, gone: dict[str, Entry], results: list[ObjectResult], retry: set[str]) -> None:
        """The prune ran over `gone`; `retry`: what stays on record for a later install to prune."""

    def before_record(self, run: Run) -> None:
        """Before the complete inventory is written."""

    def after_record(self, run: Run) -> None:
        """The complete inventory is written and nothing failed."""
