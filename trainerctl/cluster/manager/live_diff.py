"""Live objects against a server-side dry-run of the planned ones, like `kubectl diff`.

A dry-run result is the live object plus exactly what our apply would change, so comparing the
two shows only fields we manage; fields other managers own (replicas after `kubectl scale`, the
rotated caBundle) appear on both sides and never as drift.
"""

from __future__ import annotations

import dataclasses
import difflib
from dataclasses import dataclass, field
from typing import Callable

from trainerctl.cluster.manager.inventory_configmap import Inventory
from trainerctl.cluster.manager.apply import ApplyOptions, Planned, apply_patch, conflict_message, get_meta
from trainerctl.cluster.manager.webhook_retry import is_webhook_unavailable
from trainerctl.cluster.client.client import ApiError, Cluster, object_path
from trainerctl.cluster.client.discovery import Discovery
from trainerctl.cluster.manager.objects import Ref, is_exempt, parse_label
from trainerctl.cluster.manager.plan import ensure_namespace, plan
from trainerctl.cluster.client.pool import parallel_map
from trainerctl.cluster.manager.prune import resolve_entry
from trainerctl.cluster.manager.stages import StagePlan
from trainerctl.trust.serialize import Reported, yaml_text

_SERVER_META = ("managedFields", "resourceVersion", "generation", "uid", "creationTimestamp")


@dataclass
class ObjectDiff:
    ref: Ref
    state: str  # "unchanged" | "changed" | "create" | "prune" | "error" | "kept" (not rendered, left alone)
    text: str = ""
    message: str = ""


@dataclass
class DiffResult(Reported):
    """A dry-run diff: its text is the unified diff (each object's YAML made by serialize, as
    kubectl diff shows it)."""

    diffs: list[ObjectDiff] = field(default_factory=list)

    def to_dict(self) -> dict:
        return {"drift": self.drift, "objects": [{"object": d.ref.key, "state": d.state, "message": d.message,
                                                  "diff": d.text} for d in self.diffs]}

    @property
    def drift(self) -> bool:
        return any(d.state in ("changed", "create", "prune") for d in self.diffs)

    @property
    def errors(self) -> list[ObjectDiff]:
        return [d for d in self.diffs if d.state == "error"]

    def text(self) -> str:
        return "".join(d.text for d in self.diffs)


def clean(obj: dict | None) -> dict | None:
    if obj is None:
        return None
    out = {k: v for k, v in obj.items() if k != "status"}
    meta = {k: v for k, v in (out.get("metadata") or {}).items() if k not in _SERVER_META}
    out["metadata"] = meta
    return out


MASK, MASK_BEFORE, MASK_AFTER = "***", "*** (before)", "*** (after)"  # kubectl diff's masker


def mask_secrets(before: dict | None, after: dict | None) -> tuple[dict | None, dict | None]:
    """Secret values as `kubectl diff` shows them: never the value; a changed key as
    "*** (before)" / "*** (after)" so the change is still visible. stringData is masked too."""
    def is_secret(o: dict | None) -> bool:
        return isinstance(o, dict) and o.get("kind") == "Secret" and o.get("apiVersion") == "v1"

    if not (is_secret(before) or is_secret(after)):
        return before, after
    before, after = (dict(o) if isinstance(o, dict) else o for o in (before, after))
    for key in ("data", "stringData"):
        old = before.get(key) if isinstance(before, dict) and isinstance(before.get(key), dict) else None
        new = after.get(key) if isinstance(after, dict) and isinstance(after.get(key), dict) else None
        if old is not None:
            before[key] = {k: (MASK_BEFORE if new is not None and k in new and new[k] != v else MASK)
                           for k, v in old.items()}
        if new is not None:
            after[key] = {k: (MASK_AFTER if old is not None and k in old and old[k] != v else MASK)
                          for k, v in new.items()}
    return before, after


def unified(ref: Ref, before: dict | None, after: dict | None) -> str:
    before, after = mask_secrets(before, after)

    def lines(o: dict | None) -> list[str]:  # live objects, whole; their Secrets masked above
        return [] if o is None else yaml_text(o, whole=True, secrets=False, sort_keys=True,
                                              default_flow_style=False).splitlines(True)

    name = str(ref).replace(" ", "/")
    return "".join(difflib.unified_diff(lines(before), lines(after), f"live/{name}", f"render/{name}"))


def _one(cluster: Cluster, p: Planned, opts: ApplyOptions) -> ObjectDiff:
    if not p.res.served or p.namespace_missing:
        return ObjectDiff(p.ref, "create", unified(p.ref, None, p.body))
    try:
        live = cluster.request("GET", p.path)
    except ApiError as exc:
        if exc.status != 404:
            return ObjectDiff(p.ref, "error", message=str(exc))
        live = None
    if live is not None and is_exempt(live.get("metadata")):
        return ObjectDiff(p.ref, "unchanged", message='trainerctl.io/managed is "false"')
    note = ""
    try:
        try:
            _status, result = apply_patch(cluster, p, opts)
        except ApiError as exc:
            if exc.status != 409 or opts.force_conflicts:
                raise
            # Someone else took a field we render: show what taking it back would change.
            note = conflict_message(exc, p.ref)
            _status, result = apply_patch(cluster, p, dataclasses.replace(opts, force_conflicts=True))
    except ApiError as exc:
        if is_webhook_unavailable(exc):
            return ObjectDiff(p.ref, "error", message=f"admission webhook unreachable: {exc}")
        return ObjectDiff(p.ref, "error", message=str(exc))
    before, after = clean(live), clean(result)
    if before == after:
        return ObjectDiff(p.ref, "unchanged")
    header = f"# {p.ref}: {note}\n" if note else ""
    return ObjectDiff(p.ref, "create" if live is None else "changed", header + unified(p.ref, before, after), note)


class DiffMethods:
    """Diff: a method of the ResourceManager (resource_manager.py), which dry-runs through the
    session's client as its field manager and looks for what to prune by its ownership label."""

    cluster: Cluster
    namespace: str
    owner_label: str
    field_manager: str

    read_inventory: Callable[[], Inventory | None]  # InventoryMethods'

    def diff(self, objects: list[dict], *, stages: StagePlan, never_prune: frozenset[tuple[str, str]] = frozenset(),
             force_conflicts: bool = False) -> DiffResult:
        cluster, namespace = self.cluster, self.namespace
        # Its own discovery: the rendered CRDs it adds are this diff's, not the session's.
        discovery = Discovery(cluster)
        discovery.refresh()
        objects = ensure_namespace(objects, namespace, self.owner_label)
        discovery.add_rendered_crds(objects)
        planned = plan(objects, discovery, namespace, self.field_manager, stages)
        namespaces = sorted({p.ref.namespace for p in planned if p.ref.namespace})
        existing = set()
        for ns in namespaces:
            try:
                cluster.request("GET", object_path("", "v1", "namespaces", None, ns))
                existing.add(ns)
            except ApiError as exc:
                if exc.status != 404:
                    raise
        for p in planned:
            p.namespace_missing = bool(p.ref.namespace) and p.ref.namespace not in existing
        # A dry-run apply neither waits nor retries: no time budget to spend.
        opts = ApplyOptions(field_manager=self.field_manager, force_conflicts=force_conflicts, dry_run=True, timeout=0)
        result = DiffResult(parallel_map(lambda p: _one(cluster, p, opts), planned))
        result.diffs.extend(self._prunes(discovery, {p.ref.key for p in planned}, never_prune))
        return result

    def _prunes(self, discovery: Discovery, current: set[str],
                never_prune: frozenset[tuple[str, str]]) -> list[ObjectDiff]:
        """What an install would prune: in the inventory, labelled, no longer rendered."""
        cluster = self.cluster
        previous = self.read_inventory() if self.namespace else None
        if previous is None:
            return []
        key, value = parse_label(self.owner_label)
        out = []
        for k, entry in previous.entries.items():
            ref = Ref.from_key(k)
            if k in current or (ref.group, ref.kind) in never_prune:
                continue
            res = resolve_entry(discovery, ref, entry)
            if res is None:
                continue
            path = object_path(res.group, res.version, res.resource, ref.namespace or None, ref.name)
            meta = get_meta(cluster, path)
            md = (meta or {}).get("metadata") or {}
            if meta is None or (md.get("labels") or {}).get(key) != value or is_exempt(md):
                continue
            live = cluster.request("GET", path)
            out.append(ObjectDiff(ref, "prune", unified(ref, clean(live), None)))
        return out
