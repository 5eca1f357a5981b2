"""`install`: the Trainer install pipeline over the engine.

take the install lock → check the cluster, the Go operator and Helm → plan → read live → hand
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
from trainerctl.cluster.manager import inventory as inv_mod
from trainerctl.cluster.manager.apply import ApplyOptions, Planned, get_meta
from trainerctl.cluster.client.client import ApiError, Cluster, object_path
from trainerctl.cluster.client.discovery import Discovery
from trainerctl.cluster.manager.inventory import Entry, Inventory
from trainerctl.cluster.manager.staged import RunOptions, StagedApply
from trainerctl.cluster.manager.listing import CRD
from trainerctl.cluster.manager.objects import Ref, is_exempt, label_selector, parse_label
from trainerctl.cluster.manager.plan import ensure_namespace, namespace_labels, plan, read_live, webhook_services
from trainerctl.cluster.client.pool import parallel_map
from trainerctl.cluster.manager.prune import PruneRules, prune, still_wanted
from trainerctl.cluster.manager.report import ObjectResult, Report, StageResult
from trainerctl.cluster.manager.stages import WAIT_CONTROLLERS, WAIT_CRDS
from trainerctl.cluster.trainer import finalizers, go_operator, helm_handover, in_use, operator_inventory, preflight
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
    upgrade_guard: UpgradeGuard | None = None  # the CRD compatibility check, run before any write
    lock_timeout: float = LOCK_TIMEOUT  # how long to wait for another run's install lock
    history_max: int = HISTORY_MAX  # install-history revisions kept (operations/history.py), 0: all
    recipe: dict = dataclasses.field(default_factory=dict)  # how the render was asked for: recorded for a rollback
    rollback_to: int | None = None  # this run renders that revision again (trainerctl rollback)


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
        self.discovery = Discovery(cluster)
        self.report = Report("install", dry_run=options.dry_run, namespace=namespace, source=source)
        apply = ApplyOptions(field_manager=options.field_manager, force_conflicts=options.force_conflicts,
                             dry_run=options.dry_run, recreate=options.recreate, timeout=options.timeout,
                             recreate_kinds=RECREATE_KINDS, strip_finalizers=(LEGACY_FINALIZER,))
        self.applier = StagedApply(cluster, self.discovery, namespace=namespace, report=self.report,
                                   progress=progress, options=RunOptions(apply, options.wait, options.legacy_managers,
                                                                         dict(source.get("images") or {})))
        self.stage_name = "preflight"
        self.leftovers: dict[str, Entry] = {}
        self.operator = go_operator.OperatorState()
        self.refusal = ""  # a dry-run against a live operator still shows its plan, then fails with this
        self.labelled: list = []  # labelled objects found while looking for the operator's install
        self.helm = helm_handover.HelmState()
        self.release: helm_handover.ReleaseObjects | None = None  # set while handing over from Helm
        self.own_record: frozenset[str] = frozenset()  # what our own inventory named before the hand-over
        self.helm_unreadable: list[str] = []  # Helm release records that did not fit their view
        self.kubectl_leftovers: list[leftovers.Leftover] = []
        self.check_lock: Callable[[], None] = lambda: None  # raises once another run took the lock
        self.namespace_created = False  # this run created the namespace first, to hold its lock in

    @property
    def previous(self) -> Inventory | None:
        return self.applier.previous

    # -- steps -------------------------------------------------------------------------
    def run(self) -> Report:
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
        if self.operator.present and self.options.take_over_operator:
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
        """Everything before the first write: reads, checks, the plan."""
        t = time.monotonic()
        check = not self.options.skip_preflight
        # Independent first reads go out together: they are most of a no-op run's latency. A read
        # the user may not make is held back until the access review has named the permission.
        steps: dict[str, Callable[[], Any]] = {
            "discovery": self.discovery.refresh, "inventory": lambda: inv_mod.read(self.cluster, self.namespace),
            "cr": lambda: go_operator.read_cr(self.cluster), "deployments": lambda: go_operator.find_deployments(self.cluster),
            "helm": lambda: helm.find_releases(self.cluster, self.namespace, self.helm_unreadable)}
        if check:  # first: its error is the clearest
            steps = {"version": lambda: preflight.server_version(self.cluster), **steps}
        results = dict(zip(steps, parallel_map(_attempt, list(steps.values()))))
        target = self.report.source.get("trainer_version")
        if check:
            preflight.raise_first([preflight.kubernetes(_value(results["version"]), target)])
        _value(results["discovery"])
        self.discovery.add_rendered_crds(self.objects)
        deps: tuple[Any, BaseException | None] = (None, None)
        if check:
            openshift = self.discovery.has_group(preflight.OPENSHIFT_GROUP)
            deps = _attempt(lambda: preflight.dependencies_found(self.cluster, self.discovery, self.objects, openshift))
            if deps[1] is None:
                preflight.raise_first([deps[0][0]])
            preflight.raise_first([preflight.kinds(self.discovery, self.objects)])
        planned = plan(self.objects, self.discovery, self.namespace, self.options.field_manager, STAGES)
        if check and any(_forbidden(error) for _, error in [*results.values(), deps]):
            self._refuse_if_lacking(preflight.access_needs(planned, self.namespace))
        self.operator = go_operator.OperatorState(cr=_value(results["cr"]), deployments=_value(results["deployments"]))
        self._operator_guard()
        self.applier.previous = self.applier.last_written = _value(results["inventory"])
        if check:
            installed = self.previous.source.get("trainer_version") if self.previous else None
            preflight.raise_first([preflight.jobset_version(self.cluster, _value(deps)[1], target),
                                   preflight.upgrade_path(installed, target)])
        try:
            read_live(self.cluster, planned, self.owner_label)
        except ApiError as exc:
            if check and _forbidden(exc):
                self._refuse_if_lacking(preflight.access_needs(planned, self.namespace))
            raise
        if self.namespace_created:  # by this run, bare, just before, to hold its lock in: ours to create
            for p in planned:
                if (p.ref.group, p.ref.kind, p.ref.name) == ("", "Namespace", self.namespace):
                    p.live = None
        self.labelled = self._adopt_operator_install(planned)
        self._helm_guard(planned, _value(results["helm"]))
        self._find_kubectl_leftovers(planned)
        if check:
            # Only what this run will write is asked: a no-op run asks nothing.
            self._refuse_if_lacking(preflight.change_needs(
                planned, self.namespace, self.previous, self.options.prune,
                will_apply=lambda p: not self.applier.unchanged_since_last_apply(p)))
            hazard = preflight.istio(self.namespace, namespace_labels(planned, self.namespace), self.objects)
            if hazard.status == preflight.WARN:
                self.progress.message(f"warning: {hazard.message}")
            self._upgrade_guard(planned)
        self.report.stages.append(StageResult("preflight", time.monotonic() - t, 0))
        self.progress.total = len(planned)
        return planned

    def missing_permission(self, forbidden: TrainerctlError) -> TrainerctlError:
        """The lock was forbidden: a refusal (exit 3) naming the first permission this install
        lacks, in apply order as the review before the first write names it, the lock's last.
        Only discovery and access reviews are asked: nothing installed is read without the lock."""
        try:
            self.discovery.refresh()
            self.discovery.add_rendered_crds(self.objects)
            planned = plan(self.objects, self.discovery, self.namespace, self.options.field_manager, STAGES)
            self._refuse_if_lacking([*preflight.access_needs(planned, self.namespace),
                                     *lock.access_needs(self.namespace)])
        except TrainerctlError as refusal:
            return refusal
        return PreflightError(str(forbidden))

    def _refuse_if_lacking(self, needs) -> None:
        """The access review (operations/access.py): one line naming the first missing permission."""
        preflight.raise_first([preflight.permissions(self.cluster, needs)])

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
    def _operator_guard(self) -> None:
        """Refuse (before any write) while the Go operator can still write, unless handing over."""
        op = self.operator
        if op.cr is not None and self.options.take_over_operator:
            go_operator.check_namespace(op, self.namespace)
        if not op.can_write:
            return
        if self.options.take_over_operator:
            go_operator.check_hand_over(op)
        elif self.options.dry_run:
            self.refusal = op.refusal()
        else:
            raise PreflightError(op.refusal())

    def _adopt_operator_install(self, planned: list[Planned]) -> list:
        """With no inventory, what the operator applied here is the previous install (operator_inventory.py).

        The search lists every type by label, so it only runs when there is a sign of the operator:
        its CR or Deployment, or its field manager on an object we render."""
        if self.previous is not None and not (self.operator.cr is not None and self.options.take_over_operator):
            return []
        if not (self.operator.present or any(operator_inventory.managed_by_operator((p.live or {}).get("metadata"))
                                             for p in planned)):
            return []
        labelled = operator_inventory.labelled_objects(self.cluster, self.discovery, self.namespace, self.owner_label)
        if self.previous is None:
            self.applier.previous = operator_inventory.seed(labelled, self.namespace, self.objects)
        return labelled

    def _hand_over(self, planned: list[Planned]) -> None:
        self.check_lock()
        self.stage_name = "handover"
        t = time.monotonic()
        self.progress.stage("handover", 2)
        results = go_operator.hand_over(self.cluster, self.operator, self.labelled,
                                        field_manager=self.options.field_manager, timeout=self.options.timeout,
                                        dry_run=self.options.dry_run)
        for r in results:
            self.report.add(r)
            self.progress.object_done(r.display, self.applier.verb(r.action), r.message)
        self.report.stages.append(StageResult("handover", time.monotonic() - t, len(results)))
        if results and not self.options.dry_run:
            read_live(self.cluster, planned, self.owner_label)  # releasing the CR's objects changed resourceVersions

    # -- Helm and kubectl installs -----------------------------------------------------
    def _helm_guard(self, planned: list[Planned], releases: list[helm.Release]) -> None:
        """A Helm release of Trainer (or owning what we render) is refused until handed over."""
        owners = {owner for p in planned if (owner := helm.owner_of((p.live or {}).get("metadata")))}
        self.helm = helm_handover.trainer_releases(releases, owners)
        for line in self.helm_unreadable:
            self.progress.message(f"warning: {line} (skipped: not read as a Helm release record)")
        for line in (n for r in releases for n in r.unreadable):
            self.progress.message(f"warning: {line} (its revision is not read; a hand-over still deletes the record)")
        if not self.helm.present:
            return
        if not self.options.take_over_helm:
            if not self.options.dry_run:
                raise PreflightError(self.helm.refusal())
            # A dry-run still shows the hand-over's plan, then ends with the refusal.
            self.refusal = self.refusal or self.helm.refusal()
        self.helm.check_namespace(self.namespace)
        if self.options.take_over_helm and not self.options.prune:
            raise InputError(f"{helm_handover.HAND_OVER_FLAG} and --no-prune: the hand-over prunes what the Helm "
                             "release had and the render does not (then forgets the release); drop --no-prune")
        self.release = helm_handover.release_objects(self.helm, self.discovery, self.objects)
        self.own_record = frozenset(self.previous.entries if self.previous else ())
        # What only the release names is proven at the prune, on the live object; until then it
        # is not written to our record (an interrupted run reads the release again).
        self.applier.unrecorded = frozenset(self.release.entries) - self.own_record
        self.applier.previous = helm_handover.with_release(self.previous, self.release, self.namespace)
        self.applier.options.more_legacy = helm_handover.helm_managers

    def _release_claim(self, ref: Ref, meta: dict):
        """What our own record names is ours by label; what only the release names is its only
        when the live object proves it (helm_handover.ReleaseObjects.claim)."""
        return None if ref.key in self.own_record else self.release.claim(ref, meta)

    def _adopted_from_helm(self, planned: list[Planned]) -> None:
        """Say which rendered objects were the release's, and remove Helm's marks our apply left
        (a mark another field manager also set, e.g. a `kubectl annotate`)."""
        results = {(r.group, r.kind, r.namespace, r.name): r for r in self.report.objects}
        for p in planned:
            release = next((r for r in self.helm.releases if r.owns((p.live or {}).get("metadata") or {})), None)
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
            self.cluster, self.helm, dry_run=self.options.dry_run,
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

    def _upgrade_guard(self, planned: list[Planned]) -> None:
        """The CRD compatibility check, skipped when every CRD is provably as we left it."""
        guard = self.options.upgrade_guard
        crds = [p for p in planned if p.ref.kind == "CustomResourceDefinition"]
        if guard is None or not crds or all(p.live is None for p in crds) \
                or all(self.applier.unchanged_since_last_apply(p) for p in crds):
            return
        try:
            upgrade = guard(self.cluster, self.objects, owner_label=self.owner_label,
                            allow_breaking=self.options.allow_breaking or self.options.dry_run)
        except TrainerctlError as exc:
            if getattr(exc, "report", None) is not None:
                self.report.upgrade = exc.report.to_dict()
            raise
        self.report.upgrade = upgrade.to_dict()


def _attempt(step: Callable[[], Any]) -> tuple[Any, BaseException | None]:
    try:
        return step(), None
    except TrainerctlError as exc:
        return None, exc


def _forbidden(error: BaseException | None) -> bool:
    return isinstance(error, ApiError) and error.status == 403


def _value(result: tuple[Any, BaseException | None]) -> Any:
    value, error = result
    if error is not None:
        raise error
    return value


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
        installer.check_lock = held.check
        installer.namespace_created = held.created_namespace
        installer.report.lock = held.acquired.to_dict()
        return installer.run()
