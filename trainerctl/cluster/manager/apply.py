"""Server-side apply of one object, and what the server's answer means for the report."""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field

from trainerctl.cluster.client.client import ApiError, Cluster, object_path
from trainerctl.cluster.client.discovery import Resource
from trainerctl.cluster.manager.objects import Ref
from trainerctl.cluster.manager.webhook_retry import until_webhook_answers
from trainerctl.errors import WaitTimeout

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
    delete_and_wait(cluster, planned.path, min(deadline, time.monotonic() + 120), strip_finalizers=opts.strip_finalizers)
    status, out = until_webhook_answers(lambda: apply_patch(cluster, planned, opts), str(ref), deadline)
    return Applied("recreated", out["metadata"].get("resourceVersion", ""),
                   message=f"an immutable field changed: {first_line}", obj=out)


def remove_finalizer(cluster: Cluster, path: str, meta: dict, finalizer: str, deadline: float | None = None) -> str:
    """Remove one finalizer, guarded by its position; the new resourceVersion, or "" when absent."""
    finalizers = meta.get("finalizers") or []
    if finalizer not in finalizers:
        return ""
    idx = finalizers.index(finalizer)
    patch = [{"op": "test", "path": f"/metadata/finalizers/{idx}", "value": finalizer},
             {"op": "remove", "path": f"/metadata/finalizers/{idx}"}]
    out = until_webhook_answers(
        lambda: cluster.request("PATCH", path, body=patch, content_type="application/json-patch+json"),
        f"removing finalizer {finalizer} from {path}", deadline)
    return (out.get("metadata") or {}).get("resourceVersion", "") or "stripped"


def delete_and_wait(cluster: Cluster, path: str, deadline: float, dry_run: bool = False,
                    strip_finalizers: tuple[str, ...] = ()) -> bool:
    """Delete (background propagation: no garbage-collector round trip); False if already gone.

    `strip_finalizers` are removed first: finalizers whose controller is gone would hold the
    delete forever. They are removed again while it waits: a controller may put one back between
    our removal and the DELETE, and once the object is being deleted nobody can add one again, so
    one more removal ends the wait."""
    try:
        meta = cluster.request("GET", path, accept=PARTIAL_META)
        if not dry_run:
            for finalizer in strip_finalizers:
                if remove_finalizer(cluster, path, meta.get("metadata") or {}, finalizer, deadline):
                    meta = cluster.request("GET", path, accept=PARTIAL_META)
        # With a body, the API server reads every delete option from it and ignores the query:
        # dryRun must be in the body, or a "dry-run" deletes for real.
        options = {"propagationPolicy": "Background", **({"dryRun": ["All"]} if dry_run else {})}
        cluster.request("DELETE", path, body=options)
    except ApiError as exc:
        if exc.status == 404:
            return False
        raise
    if dry_run:
        return True
    delay = 0.05
    while True:
        try:
            meta = cluster.request("GET", path, accept=PARTIAL_META).get("metadata") or {}
            back = next((f for f in strip_finalizers if f in (meta.get("finalizers") or [])), None)
            if back is not None and time.monotonic() <= deadline:
                remove_finalizer(cluster, path, meta, back, deadline)
                continue  # read it again: its finalizers moved
        except ApiError as exc:
            if exc.status == 404:
                return True
            if exc.status not in (409, 422):  # the finalizers changed under the guarded patch: read again
                raise
        if time.monotonic() > deadline:
            raise WaitTimeout(f"timed out waiting for {path} to be deleted")
        time.sleep(delay)
        delay = min(delay * 2, 1.0)


PARTIAL_META = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json"


def get_meta(cluster: Cluster, path: str) -> dict | None:
    try:
        return cluster.request("GET", path, accept=PARTIAL_META)
    except ApiError as exc:
        if exc.status == 404:
            return None
        raise

