"""One Trainer install run over the engine (cluster/install.py's `Install.run` makes it, under the
install lock unless a dry-run): the preflight (checklist.py, the list `check` runs) → plan → read
live → the steps' hand-overs (steps/) → apply stage by stage (waiting where the stage says) →
prune → record → the steps' last words. Stages and prune rules are Trainer's (policy.py); the
upgrade check is a step the caller passes in (the options' `upgrade_guard`)."""

from __future__ import annotations

import time
from typing import Callable

from trainerctl.cluster.client.client import ApiError
from trainerctl.cluster.manager.apply import Planned
from trainerctl.cluster.manager.objects import Ref
from trainerctl.cluster.manager.plan import ensure_namespace, webhook_services
from trainerctl.cluster.manager.prune import PruneRules, still_wanted
from trainerctl.cluster.manager.report import Report, RunFailed, StageResult
from trainerctl.cluster.manager.session import Session
from trainerctl.cluster.manager.staged import RunOptions, StagedApply
from trainerctl.cluster.manager.stages import WAIT_CONTROLLERS, WAIT_CRDS
from trainerctl.cluster.operations import install_history, install_lock
from trainerctl.cluster.trainer import checklist, controller_log, in_use, preflight, steps
from trainerctl.cluster.trainer.install_options import InstallOptions
from trainerctl.cluster.trainer.policy import LEGACY_FINALIZER, NEVER_PRUNE, RECREATE_KINDS, STAGES
from trainerctl.errors import EXIT_INTERRUPTED, EXIT_PREFLIGHT, PreflightError, TrainerctlError


class Installer:
    """One install run: the preflight, then the pipeline over the run its steps see (steps.Run);
    `options`: the install's."""

    def __init__(self, session: Session, objects: list[dict], source: dict, options: InstallOptions):
        self.session = session
        self.options = options
        self.objects = ensure_namespace(objects, session.namespace, session.owner_label)
        self.report = Report("install", dry_run=options.dry_run, namespace=session.namespace, source=source)
        self.refusal = ""  # a dry-run against a live operator or Helm release still shows its plan, then fails with this
        self.check_lock: Callable[[], None] = lambda: None  # raises once another run took the lock
        self.facts = self._facts(lock_held=False, created_namespace=False)
        self.run_state: steps.Run | None = None  # made once the preflight knows the previous install
        self.asked_first = (0, 0)  # the checks asked before the lock (ask_first): (checked, warned)
        self.steps: list[steps.Step] = []

    def _facts(self, *, lock_held: bool, created_namespace: bool) -> checklist.Facts:
        return checklist.Facts(self.session, self.objects, self.options, target=self.report.source.get("trainer_version"),
                               lock_held=lock_held, created_namespace=created_namespace)

    # -- steps -------------------------------------------------------------------------
    def run(self, held: install_lock.Lock | None = None) -> Report:
        """`held`: the install lock this run took (none for a dry-run)."""
        if held is not None:
            self.check_lock = held.check
            self.facts = self._facts(lock_held=True, created_namespace=held.created_namespace)
            self.report.lock = held.acquired.to_dict()
        start = time.monotonic()
        ok = False
        self.session.progress.name_stages({**STAGES.titles(), "handover": "hand-over", "prune": "prune"})
        try:
            self._run()
            ok = True
        except KeyboardInterrupt:
            stage = self.run_state.stage_name if self.run_state else "preflight"
            raise RunFailed(f"interrupted during stage {stage}; {self._so_far()}; re-run to converge",
                            self.report, EXIT_INTERRUPTED) from None
        except RunFailed:
            raise
        except TrainerctlError as exc:
            self.report.error = str(exc)
            suffix = f" ({self._so_far()})" if self.report.objects else ""
            failed = RunFailed(f"{exc}{suffix}", self.report, exc.exit_code)
            failed.upgrade_report = getattr(exc, "report", None)  # a blocked upgrade's, for the CLI to print
            failed.diagnoses = getattr(exc, "diagnoses", [])  # why a rollout failed, for the CLI to print
            self.report.diagnosis = [d.to_dict() for d in failed.diagnoses]
            raise failed from None
        finally:
            self.report.seconds = time.monotonic() - start
            self.session.progress.close(ok=ok)
        return self.report

    def _so_far(self) -> str:
        counts = {k: v for k, v in self.report.counts().items() if k != "unchanged"}
        done = ", ".join(f"{v} {k}" for k, v in counts.items()) or "nothing changed"
        return f"so far: {done}"

    def _run(self) -> None:
        planned = self._prepare()
        run = self.run_state
        for step in self.steps:
            step.before_apply(run, planned)
        for spec in STAGES:
            self._stage(spec, planned)
        for step in self.steps:
            step.after_apply(run, planned)
        leftovers = self._prune(planned) if self.options.prune and run.applier.previous else {}
        for step in self.steps:
            step.before_record(run)
        self.check_lock()
        run.applier.write_inventory(planned, self.report.source, complete=True, leftovers=leftovers)
        failed = self.report.failed
        if failed:
            raise RunFailed(f"{len(failed)} object(s) failed: {failed[0].display}: {failed[0].message}", self.report)
        for step in self.steps:
            step.after_record(run)
        if not self.options.dry_run:
            self._record()
        if self.refusal:
            raise RunFailed(self.refusal, self.report, EXIT_PREFLIGHT)

    def _prepare(self) -> list[Planned]:
        """Everything before the first write: the preflight's checks (checklist.py, the list `check`
        runs too) over the reads they make, then the plan with the previous install, and the steps."""
        t = time.monotonic()
        self.session.progress.step("preflight")
        facts, skip = self.facts, self.options.skip_preflight
        facts.read_ahead(facts.READS_AHEAD[0 if not skip else 1:])
        checked, warned = (x + y for x, y in zip(self._checks(offline=False), self.asked_first))
        if facts.forbidden:  # the access review found every permission: the read failed for another reason
            raise facts.forbidden[0]
        planned = facts.live()
        upgrade = facts.upgrade_report()
        if upgrade is not None:
            self.report.upgrade = upgrade.to_dict()
        self.steps = steps.for_install(facts, self.options)
        self.run_state = steps.Run(self.session, self.options, facts, self.report, self._applier(facts.previous()),
                                   self.check_lock)
        for step in self.steps:
            step.prepared(self.run_state, planned)
        self.report.stages.append(StageResult("preflight", time.monotonic() - t, 0))
        self.session.progress.stage_done(f"{checked} check(s)" + (f", {warned} warning(s)" if warned else ""))
        self.session.progress.expect(len(planned))
        return planned

    def ask_first(self) -> None:
        """The checks that read no cluster (the images at their registries), before the lock is
        taken; raises RunFailed (with .report) as the run does."""
        try:
            self.asked_first = self._checks(offline=True)
        except TrainerctlError as exc:
            self.session.progress.close()
            self.report.error = str(exc)
            raise RunFailed(str(exc), self.report, exc.exit_code) from None

    def _checks(self, *, offline: bool) -> tuple[int, int]:
        """The checklist's checks (those that read no cluster, or the others), install's way: the
        first refusal raises, a warning is said (check lists them all instead); (checked, warned)."""
        skip = self.options.skip_preflight
        checked = warned = 0
        for check, finding in checklist.run(self.facts, skip_preflight=skip, offline=offline):
            checked += 1
            error = finding.error
            if error is not None and not (_forbidden(error) and not skip):
                raise error  # a read that failed, or a refusal that says more than its line (an upgrade report)
            if finding.status == preflight.WARN and error is None:
                warned += 1
                self.session.progress.message(f"warning: {finding.message}")
            if not finding.failed:
                continue
            if self.options.dry_run and check.deferred_in_dry_run:
                self.refusal = self.refusal or finding.message
                continue
            raise PreflightError(finding.message, finding.exit_code)
        return checked, warned

    def _applier(self, previous) -> StagedApply:
        o, s = self.options, self.session
        apply = s.resources.apply_options(force_conflicts=o.force_conflicts, dry_run=o.dry_run, recreate=o.recreate,
                                          timeout=o.timeout, recreate_kinds=RECREATE_KINDS,
                                          strip_finalizers=(LEGACY_FINALIZER,))
        more = [step.more_legacy for step in self.steps if step.more_legacy is not None]
        run = RunOptions(apply, o.wait, o.legacy_managers, dict(self.report.source.get("images") or {}),
                         more_legacy=(lambda meta: tuple(m for f in more for m in f(meta))) if more else None,
                         explain_log=controller_log.explainer(s.cluster, self.facts.trainer_version()))
        unrecorded = frozenset(k for step in self.steps for k in step.unrecorded)
        return s.resources.apply_stages(run, self.report, previous=previous, unrecorded=unrecorded)

    def missing_permission(self, forbidden: TrainerctlError) -> TrainerctlError:
        """The lock was forbidden: a refusal (exit 3) naming the first permission this install
        lacks, in apply order as the review before the first write names it, the lock's last.
        Only discovery and access reviews are asked: nothing installed is read without the lock."""
        try:
            finding = checklist.access_refusal(self.facts)
        except TrainerctlError as exc:
            return exc
        return PreflightError(finding.message) if finding.failed else PreflightError(str(forbidden))

    def _stage(self, spec, planned: list[Planned]) -> None:
        items = [p for p in planned if p.stage == spec.name]
        if not items and not spec.wait:
            return
        run, applier = self.run_state, self.run_state.applier
        self.check_lock()
        run.enter(spec.name)
        t = time.monotonic()
        stage = StageResult(spec.name, objects=len(items))
        self.report.stages.append(stage)
        if not items:  # nothing to apply, only its wait
            self.session.progress.step(spec.name)
        else:
            self.session.progress.stage(spec.name, len(items))
            failed = [r for r in applier.apply_all(items) if r.action == "failed"]
            if failed:
                stage.seconds = time.monotonic() - t
                applier.write_inventory(planned, self.report.source, complete=False)
                first = failed[0]
                raise RunFailed(f"{len(failed)} object(s) failed in stage {spec.name}: {first.display}: "
                                f"{first.message}", self.report)
        if spec.name == "namespaces":  # superset first: a crash can still prune
            applier.write_inventory(planned, self.report.source, complete=False)
        tw = time.monotonic()
        if spec.wait == WAIT_CRDS:
            applier.wait_crds(items)
            applier.refresh_kinds(planned)
        elif spec.wait == WAIT_CONTROLLERS:
            applier.wait_controllers(planned, webhook_services(self.objects))
        for step in self.steps:
            step.after_stage(run, spec, items)
        stage.waited_seconds = time.monotonic() - tw
        stage.seconds = time.monotonic() - t
        self.session.progress.stage_done()

    def _prune(self, planned: list[Planned]) -> dict:
        """Prune what the previous install had and this one does not; what stays on record for a
        later install (a runtime still in use)."""
        run, s = self.run_state, self.session
        run.enter("prune")
        t = time.monotonic()
        current = {p.ref.key for p in planned}
        gone = {k: e for k, e in run.applier.previous.entries.items() if k not in current}
        if not gone:
            return {}
        self.check_lock()
        s.progress.stage("prune", len(gone))
        rules = PruneRules(STAGES, NEVER_PRUNE, strip_finalizers=(LEGACY_FINALIZER,),
                           keep=in_use.keep_in_use(s.cluster, s.discovery, [Ref.from_key(k) for k in gone]))
        for step in self.steps:
            rules = step.prune_rules(rules)
        results = s.resources.prune(gone, rules, dry_run=self.options.dry_run, timeout=self.options.timeout,
                                    on_done=lambda r: run.done(r, add=False))
        self.report.objects.extend(results)
        retry = still_wanted(results, rules)
        for step in self.steps:
            step.after_prune(run, gone, results, retry)
        self.report.stages.append(StageResult("prune", time.monotonic() - t, len(gone)))
        s.progress.stage_done()
        return {k: e for k, e in gone.items() if k in retry}

    def _record(self) -> None:
        """Last: the revision in the install history (a re-install that changed nothing adds none)."""
        self.check_lock()
        o = self.options
        action = "rollback" if o.rollback_to is not None else "install"
        new = install_history.NewRevision(self.report.source, self.run_state.applier.last_written.entries, o.recipe, action,
                                  f"rollback to {o.rollback_to}" if o.rollback_to is not None else "install",
                                  o.rollback_to)
        self.report.history = install_history.record(self.session, new, history_max=o.history_max)


def _forbidden(error: BaseException | None) -> bool:
    return isinstance(error, ApiError) and error.status == 403
