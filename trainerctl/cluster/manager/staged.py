"""One staged server-side apply run, in the spirit of Flux's ssa.ResourceManager: apply a stage's
objects in parallel, wait for what the stage needs, record every applied object in the inventory.

It knows nothing of what it installs; the caller decides the stages, what to wait for and when.

The no-op fast path: an object whose body hash and live resourceVersion both match what the
inventory recorded after our last apply is exactly as we left it, so applying the same body again
cannot change it; it is reported unchanged without a request. Anything touched since (by a
person, a controller or a takeover) is re-applied.
"""

from __future__ import annotations

import dataclasses
import json
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Mapping

from trainerctl.cluster.manager import inventory_configmap
from trainerctl.cluster.manager import diagnose, wait
from trainerctl.cluster.manager.apply import Applied, ApplyOptions, Planned, apply_one
from trainerctl.cluster.client.client import ApiError
from trainerctl.cluster.manager.fields import migrated_managed_fields
from trainerctl.cluster.manager.inventory_configmap import Entry, Inventory
from trainerctl.cluster.manager.objects import is_exempt
from trainerctl.cluster.client.pool import parallel_map
from trainerctl.cluster.manager.report import ObjectResult, Report

if TYPE_CHECKING:
    from trainerctl.cluster.manager.resource_manager import ResourceManager


def unchanged_since(previous: Inventory | None, p: Planned) -> bool:
    """Exactly as our last apply left it: its body hash and live resourceVersion are the ones recorded."""
    prev = previous.entries.get(p.ref.key) if previous else None
    rv = ((p.live or {}).get("metadata") or {}).get("resourceVersion")
    return bool(p.live is not None and prev and prev.hash == p.hash and prev.rv and prev.rv == rv)


@dataclass
class RunOptions:
    apply: ApplyOptions
    wait: bool = True
    # Field managers whose fields move to ours before we apply (an earlier installer's).
    legacy_managers: tuple[str, ...] = ()
    # Image reference -> where it came from, for a failed pull's cause (manager/diagnose.py).
    image_origins: Mapping[str, str] = field(default_factory=dict)
    # More of them for one object, from its live metadata (an installer whose manager name varies).
    more_legacy: Callable[[dict], tuple[str, ...]] | None = None
    # What a waited-for container's log means (manager/diagnose.py LogExplainer): the caller's reader.
    explain_log: diagnose.LogExplainer | None = None


class StagedApply:
    """State of one run: what was recorded before, what this run applied, the report."""

    def __init__(self, manager: "ResourceManager", *, options: RunOptions, report: Report,
                 previous: Inventory | None = None, unrecorded: frozenset[str] = frozenset()):
        self.manager = manager  # the session's client, discovery, namespace and progress
        self.cluster = manager.cluster
        self.discovery = manager.discovery
        self.namespace = manager.namespace
        self.progress = manager.progress
        self.options = options
        self.report = report
        self.previous = previous
        self.last_written = previous
        self.recorded: dict[str, Entry] = {}
        # Keys of `previous` that the record written before the apply leaves out: a previous
        # owner's objects not yet proven its (they are proven, or not, when pruned).
        self.unrecorded = unrecorded

    @property
    def dry_run(self) -> bool:
        return self.options.apply.dry_run

    @property
    def field_manager(self) -> str:
        return self.manager.field_manager

    def verb(self, action: str) -> str:
        return f"would be {action}" if self.dry_run and action not in ("failed", "unchanged") else action

    def unchanged_since_last_apply(self, p: Planned) -> bool:
        return unchanged_since(self.previous, p)

    # -- apply ----------------------------------------------------------------------------
    def apply_all(self, items: list[Planned]) -> list[ObjectResult]:
        deadline = time.monotonic() + self.options.apply.timeout
        return parallel_map(lambda p: self.apply(p, deadline), items)

    def apply(self, p: Planned, deadline: float) -> ObjectResult:
        result = ObjectResult(p.ref.kind, p.ref.name, p.ref.namespace, p.ref.group, p.stage, "unchanged")
        meta = (p.live or {}).get("metadata") or {}
        prev = self.previous.entries.get(p.ref.key) if self.previous else None
        if p.live is not None and is_exempt(meta):
            result.action, result.message = "skipped", 'trainerctl.io/managed is "false"'
            self.recorded[p.ref.key] = self.entry(p, meta.get("resourceVersion", ""))
        elif self.unchanged_since_last_apply(p):
            # Unchanged since our apply, so the live field set is still the one our apply left.
            self.recorded[p.ref.key] = prev if prev.fields else dataclasses.replace(
                prev, fields=inventory_configmap.fields_digest(meta, self.field_manager))
        else:
            self._apply_changed(p, result, meta, deadline)
        if result.took_over_from:
            verb = "would take" if self.dry_run else "took"
            result.add_note(f"{verb} over fields from " + ", ".join(result.took_over_from))
        self.report.add(result)
        self.progress.object_done(result.display, self.verb(result.action), result.message)
        return result

    def _apply_changed(self, p: Planned, result: ObjectResult, meta: dict, deadline: float) -> None:
        applied: Applied | None = None
        opts = self.options.apply
        legacy = self.options.legacy_managers
        if self.options.more_legacy is not None:
            legacy = (*legacy, *self.options.more_legacy(meta))
        if p.live is not None and not self.dry_run:
            try:
                took = self.manager.take_over(p.path, meta, p.res.api_version, legacy, deadline)
            except ApiError as exc:
                took, applied = None, Applied("failed", message=f"taking over managed fields: {exc}")
            if took:
                p.live["metadata"]["resourceVersion"], result.took_over_from = took
        elif p.live is not None:
            # A dry-run cannot move managed fields; the real run would take them over first, so
            # it may take them here too instead of reporting a conflict the real run will not have.
            moved = migrated_managed_fields(meta.get("managedFields") or [], self.field_manager,
                                            p.res.api_version, legacy)
            if moved:
                opts, result.took_over_from = dataclasses.replace(opts, force_conflicts=True), moved[1]
        applied = applied or apply_one(self.cluster, p, opts, deadline)
        result.action, result.message = applied.action, applied.message
        if result.took_over_from and applied.action == "unchanged":
            result.action = "configured"  # ownership moved even if no field did
        if applied.action != "failed":
            self.recorded[p.ref.key] = self.entry(p, applied.rv, applied.obj)
            p.applied = applied.obj

    def entry(self, p: Planned, rv: str, applied: dict | None = None) -> Entry:
        fields = inventory_configmap.fields_digest((applied or {}).get("metadata"), self.field_manager)
        return Entry(p.res.api_version, p.res.resource, p.res.namespaced, p.stage, p.hash, rv, fields)

    def note_rv(self, key: str, rv: str) -> None:
        entry = self.recorded.get(key)
        if entry and rv:
            self.recorded[key] = dataclasses.replace(entry, rv=rv)

    # -- waits ----------------------------------------------------------------------------
    def wait_crds(self, items: list[Planned]) -> None:
        if self.dry_run:
            return
        pending = []
        for p in items:
            obj = p.applied
            if wait.established_answer(obj):
                continue
            if obj is None and p.live is not None:
                continue  # unchanged since we saw it established
            pending.append(wait.Pending(p.ref.key, wait.crd_established(self.cluster, p.ref.name)))
        if pending:
            seen = wait.wait_all(pending, self.options.apply.timeout, self._on_wait("CRDs to be Established"),
                                 "CRDs to be Established")
            for key, rv in seen.items():
                self.note_rv(key, rv)

    def refresh_kinds(self, planned: list[Planned]) -> None:
        """After CRDs are Established: the kinds they define are served now."""
        if all(p.res.served for p in planned):
            return
        if not self.dry_run:
            self.discovery.refresh()
        for p in planned:
            if not p.res.served:
                res = self.discovery.lookup(p.res.api_version, p.ref.kind)
                if res is not None and res.served:
                    p.res = res

    def wait_controllers(self, planned: list[Planned], services: list[tuple[str, str, int]]) -> None:
        """Every Deployment rolled out, and a ready endpoint behind every webhook Service; while
        waiting, why not (manager/diagnose.py)."""
        if self.dry_run or not self.options.wait:
            return
        cluster, origins, explain = self.cluster, self.options.image_origins, self.options.explain_log
        pending = [wait.Pending(p.ref.key, wait.deployment_available(cluster, p.ref.namespace, p.ref.name),
                                diagnose=lambda logs, p=p: diagnose.deployment(
                                    cluster, p.ref.namespace, p.ref.name, logs=logs, image_origins=origins,
                                    explain_log=explain))
                   for p in planned if p.ref.kind == "Deployment" and p.ref.group == "apps"]
        for ns, name, port in services:
            pending.append(wait.Pending(f"Service {ns}/{name}", wait.service_endpoint_ready(cluster, ns, name, port),
                                        diagnose=lambda logs, ns=ns, name=name: diagnose.service(
                                            cluster, ns, name, logs=logs, image_origins=origins,
                                            explain_log=explain)))
        if not pending:
            return
        labels = {p.label: _pretty(p.label) for p in pending}
        for p in pending:
            p.label = labels[p.label]
        back = {v: k for k, v in labels.items()}
        seen = wait.wait_all(pending, self.options.apply.timeout, self._on_wait(""),
                             "the controllers (Deployment Available, webhook endpoints ready)")
        for label, rv in seen.items():
            self.note_rv(back[label], rv)

    def _on_wait(self, what: str):
        """Progress while waiting: the plain line says `what` (else each item, with its cause once
        known), the terminal's stage line each item with its cause or why it is not ready yet."""

        def on_wait(pending: list[wait.Pending], seconds: float) -> None:
            items = [f"{_brief(p.label, self.namespace)} ({why})" if (why := p.cause(seconds) or p.why)
                     else _brief(p.label, self.namespace) for p in pending]
            self.progress.waiting(what or ", ".join(p.shown(seconds) for p in pending), seconds, items=items)

        return on_wait

    # -- inventory ------------------------------------------------------------------------
    def write_inventory(self, planned: list[Planned], source: dict, complete: bool,
                        leftovers: dict[str, Entry] | None = None) -> None:
        """Before the apply (complete=False) the record grows to the union of old and new, so an
        interrupted run can still prune; after it, what this run applied plus `leftovers`."""
        if self.dry_run:
            return
        entries: dict[str, Entry] = {}
        if not complete and self.previous:
            entries.update((k, e) for k, e in self.previous.entries.items() if k not in self.unrecorded)
        if complete:
            entries.update(leftovers or {})
        for p in planned:
            entries[p.ref.key] = self.recorded.get(p.ref.key) or self.entry(p, "")
        if not complete and self.previous and set(entries) == set(self.previous.entries) - self.unrecorded \
                and json.loads(json.dumps(source)) == self.previous.source:  # as the record reads back
            return  # nothing new to remember before the apply
        # A new source is recorded before the apply too: while (or if) this run has not finished,
        # status describes what is being rolled out (and where its images came from).
        new = Inventory(self.namespace, source, entries, complete)
        if self.last_written and new.to_configmap() == self.last_written.to_configmap():
            return
        self.manager.write_inventory(new)
        self.last_written = new


def _pretty(label: str) -> str:
    if label.count("/") >= 3:
        group, kind, ns, name = label.split("/", 3)
        return f"{kind} {ns}/{name}" if ns else f"{kind} {name}"
    return label


def _brief(label: str, namespace: str) -> str:
    """A waited-for object as a stage line names it: the install's namespace goes without saying."""
    kind, _, name = _pretty(label).partition(" ")
    return f"{kind} {name.removeprefix(namespace + '/')}" if name else kind
