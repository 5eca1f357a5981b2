"""`install`: plan the rendered objects, apply them stage by stage, wait honestly, prune, record.

The no-op fast path: an object whose body hash and live resourceVersion both match what the
inventory recorded after our last apply is exactly as we left it, so applying the same body again
cannot change it; it is reported unchanged without a request. Anything touched since (by a
person, a controller or a takeover) is re-applied.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from trainerctl.cluster import go_operator, in_use, migration, preflight, wait
from trainerctl.cluster import inventory as inv_mod
from trainerctl.cluster.apply import Applied, ApplyOptions, Planned, apply_one, get_meta, strip_legacy_finalizer
from trainerctl.cluster.client import ApiError, Cluster, object_path
from trainerctl.cluster.discovery import Discovery
from trainerctl.cluster.inventory import Entry, Inventory
from trainerctl.cluster.objects import (DEFAULT_OWNER_LABEL, LEGACY_FINALIZER, Ref, body_hash, is_exempt,
                                        label_selector, parse_label, prepare, ref_of)
from trainerctl.cluster.pool import parallel_map
from trainerctl.cluster.prune import KEPT_IN_USE, prune
from trainerctl.cluster.report import ObjectResult, Report, StageResult
from trainerctl.cluster.stages import STAGES, WebhookRules, stage_of
from trainerctl.cluster.takeover import LEGACY_MANAGERS, migrated_managed_fields, take_over
from trainerctl.errors import EXIT_INTERRUPTED, EXIT_PREFLIGHT, InputError, PreflightError, TrainerctlError


@dataclass
class InstallOptions:
    field_manager: str = "trainerctl"
    force_conflicts: bool = False
    dry_run: bool = False
    wait: bool = True
    timeout: float = 300.0
    prune: bool = True
    recreate: bool = True
    skip_preflight: bool = False
    allow_breaking: bool = False  # apply even when upgrade-check finds a blocking CRD change
    legacy_managers: tuple[str, ...] = LEGACY_MANAGERS
    take_over_operator: bool = False  # stop the Go operator and release its CR first (go_operator.py)


class RunFailed(TrainerctlError):
    """Carries the partial report so the CLI can still print what was done."""

    def __init__(self, message: str, report: Report, exit_code: int | None = None):
        super().__init__(message, exit_code)
        self.report = report


def source_dict(source: Any) -> dict:
    if source is None:
        return {}
    if dataclasses.is_dataclass(source):
        return {k: v for k, v in dataclasses.asdict(source).items() if v not in (None, "")}
    return dict(source)


def ensure_namespace(objects: list[dict], namespace: str, owner_label: str) -> list[dict]:
    """The install namespace goes out like any rendered object (labelled; never pruned)."""
    if any(o.get("kind") == "Namespace" and (o.get("metadata") or {}).get("name") == namespace for o in objects):
        return objects
    key, value = parse_label(owner_label)
    ns = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace, "labels": {key: value}}}
    return [ns, *objects]


def plan(objects: list[dict], discovery: Discovery, namespace: str, field_manager: str) -> list[Planned]:
    rules = WebhookRules.from_objects(objects)
    planned: list[Planned] = []
    seen: set[str] = set()
    for obj in objects:
        res = discovery.lookup(obj.get("apiVersion", ""), obj.get("kind", ""))
        if res is None:
            raise PreflightError(f"{obj.get('kind')} {(obj.get('metadata') or {}).get('name')}: the cluster does "
                                 f"not serve {obj.get('apiVersion')} {obj.get('kind')} and no rendered CRD defines it")
        body = prepare(obj, res, namespace)
        ref = ref_of(body)
        if not ref.name:
            raise InputError(f"rendered {ref.kind} has no metadata.name")
        if ref.key in seen:
            raise InputError(f"rendered objects contain {ref} twice")
        seen.add(ref.key)
        stage = stage_of(ref.kind, res.group, res.resource, rules)
        planned.append(Planned(ref, res, body, stage, body_hash(body, field_manager)))
    return planned


def webhook_services(objects: list[dict]) -> list[tuple[str, str, int]]:
    """Services the rendered webhooks (admission and CRD conversion) call."""
    out: list[tuple[str, str, int]] = []
    for obj in objects:
        configs = []
        if obj.get("kind") in ("ValidatingWebhookConfiguration", "MutatingWebhookConfiguration"):
            configs = [h.get("clientConfig") or {} for h in obj.get("webhooks") or []]
        for cc in configs:
            svc = cc.get("service")
            if svc:
                item = (svc.get("namespace", ""), svc.get("name", ""), int(svc.get("port") or 443))
                if item not in out:
                    out.append(item)
    return out


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
        self.apply_opts = ApplyOptions(options.field_manager, options.force_conflicts, options.dry_run,
                                       options.recreate, options.timeout)
        self.previous: Inventory | None = None
        self.recorded: dict[str, Entry] = {}
        self.stage_name = "preflight"
        self.leftovers: dict[str, Entry] = {}
        self.last_written: Inventory | None = None
        self.operator = go_operator.OperatorState()
        self.refusal = ""  # a dry-run against a live operator still shows its plan, then fails with this

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
            failed.upgrade_report = getattr(exc, "report", None)  # UpgradeBlocked's, for the CLI to print
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
        t = time.monotonic()
        # Independent first reads go out together: they are most of a no-op run's latency.
        steps = [self.discovery.refresh, lambda: inv_mod.read(self.cluster, self.namespace),
                 lambda: go_operator.read_cr(self.cluster), lambda: go_operator.find_deployments(self.cluster)]
        if not self.options.skip_preflight:
            steps.insert(0, lambda: preflight.server_version(self.cluster))  # first: its error is the clearest
        results = parallel_map(lambda step: step(), steps)
        self.operator = go_operator.OperatorState(cr=results[-2], deployments=results[-1])
        self._operator_guard()
        self.discovery.add_rendered_crds(self.objects)
        self.previous = self.last_written = results[-3]
        if not self.options.skip_preflight:
            target = self.report.source.get("trainer_version")
            installed = (self.previous.source.get("trainer_version") if self.previous else None)
            preflight.run(self.cluster, self.discovery, self.objects, installed_version=installed,
                          target_version=target, version=results[0])
        planned = plan(self.objects, self.discovery, self.namespace, self.options.field_manager)
        self._read_live(planned)
        labelled = self._adopt_operator_install(planned)
        if not self.options.skip_preflight:
            self._upgrade_guard(planned)
        self.report.stages.append(StageResult("preflight", time.monotonic() - t, 0))
        self.progress.total = len(planned)
        if self.operator.present and self.options.take_over_operator:
            self._hand_over(planned, labelled)

        for spec in STAGES:
            items = [p for p in planned if p.stage == spec.name]
            if not items and not spec.wait:
                continue
            self.stage_name = spec.name
            t = time.monotonic()
            stage = StageResult(spec.name, objects=len(items))
            self.report.stages.append(stage)
            if items:
                self.progress.stage(spec.name, len(items))
                deadline = time.monotonic() + self.options.timeout
                results = parallel_map(lambda p: self._apply(p, deadline), items)
                failed = [r for r in results if r.action == "failed"]
                if failed:
                    stage.seconds = time.monotonic() - t
                    self._write_inventory(planned, complete=False)
                    first = failed[0]
                    raise RunFailed(f"{len(failed)} object(s) failed in stage {spec.name}: {first.display}: "
                                    f"{first.message}", self.report)
            if spec.name == "namespaces":
                self._write_inventory(planned, complete=False)  # superset first: a crash can still prune
            tw = time.monotonic()
            if spec.wait == "crds":
                self._wait_crds(items)
                self._refresh_kinds(planned)
            elif spec.wait == "controllers":
                self._wait_controllers(planned)
            if spec.name == "admitted":
                self._strip_legacy_finalizers(items)
            stage.waited_seconds = time.monotonic() - tw
            stage.seconds = time.monotonic() - t

        if self.options.prune and self.previous:
            self.stage_name = "prune"
            t = time.monotonic()
            current = {p.ref.key for p in planned}
            gone = {k: e for k, e in self.previous.entries.items() if k not in current}
            if gone:
                self.progress.stage("prune", len(gone))
                results = prune(self.cluster, self.discovery, gone, self.owner_label, dry_run=self.options.dry_run,
                                timeout=self.options.timeout,
                                on_done=lambda r: self.progress.object_done(r.display, self._verb(r.action), r.message),
                                in_use=self._in_use(gone))
                self.report.objects.extend(results)
                retry = {f"{r.group}/{r.kind}/{r.namespace}/{r.name}" for r in results
                         if r.action == "failed" or r.message.startswith(KEPT_IN_USE)}
                # What could not be pruned (or is still in use) stays on record, so a later run tries again.
                self.leftovers = {k: e for k, e in gone.items() if k in retry}
                self.report.stages.append(StageResult("prune", time.monotonic() - t, len(gone)))
        self._write_inventory(planned, complete=True)
        failed = self.report.failed
        if failed:
            raise RunFailed(f"{len(failed)} object(s) failed: {failed[0].display}: {failed[0].message}", self.report)
        if self.refusal:
            raise RunFailed(self.refusal, self.report, EXIT_PREFLIGHT)

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
        """With no inventory, what the operator applied here is the previous install (migration.py).

        The search lists every type by label, so it only runs when there is a sign of the operator:
        its CR or Deployment, or its field manager on an object we render."""
        if self.previous is not None and not (self.operator.cr is not None and self.options.take_over_operator):
            return []
        if not (self.operator.present or any(migration.managed_by_operator((p.live or {}).get("metadata"))
                                             for p in planned)):
            return []
        labelled = migration.labelled_objects(self.cluster, self.discovery, self.namespace, self.owner_label)
        if self.previous is None:
            self.previous = migration.seed(labelled, self.namespace, self.objects)
        return labelled

    def _hand_over(self, planned: list[Planned], labelled: list) -> None:
        self.stage_name = "handover"
        t = time.monotonic()
        self.progress.stage("handover", 2)
        results = go_operator.hand_over(self.cluster, self.operator, labelled, field_manager=self.options.field_manager,
                                        timeout=self.options.timeout, dry_run=self.options.dry_run)
        for r in results:
            self.report.add(r)
            self.progress.object_done(r.display, self._verb(r.action), r.message)
        self.report.stages.append(StageResult("handover", time.monotonic() - t, len(results)))
        if results and not self.options.dry_run:
            self._read_live(planned)  # releasing the CR's objects changed their resourceVersions

    def _in_use(self, gone: dict[str, Entry]):
        """Which runtimes among `gone` unfinished TrainJobs reference (read once, only if needed)."""
        refs = [Ref.from_key(k) for k in gone]
        if not any(r.group == in_use.GROUP and r.kind in in_use.RUNTIME_KINDS for r in refs):
            return None
        jobs = in_use.unfinished_references(self.cluster, self.discovery)
        return lambda ref: in_use.referenced_by(jobs, ref)

    def _strip_legacy_finalizers(self, items: list[Planned]) -> None:
        """Trainer 2.0-2.2 put a finalizer on runtimes in use; 2.3 only removes it. Like the operator,
        every install strips it from the runtimes it keeps, once the new controller runs."""
        results = {(r.group, r.kind, r.namespace, r.name): r for r in self.report.objects}
        for p in items:
            if p.ref.group != in_use.GROUP or p.ref.kind not in in_use.RUNTIME_KINDS:
                continue
            obj = getattr(p, "applied", None) or p.live or {}
            meta = obj.get("metadata") or {}
            if LEGACY_FINALIZER not in (meta.get("finalizers") or []) or is_exempt(meta):
                continue
            result = results.get((p.ref.group, p.ref.kind, p.ref.namespace, p.ref.name))
            if not self.options.dry_run:
                self._note_rv(p.ref.key, strip_legacy_finalizer(self.cluster, p.path, meta))
            if result is not None:
                note = f"legacy finalizer {LEGACY_FINALIZER} {'would be ' if self.options.dry_run else ''}removed"
                result.message = f"{result.message}; {note}" if result.message else note

    def _upgrade_guard(self, planned: list[Planned]) -> None:
        """The CRD compatibility check (issue 6), skipped when every CRD is provably as we left it."""
        crds = [p for p in planned if p.ref.kind == "CustomResourceDefinition"]
        if not crds or all(p.live is None for p in crds) or all(self._unchanged_since_last_apply(p) for p in crds):
            return
        from trainerctl.upgrade import UpgradeBlocked, guard

        try:
            upgrade = guard(self.cluster, self.objects, owner_label=self.owner_label,
                            allow_breaking=self.options.allow_breaking or self.options.dry_run)
        except UpgradeBlocked as exc:
            self.report.upgrade = exc.report.to_dict()
            raise
        self.report.upgrade = upgrade.to_dict()

    def _unchanged_since_last_apply(self, p: Planned) -> bool:
        prev = self.previous.entries.get(p.ref.key) if self.previous else None
        rv = ((p.live or {}).get("metadata") or {}).get("resourceVersion")
        return bool(p.live is not None and prev and prev.hash == p.hash and prev.rv and prev.rv == rv)

    def _read_live(self, planned: list[Planned]) -> None:
        namespaces = sorted({p.ref.namespace for p in planned if p.ref.namespace})
        existing = {ns for ns, m in zip(namespaces, parallel_map(
            lambda ns: get_meta(self.cluster, object_path("", "v1", "namespaces", None, ns)), namespaces)) if m}

        readable = [p for p in planned if p.res.served and not (p.ref.namespace and p.ref.namespace not in existing)]
        # One labelled LIST per resource and namespace finds what we installed in a few round trips
        # (most of a no-op run); what it misses (not ours yet, or gone) is looked up on its own.
        found = self._list_ours(readable)
        missing = [p for p in readable if p.path not in found]
        found.update(zip((p.path for p in missing), parallel_map(lambda p: get_meta(self.cluster, p.path), missing)))
        for p in planned:
            p.live = found.get(p.path)
            p.namespace_missing = bool(p.ref.namespace) and p.ref.namespace not in existing

    def _list_ours(self, planned: list[Planned]) -> dict[str, dict]:
        """Object path -> live metadata, for the planned objects carrying our label."""
        collections = sorted({p.path.rsplit("/", 1)[0] for p in planned})

        def list_one(path: str) -> list[dict]:
            try:
                return self.cluster.request("GET", path, query={"labelSelector": self.owner_label},
                                            accept=LIST_META).get("items") or []
            except ApiError as exc:
                if exc.status in (403, 404, 405):  # may get but not list: the GETs cover it
                    return []
                raise

        found = {}
        for path, items in zip(collections, parallel_map(list_one, collections)):
            for item in items:
                name = (item.get("metadata") or {}).get("name")
                if name:
                    found[object_path_in(path, name)] = item
        return found

    def _apply(self, p: Planned, deadline: float) -> ObjectResult:
        result = ObjectResult(p.ref.kind, p.ref.name, p.ref.namespace, p.ref.group, p.stage, "unchanged")
        meta = (p.live or {}).get("metadata") or {}
        prev = self.previous.entries.get(p.ref.key) if self.previous else None
        if p.live is not None and is_exempt(meta):
            result.action, result.message = "skipped", 'trainerctl.io/managed is "false"'
            self.recorded[p.ref.key] = self._entry(p, meta.get("resourceVersion", ""))
        elif self._unchanged_since_last_apply(p):
            # Unchanged since our apply, so the live field set is still the one our apply left.
            self.recorded[p.ref.key] = prev if prev.fields else dataclasses.replace(
                prev, fields=inv_mod.fields_digest(meta, self.options.field_manager))
        else:
            applied: Applied | None = None
            opts = self.apply_opts
            if p.live is not None and not self.options.dry_run:
                try:
                    took = take_over(self.cluster, p.path, meta, self.options.field_manager, p.res.api_version,
                                     self.options.legacy_managers)
                except ApiError as exc:
                    took, applied = None, Applied("failed", message=f"taking over managed fields: {exc}")
                if took:
                    p.live["metadata"]["resourceVersion"], result.took_over_from = took
            elif p.live is not None:
                # A dry-run cannot move managed fields; the real run would take them over first, so
                # it may take them here too instead of reporting a conflict the real run will not have.
                legacy = migrated_managed_fields(meta.get("managedFields") or [], self.options.field_manager,
                                                 p.res.api_version, self.options.legacy_managers)
                if legacy:
                    opts, result.took_over_from = dataclasses.replace(opts, force_conflicts=True), legacy[1]
            applied = applied or apply_one(self.cluster, p, opts, deadline)
            result.action, result.message = applied.action, applied.message
            if result.took_over_from and applied.action == "unchanged":
                result.action = "configured"  # ownership moved even if no field did
            if applied.action != "failed":
                self.recorded[p.ref.key] = self._entry(p, applied.rv, applied.obj)
                p.applied = applied.obj  # type: ignore[attr-defined]
        if result.took_over_from:
            verb = "would take" if self.options.dry_run else "took"
            result.message = (result.message + "; " if result.message else "") + \
                f"{verb} over fields from " + ", ".join(result.took_over_from)
        self.report.add(result)
        self.progress.object_done(result.display, self._verb(result.action), result.message)
        return result

    def _verb(self, action: str) -> str:
        return f"would be {action}" if self.options.dry_run and action not in ("failed", "unchanged") else action

    def _entry(self, p: Planned, rv: str, applied: dict | None = None) -> Entry:
        fields = inv_mod.fields_digest((applied or {}).get("metadata"), self.options.field_manager)
        return Entry(p.res.api_version, p.res.resource, p.res.namespaced, p.stage, p.hash, rv, fields)

    def _note_rv(self, key: str, rv: str) -> None:
        entry = self.recorded.get(key)
        if entry and rv:
            self.recorded[key] = dataclasses.replace(entry, rv=rv)

    def _wait_crds(self, items: list[Planned]) -> None:
        if self.options.dry_run:
            return
        pending = []
        for p in items:
            obj = getattr(p, "applied", None)
            if obj is not None and wait.crd_is_established(obj)[0]:
                continue
            if obj is None and p.live is not None:
                continue  # unchanged since we saw it established
            pending.append(wait.Pending(p.ref.key, wait.crd_established(self.cluster, p.ref.name)))
        if pending:
            seen = wait.wait_all(pending, self.options.timeout, self._on_wait("CRDs to be Established"),
                                 "CRDs to be Established")
            for key, rv in seen.items():
                self._note_rv(key, rv)

    def _refresh_kinds(self, planned: list[Planned]) -> None:
        if all(p.res.served for p in planned):
            return
        if not self.options.dry_run:
            self.discovery.refresh()
        for p in planned:
            if not p.res.served:
                res = self.discovery.lookup(p.res.api_version, p.ref.kind)
                if res is not None and res.served:
                    p.res = res

    def _wait_controllers(self, planned: list[Planned]) -> None:
        if self.options.dry_run or not self.options.wait:
            return
        pending = []
        for p in planned:
            if p.ref.kind == "Deployment" and p.ref.group == "apps":
                pending.append(wait.Pending(p.ref.key, wait.deployment_available(self.cluster, p.ref.namespace,
                                                                                p.ref.name)))
        for ns, name, port in webhook_services(self.objects):
            pending.append(wait.Pending(f"Service {ns}/{name}", wait.service_endpoint_ready(self.cluster, ns, name, port)))
        if not pending:
            return
        labels = {p.label: _pretty(p.label) for p in pending}
        for p in pending:
            p.label = labels[p.label]
        back = {v: k for k, v in labels.items()}
        seen = wait.wait_all(pending, self.options.timeout, self._on_wait(""),
                             "the controllers (Deployment Available, webhook endpoints ready)")
        for label, rv in seen.items():
            self._note_rv(back[label], rv)

    def _on_wait(self, what: str):
        return lambda pending, seconds: self.progress.waiting(what or pending, seconds)

    def _write_inventory(self, planned: list[Planned], complete: bool) -> None:
        if self.options.dry_run:
            return
        entries: dict[str, Entry] = {}
        if not complete and self.previous:
            entries.update(self.previous.entries)
        if complete:
            entries.update(self.leftovers)
        for p in planned:
            entries[p.ref.key] = self.recorded.get(p.ref.key) or self._entry(p, "")
        if not complete and self.previous and set(entries) == set(self.previous.entries):
            return  # nothing new to remember before the apply
        new = Inventory(self.namespace, self.report.source, entries, complete)
        if self.last_written and new.to_configmap() == self.last_written.to_configmap():
            return
        inv_mod.write(self.cluster, new, self.options.field_manager)
        self.last_written = new


LIST_META = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json"


def object_path_in(collection: str, name: str) -> str:
    return f"{collection}/{quote(name, safe='')}"


def _pretty(label: str) -> str:
    if label.count("/") >= 3:
        group, kind, ns, name = label.split("/", 3)
        return f"{kind} {ns}/{name}" if ns else f"{kind} {name}"
    return label


def install(objects: list[dict], *, cluster: Cluster, namespace: str, owner_label: str = DEFAULT_OWNER_LABEL,
            source: Any = None, options: InstallOptions | None = None, progress=None) -> Report:
    """Apply `objects` (a render) to the cluster; raises RunFailed (with .report) on failure."""
    from trainerctl.ui import Progress

    options = options or InstallOptions()
    progress = progress or Progress(len(objects), enabled=False)
    return Installer(cluster, objects, namespace=namespace, owner_label=owner_label, source=source_dict(source),
                     options=options, progress=progress).run()
