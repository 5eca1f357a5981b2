"""`install`: the Trainer install pipeline over the engine.

take the install lock → the preflight (trainer/checklist.py: the cluster, the Go operator, Helm,
permissions, the upgrade; the list `check` runs) → plan → read live → hand
over (if asked) → apply stage by stage (waiting where the stage says) → strip the legacy finalizer
from kept runtimes → prune → record → delete a handed-over Helm release's records. Stages, prune
rules, the operator and Helm's chart come from trainerctl.cluster.trainer; the upgrade check is a
step the caller passes in. Everything is read after the lock is taken (a `--dry-run` takes none).
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass
from typing import Any, Callable

from trainerctl.cluster.operations import helm, history, leftovers, lock
from trainerctl.cluster.manager.apply import ApplyOptions, Planned, get_meta
from trainerctl.cluster.client.client import ApiError, Cluster, object_path
from trainerctl.cluster.client.discovery import Discovery
from trainerctl.cluster.manager.inventory import Entry, Inventory
from trainerctl.cluster.manager.staged import RunOptions, StagedApply
from trainerctl.cluster.manager.listing import CRD
from trainerctl.cluster.manager.objects import Ref, is_exempt, label_selector, parse_label
from trainerctl.cluster.manager.plan import ensure_namespace, read_live, webhook_services
from trainerctl.cluster.manager.prune import PruneRules, prune, still_wanted
from trainerctl.cluster.manager.report import ObjectResult, Report, StageResult
from trainerctl.cluster.manager.stages import WAIT_CONTROLLERS, WAIT_CRDS
from trainerctl.cluster.trainer import checklist, finalizers, go_operator, helm_handover, in_use, preflight
from trainerctl.cluster.trainer.policy import (LEGACY_FINALIZER, LEGACY_MANAGERS, NEVER_PRUNE, RECREATE_KINDS,
                                               STAGES, is_runtime)
from trainerctl.errors import EXIT_INTERRUPTED, EXIT_PREFLIGHT, InputError, PreflightError, TrainerctlError
from trainerctl.owner_label import DEFAULT_OWNER_LABEL
from trainerctl.settings import FIELD_MANAGER, HISTORY_MAX, LOCK_TIMEOUT, TIMEOUT
from trainerctl.ui import Progress

# guard(cluster, objects, owner_label=..., allow_breaking=...) -> a report with to_dict(); raises a
# TrainerctlError carrying `.report` to block the upgrade (trainerctl.upgrade.guard).
UpgradeGuard = Callable[..., Any]


@dataclass(frozen=True)
class InstallOptions:
    """What `install` is asked to do: the fields of the same names in Settings (cli/options.py)."""

    field_manager: str = FIELD_MANAGER
    force_conflicts: bool = False
    dry_run: bool = False
    wait: bool = True
    timeout: float = TIMEOUT
    prune: bool = True
    recreate: bool = True
    skip_preflight: bool = False
    allow_breaking: bool = False  # apply even when the upgrade guard finds a blocking CRD change
    legacy_managers: tuple[str, ...] = LEGACY_MANAGERS
    take_over_operator: bool = False  # stop the Go operator and release its CR first (go_operator.py)
    take_over_helm: bool = False  # adopt a Helm release of Trainer, then delete its records (helm_handover.py)
    history_max: int = HISTORY_MAX  # install-history revisions kept (operations/history.py), 0: all
    recipe: dict = dataclasses.field(default_factory=dict)  # how the render was asked for: recorded for a rollback
    rollback_to: int | None = None  # this run renders that revision again (trainerctl rollback)
    upgrade_guard: UpgradeGuard | None = None  # the CRD compatibility check, run before any write
    lock_timeout: float = LOCK_TIMEOUT  # how long to wait for another run's install lock


class RunFailed(TrainerctlError):
    """Carries the partial report so the CLI can still print what was done."""

    def __init__(self, message: str, report: Report, exit_code: int | None = None):
        super().__init__(message, exit_code)
        self.report = report
        self.upgrade_report = None  # the blocking upgrade report, for the CLI to print
        self.diagnoses: list = []  # manager/diagnose.py Diagnosis per object a wait gave up on


def source_dict(source: Any) -> dict:
    if source is None:
        return {}
    if dataclasses.is_dataclass(source):
        return {k: v for k, v in dataclasses.asdict(source).items() if v not in (None, "")}
    return dict(source)


class Installer:
    """One install run; state lives here only for the duration of `run`."""

    def __init__(self, cluster: Cluster, objects: list[dict], *, namespace: str, owner_label: str,
                 source: dict, options: InstallOptions, progress):
        self.cluster = cluster
        self.namespace = namespace
        self.owner_label = label_selector(owner_label)
        self.options = options
        self.progress = progress
        self.objects = ensure_namespace(objects, namespace, owner_label)
        self.report = Report("install", dry_run=options.dry_run, namespace=namespace, source=source)
        self.stage_name = "preflight"
        self.leftovers: dict[str, Entry] = {}
        self.refusal = ""  # a dry-run against a live operator or Helm release still shows its plan, then fails with this
        self.kubectl_leftovers: list[leftovers.Leftover] = []
        self.check_lock: Callable[[], None] = lambda: None  # raises once another run took the lock
        self.facts = self._facts(lock_held=False, created_namespace=False)
        self.applier: StagedApply | None = None  # made once the preflight knows the previous install

    def _facts(self, *, lock_held: bool, created_namespace: bool) -> checklist.Facts:
        o = self.options
        return checklist.Facts(self.cluster, self.objects, self.namespace, self.owner_label, o.field_manager,
                               target=self.report.source.get("trainer_version"), prune=o.prune, lock_held=lock_held,
                               dry_run=o.dry_run, take_over_operator=o.take_over_operator,
                               take_over_helm=o.take_over_helm, allow_breaking=o.allow_breaking,
                               created_namespace=created_namespace, upgrade_guard=o.upgrade_guard)

    @property
    def previous(self) -> Inventory | None:
        return self.applier.previous if self.applier else None

    @property
    def discovery(self) -> Discovery:
        return self.facts.discovery

    @property
    def release(self) -> helm_handover.ReleaseObjects | None:
        return self.facts.release()

    @property
    def own_record(self) -> frozenset[str]:
        """What our own record (or the Go operator's install) named before any Helm hand-over."""
        own = self.facts.own_previous()
        return frozenset(own.entries if own else ())

    def _release_claim(self, ref: Ref, meta: dict):
        """What our own record names is ours by label; what only the release names is its only
        when the live object proves it (helm_handover.ReleaseObjects.claim)."""
        return None if ref.key in self.own_record else self.release.claim(ref, meta)

    # -- steps -------------------------------------------------------------------------
    def run(self, held: lock.Lock | None = None) -> Report:
        """`held`: the install lock this run took (none for a dry-run)."""
        if held is not None:
            self.check_lock = held.check
            self.facts = self._facts(lock_held=True, created_namespace=held.created_namespace)
            self.report.lock = held.acquired.to_dict()
        start = time.monotonic()
        try:
            self._run()
        except KeyboardInterrupt:
            self.report.seconds = time.monotonic() - start
            raise RunFailed(f"interrupted during stage {self.stage_name}; {self._so_far()}; re-run to converge",
                            self.report, EXIT_INTERRUPTED) from None
        except RunFailed:
            self.report.seconds = time.monotonic() - start
            raise
        except TrainerctlError as exc:
            self.report.seconds = time.monotonic() - start
            self.report.error = str(exc)
            suffix = f" ({self._so_far()})" if self.report.objects else ""
            failed = RunFailed(f"{exc}{suffix}", self.report, exc.exit_code)
            failed.upgrade_report = getattr(exc, "report", None)  # a blocked upgrade's, for the CLI to print
            failed.diagnoses = getattr(exc, "diagnoses", [])  # why a rollout failed, for the CLI to print
            self.report.diagnosis = [d.to_dict() for d in failed.diagnoses]
            raise failed from None
        finally:
            self.progress.close()
        self.report.seconds = time.monotonic() - start
        return self.report

    def _so_far(self) -> str:
        counts = {k: v for k, v in self.report.counts().items() if k != "unchanged"}
        done = ", ".join(f"{v} {k}" for k, v in counts.items()) or "nothing changed"
        return f"so far: {done}"

    def _run(self) -> None:
        planned = self._prepare()
        if self.facts.operator().present and self.options.take_over_operator:
            self._hand_over(planned)
        for spec in STAGES:
            self._stage(spec, planned)
        if self.release is not None:
            self._adopted_from_helm(planned)
        if self.options.prune and self.previous:
            self._prune(planned)
        self._report_kubectl_leftovers()
        self.check_lock()
        self.applier.write_inventory(planned, self.report.source, complete=True, leftovers=self.leftovers)
        failed = self.report.failed
        if failed:
            raise RunFailed(f"{len(failed)} object(s) failed: {failed[0].display}: {failed[0].message}", self.report)
        if self.release is not None:
            self._forget_helm_release()
        if not self.options.dry_run:
            self._record()
        if self.refusal:
            raise RunFailed(self.refusal, self.report, EXIT_PREFLIGHT)

    def _prepare(self) -> list[Planned]:
        """Everything before the first write: the preflight's checks (checklist.py, the list `check`
        runs too) over the reads they make, then the plan with the previous install."""
        t = time.monotonic()
        facts, skip = self.facts, self.options.skip_preflight
        facts.read_ahead(facts.READS_AHEAD[0 if not skip else 1:])
        for check, finding in checklist.run(facts, skip_preflight=skip):
            error = finding.error
            if error is not None and not (_forbidden(error) and not skip):
                raise error  # a read that failed, or a refusal that says more than its line (an upgrade report)
            if finding.status == preflight.WARN and error is None:
                self.progress.message(f"warning: {finding.message}")
            if not finding.failed:
                continue
            if self.options.dry_run and check.deferred_in_dry_run:
                self.refusal = self.refusal or finding.message
                continue
            raise PreflightError(finding.message, finding.exit_code)
        if facts.forbidden:  # the access review found every permission: the read failed for another reason
            raise facts.forbidden[0]
        planned = facts.live()
        upgrade = facts.upgrade_report()
        if upgrade is not None:
            self.report.upgrade = upgrade.to_dict()
        self._helm_notes()
        self.applier = self._applier(facts.previous())
        self._find_kubectl_leftovers(planned)
        self.report.stages.append(StageResult("preflight", time.monotonic() - t, 0))
        self.progress.total = len(planned)
        return planned

    def _applier(self, previous: Inventory | None) -> StagedApply:
        o = self.options
        apply = ApplyOptions(field_manager=o.field_manager, force_conflicts=o.force_conflicts, dry_run=o.dry_run,
                             recreate=o.recreate, timeout=o.timeout, recreate_kinds=RECREATE_KINDS,
                             strip_finalizers=(LEGACY_FINALIZER,))
        run = RunOptions(apply, o.wait, o.legacy_managers, dict(self.report.source.get("images") or {}),
                         more_legacy=helm_handover.helm_managers if self.release is not None else None)
        # What only a Helm release names is proven its at the prune, on the live object; until then
        # it is not written to our record (an interrupted run reads the release again).
        unrecorded = frozenset(self.release.entries) - self.own_record if self.release is not None else frozenset()
        return StagedApply(self.cluster, self.discovery, namespace=self.namespace, report=self.report,
                           progress=self.progress, options=run, previous=previous, unrecorded=unrecorded)

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
        self.check_lock()
        self.stage_name = spec.name
        t = time.monotonic()
        stage = StageResult(spec.name, objects=len(items))
        self.report.stages.append(stage)
        if items:
            self.progress.stage(spec.name, len(items))
            failed = [r for r in self.applier.apply_all(items) if r.action == "failed"]
            if failed:
                stage.seconds = time.monotonic() - t
                self.applier.write_inventory(planned, self.report.source, complete=False)
                first = failed[0]
                raise RunFailed(f"{len(failed)} object(s) failed in stage {spec.name}: {first.display}: "
                                f"{first.message}", self.report)
        if spec.name == "namespaces":  # superset first: a crash can still prune
            self.applier.write_inventory(planned, self.report.source, complete=False)
        tw = time.monotonic()
        if spec.wait == WAIT_CRDS:
            self.applier.wait_crds(items)
            self.applier.refresh_kinds(planned)
        elif spec.wait == WAIT_CONTROLLERS:
            self.applier.wait_controllers(planned, webhook_services(self.objects))
        if spec.name == STAGES.admitted:
            self._strip_legacy_finalizers(items)
        stage.waited_seconds = time.monotonic() - tw
        stage.seconds = time.monotonic() - t

    def _prune(self, planned: list[Planned]) -> None:
        self.stage_name = "prune"
        t = time.monotonic()
        current = {p.ref.key for p in planned}
        gone = {k: e for k, e in self.previous.entries.items() if k not in current}
        if not gone:
            return
        self.check_lock()
        self.progress.stage("prune", len(gone))
        keep = in_use.keep_in_use(self.cluster, self.discovery, [Ref.from_key(k) for k in gone])
        if self.release is not None:
            keep = helm_handover.keeping_helm_policy(keep)
        rules = PruneRules(STAGES, NEVER_PRUNE, strip_finalizers=(LEGACY_FINALIZER,), keep=keep,
                           owned=self._release_claim if self.release is not None else None)
        results = prune(self.cluster, self.discovery, gone, self.owner_label, rules, dry_run=self.options.dry_run,
                        timeout=self.options.timeout,
                        on_done=lambda r: self.progress.object_done(r.display, self.applier.verb(r.action), r.message))
        self.report.objects.extend(results)
        retry = still_wanted(results, rules)
        self.leftovers = {k: e for k, e in gone.items() if k in retry}
        if self.release is not None:
            self._settle_release_leftovers(gone, results, retry)
        self.report.stages.append(StageResult("prune", time.monotonic() - t, len(gone)))

    def _record(self) -> None:
        """Last: the revision in the install history (a re-install that changed nothing adds none)."""
        self.check_lock()
        o = self.options
        action = "rollback" if o.rollback_to is not None else "install"
        new = history.NewRevision(self.report.source, self.applier.last_written.entries, o.recipe, action,
                                  f"rollback to {o.rollback_to}" if o.rollback_to is not None else "install",
                                  o.rollback_to)
        self.report.history = history.record(self.cluster, self.namespace, new, history_max=o.history_max,
                                             field_manager=o.field_manager)

    # -- the Go operator ---------------------------------------------------------------
    def _hand_over(self, planned: list[Planned]) -> None:
        self.check_lock()
        self.stage_name = "handover"
        t = time.monotonic()
        self.progress.stage("handover", 2)
        results = go_operator.hand_over(self.cluster, self.facts.operator(), self.facts.operator_labelled(),
                                        field_manager=self.options.field_manager, timeout=self.options.timeout,
                                        dry_run=self.options.dry_run)
        for r in results:
            self.report.add(r)
            self.progress.object_done(r.display, self.applier.verb(r.action), r.message)
        self.report.stages.append(StageResult("handover", time.monotonic() - t, len(results)))
        if results and not self.options.dry_run:
            read_live(self.cluster, planned, self.owner_label)  # releasing the CR's objects changed resourceVersions

    # -- Helm and kubectl installs -----------------------------------------------------
    def _helm_notes(self) -> None:
        """What the Helm check found that is not a refusal: unreadable records, and the flags a
        hand-over needs."""
        releases = self.facts.helm_releases()
        for line in self.facts.helm_unreadable:
            self.progress.message(f"warning: {line} (skipped: not read as a Helm release record)")
        for line in (n for r in releases for n in r.unreadable):
            self.progress.message(f"warning: {line} (its revision is not read; a hand-over still deletes the record)")
        helm_state = self.facts.helm()
        if not helm_state.present:
            return
        helm_state.check_namespace(self.namespace)
        if self.options.take_over_helm and not self.options.prune:
            raise InputError(f"{helm_handover.HAND_OVER_FLAG} and --no-prune: the hand-over prunes what the Helm "
                             "release had and the render does not (then forgets the release); drop --no-prune")

    def _adopted_from_helm(self, planned: list[Planned]) -> None:
        """Say which rendered objects were the release's, and remove Helm's marks our apply left
        (a mark another field manager also set, e.g. a `kubectl annotate`)."""
        results = {(r.group, r.kind, r.namespace, r.name): r for r in self.report.objects}
        for p in planned:
            release = next((r for r in self.facts.helm().releases if r.owns((p.live or {}).get("metadata") or {})), None)
            result = results.get((p.ref.group, p.ref.kind, p.ref.namespace, p.ref.name))
            if release is None or result is None or result.action == "failed":
                continue
            notes = [helm_handover.adopted_note(release)]
            after = (p.applied or {}).get("metadata")
            if after is not None and helm.ownership_patch(after):
                if helm_handover.unmark(self.cluster, p.path, after, field_manager=self.options.field_manager,
                                        dry_run=self.options.dry_run):
                    notes.append(f"Helm's ownership marks {'would be ' if self.options.dry_run else ''}removed")
            result.message = "; ".join(filter(None, [result.message, *notes]))

    def _settle_release_leftovers(self, gone: dict[str, Entry], results: list, retry: set[str]) -> None:
        """What the release had that is neither rendered nor pruned: CRDs (never pruned) lose
        Helm's marks; what is kept for now (a runtime in use) also gets our label, so a later
        install prunes it like any object of ours."""
        dry = self.options.dry_run
        by_key = {f"{r.group}/{r.kind}/{r.namespace}/{r.name}": r for r in results}
        for key, entry in sorted(gone.items()):
            ref = Ref.from_key(key)
            if key not in self.release.entries:
                continue
            never = (ref.group, ref.kind) in NEVER_PRUNE
            if not never and key not in retry:
                continue
            res = self.discovery.lookup(entry.api_version, ref.kind)
            path = res and object_path(res.group, res.version, res.resource, ref.namespace or None, ref.name)
            live = get_meta(self.cluster, path) if path else None
            claim = self._release_claim(ref, live.get("metadata") or {}) if live is not None else None
            if claim is None or not claim.owner:
                continue
            marked = helm_handover.unmark(self.cluster, path, live["metadata"], dry_run=dry,
                                          label=None if never else parse_label(self.owner_label),
                                          field_manager=self.options.field_manager)
            note = f"Helm's marks {'would be ' if dry else ''}removed" if marked else ""
            if never:
                result = ObjectResult(ref.kind, ref.name, ref.namespace, ref.group, entry.stage, "skipped",
                                      "; ".join(filter(None, [f"not pruned: {ref.kind} is never pruned", note])))
                self.report.add(result)
                self.progress.object_done(result.display, self.applier.verb(result.action), result.message)
            elif key in by_key and by_key[key].action == "skipped":
                by_key[key].message += f"; {'would be ' if dry else ''}labelled as ours, pruned by a later install"

    def _forget_helm_release(self) -> None:
        """Last: delete the release's records, so Helm no longer knows it (helm list, uninstall)."""
        self.check_lock()
        self.stage_name = "handover"
        t = time.monotonic()
        results = helm_handover.delete_records(
            self.cluster, self.facts.helm(), dry_run=self.options.dry_run,
            on_done=lambda r: self.progress.object_done(r.display, self.applier.verb(r.action), r.message))
        self.report.objects.extend(results)
        self.report.stages.append(StageResult("handover", time.monotonic() - t, len(results)))
        failed = [r for r in results if r.action == "failed"]
        if failed:
            raise RunFailed(f"{failed[0].display}: {failed[0].message}; re-run with {helm_handover.HAND_OVER_FLAG} "
                            "to finish the hand-over", self.report)

    def _find_kubectl_leftovers(self, planned: list[Planned]) -> None:
        """Before our apply takes kubectl's fields over (after it the sign is gone): when the
        render's objects were applied by kubectl, what else that install made."""
        if not leftovers.any_applied_by_kubectl((p.live or {}).get("metadata") for p in planned):
            return
        found = leftovers.find(self.cluster, self.discovery, [p.body for p in planned], {p.ref.key for p in planned},
                               self.namespace, self.owner_label, never=NEVER_PRUNE - {CRD})
        releasing = self.release.entries if self.release is not None else {}
        self.kubectl_leftovers = [f for f in found if f.ref.key not in releasing]

    def _report_kubectl_leftovers(self) -> None:
        for left in self.kubectl_leftovers:
            result = ObjectResult(left.ref.kind, left.ref.name, left.ref.namespace, left.ref.group, "prune",
                                  "skipped", left.message)
            self.report.add(result)
            self.progress.object_done(result.display, self.applier.verb(result.action), result.message)

    # -- Trainer specifics -------------------------------------------------------------
    def _strip_legacy_finalizers(self, items: list[Planned]) -> None:
        """Trainer 2.0-2.2 put a finalizer on runtimes in use; 2.3 only removes it. Like the operator,
        every install strips it from the runtimes it keeps, once the new controller runs."""
        results = {(r.group, r.kind, r.namespace, r.name): r for r in self.report.objects}
        for p in items:
            if not is_runtime(p.ref.group, p.ref.kind):
                continue
            meta = (p.applied or p.live or {}).get("metadata") or {}
            if LEGACY_FINALIZER not in (meta.get("finalizers") or []) or is_exempt(meta):
                continue
            result = results.get((p.ref.group, p.ref.kind, p.ref.namespace, p.ref.name))
            if not self.options.dry_run:
                self.applier.note_rv(p.ref.key, finalizers.strip(self.cluster, p.path, meta))
            if result is not None:
                note = f"legacy finalizer {LEGACY_FINALIZER} {'would be ' if self.options.dry_run else ''}removed"
                result.message = f"{result.message}; {note}" if result.message else note

def _forbidden(error: BaseException | None) -> bool:
    return isinstance(error, ApiError) and error.status == 403


def install(objects: list[dict], *, cluster: Cluster, namespace: str, owner_label=DEFAULT_OWNER_LABEL,
            source: Any = None, options: InstallOptions | None = None, progress=None) -> Report:
    """Apply `objects` (a render) to the cluster, holding the install lock (operations/lock.py) unless it
    is a dry-run; raises RunFailed (with .report) on failure, exit 4 when another run held the lock
    for all of `options.lock_timeout`."""
    options = options or InstallOptions()
    progress = progress or Progress(len(objects), enabled=False)
    installer = Installer(cluster, objects, namespace=namespace, owner_label=owner_label, source=source_dict(source),
                          options=options, progress=progress)
    if options.dry_run:
        return installer.run()
    try:
        held = lock.take(cluster, namespace, "install", timeout=options.lock_timeout,
                         field_manager=options.field_manager, on_message=progress.message)
    except TrainerctlError as exc:  # unreachable, forbidden, or another run held it all along
        if getattr(exc, "status", None) == 403 and not options.skip_preflight:
            exc = installer.missing_permission(exc)
        progress.close()
        installer.report.error = str(exc)
        raise RunFailed(str(exc), installer.report, exc.exit_code) from None
    with held:
        return installer.run(held)
