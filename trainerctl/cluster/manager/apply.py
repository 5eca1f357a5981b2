"""Server-side apply of one object, and what the server's answer means for the report."""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field

from trainerctl.cluster.client.client import ApiError, Cluster, object_path
from trainerctl.cluster.client.discovery import Resource
from trainerctl.cluster.manager.delete import PARTIAL_META, REFUSED, Proof, Target, delete_and_wait
from trainerctl.cluster.manager.objects import Ref
from trainerctl.cluster.manager.webhook_retry import until_webhook_answers

_CONFLICT = re.compile(r'conflicts? with "([^"]+)"')
_VOLATILE_META = ("managedFields", "resourceVersion", "generation")


@dataclass(frozen=True, kw_only=True)
class ApplyOptions:
    field_manager: str  # the caller's: the engine has no name of its own
    timeout: float  # budget for retrying webhook connection errors
    force_conflicts: bool = False
    dry_run: bool = False
    recreate: bool = True
    # (group, kind) deleted and recreated when the server says a field is immutable; others fail.
    recreate_kinds: frozenset[tuple[str, str]] = frozenset()
    # Finalizers no running controller will remove: stripped before a delete, which would hang.
    strip_finalizers: tuple[str, ...] = ()


@dataclass
class Planned:
    """One rendered object, ready to apply, with what we know about its live twin."""

    ref: Ref
    res: Resource
    body: dict
    stage: str
    hash: str
    live: dict | None = None  # live PartialObjectMetadata, None when absent
    namespace_missing: bool = False
    applied: dict | None = None  # the server's answer to our apply in this run

    @property
    def path(self) -> str:
        return object_path(self.res.group, self.res.version, self.res.resource, self.ref.namespace or None,
                           self.ref.name)


@dataclass
class Applied:
    action: str
    rv: str = ""
    message: str = ""
    obj: dict | None = None
    took_over_from: list[str] = field(default_factory=list)


def conflict_message(exc: ApiError, ref: Ref) -> str:
    managers: list[str] = []
    fields: list[str] = []
    for cause in exc.causes:
        m = _CONFLICT.search(cause.get("message", ""))
        if m and m.group(1) not in managers:
            managers.append(m.group(1))
        if cause.get("field"):
            fields.append(cause["field"])
    if not managers:
        managers = list(dict.fromkeys(_CONFLICT.findall(str(exc))))
    who = ", ".join(f'"{m}"' for m in managers) or "another field manager"
    where = f" on {', '.join(fields[:5])}" + (" ..." if len(fields) > 5 else "") if fields else ""
    return f"conflict with field manager {who}{where}; re-run with --force-conflicts to take ownership"


def apply_patch(cluster: Cluster, planned: Planned, opts: ApplyOptions) -> tuple[int, dict]:
    query = {"fieldManager": opts.field_manager, "force": "true" if opts.force_conflicts else "false"}
    if opts.dry_run:
        query["dryRun"] = "All"
    return cluster.call("PATCH", planned.path, body=planned.body, query=query,
                        content_type="application/apply-patch+yaml")


def comparable(obj: dict | None) -> dict | None:
    """An object without the fields every write (or dry-run) changes anyway."""
    if obj is None:
        return None
    out = dict(obj)
    meta = dict(out.get("metadata") or {})
    for key in _VOLATILE_META:
        meta.pop(key, None)
    out["metadata"] = meta
    return out


# Metadata an apply of ours can change; managedFields are compared per writer below.
_OWN_META = ("labels", "annotations", "finalizers", "ownerReferences", "generation")


def _wrote_nothing(before: dict, after: dict, manager: str) -> bool:
    """Did our apply leave the object as it was, judged from metadata alone (what plan read)?

    A new resourceVersion alone does not say so: a controller may have written in between (a
    Deployment's status, every few seconds in a rollout). Only when another writer's
    managedFields entry moved is the new version explained by someone else, and then our apply
    wrote nothing if our own entry, the generation (spec) and our metadata are all as before.
    """
    if before.get("resourceVersion") == after.get("resourceVersion"):
        return True

    def writers(meta: dict) -> tuple[dict, dict]:
        ours, others = {}, {}
        for e in meta.get("managedFields") or []:
            key = (e.get("manager"), e.get("operation"), e.get("subresource", ""))
            (ours if key == (manager, "Apply", "") else others)[key] = (e.get("time"), e.get("fieldsV1"))
        return ours, others

    ours_before, others_before = writers(before)
    ours_after, others_after = writers(after)
    if others_before == others_after:
        return False  # nobody else wrote: the new version is ours
    return ours_before == ours_after and all(before.get(k) == after.get(k) for k in _OWN_META)


def apply_one(cluster: Cluster, planned: Planned, opts: ApplyOptions, deadline: float) -> Applied:
    """Apply with retries of webhook connection errors until `deadline`; never raises ApiError."""
    if opts.dry_run and (not planned.res.served or planned.namespace_missing):
        why = "its CRD is not installed yet" if not planned.res.served else "its namespace does not exist yet"
        return Applied("created", message=f"not validated: {why}")
    try:
        status, out = until_webhook_answers(lambda: apply_patch(cluster, planned, opts), str(planned.ref), deadline)
        return Applied(_classify(cluster, planned, status, out, opts), out["metadata"].get("resourceVersion", ""),
                       obj=out)
    except ApiError as exc:
        if exc.status == 409 and exc.reason == "Conflict":
            return Applied("failed", message=conflict_message(exc, planned.ref))
        if exc.status == 422 and "immutable" in str(exc).lower():
            return _recreate(cluster, planned, opts, deadline, exc)
        if exc.status in (401,):
            raise
        return Applied("failed", message=str(exc))


def _classify(cluster: Cluster, planned: Planned, status: int, out: dict, opts: ApplyOptions) -> str:
    if status == 201 or planned.live is None:
        return "created"
    if not opts.dry_run:
        before = planned.live.get("metadata") or planned.live
        return "unchanged" if _wrote_nothing(before, out["metadata"], opts.field_manager) else "configured"
    # A dry-run does not bump the resourceVersion: compare content instead.
    live = cluster.request("GET", planned.path)
    return "unchanged" if comparable(live) == comparable(out) else "configured"


def _recreate(cluster: Cluster, planned: Planned, opts: ApplyOptions, deadline: float, exc: ApiError) -> Applied:
    ref = planned.ref
    first_line = str(exc).split("\n")[0]
    if (ref.group, ref.kind) not in opts.recreate_kinds:
        return Applied("failed", message=f"immutable field: {first_line}")
    if not opts.recreate:
        return Applied("failed", message=f"immutable field, not recreated (--no-recreate): {first_line}")
    if opts.dry_run:
        return Applied("recreated", message="an immutable field changed")
    # Recreated only when it is still the very object this run planned over (its uid as the plan
    # read it): whatever made the plan take it applies to that object alone.
    uid = ((planned.live or {}).get("metadata") or {}).get("uid") or ""
    if not uid:
        return Applied("failed", message=f"immutable field, not recreated (it appeared after the plan read it): "
                                         f"{first_line}")
    gone = delete_and_wait(cluster, Target.of(planned.res, ref.namespace, ref.name),
                           Proof("the apply's plan", uid=uid), min(deadline, time.monotonic() + 120),
                           strip_finalizers=opts.strip_finalizers)
    if gone.done == REFUSED:
        return Applied("failed", message=f"immutable field, not recreated ({gone.why}): {first_line}")
    status, out = until_webhook_answers(lambda: apply_patch(cluster, planned, opts), str(ref), deadline)
    return Applied("recreated", out["metadata"].get("resourceVersion", ""),
                   message=f"an immutable field changed: {first_line}", obj=out)


def get_meta(cluster: Cluster, path: str) -> dict | None:
    try:
        return cluster.request("GET", path, accept=PARTIAL_META)
    except ApiError as exc:
        if exc.status == 404:
            return None
        raise

