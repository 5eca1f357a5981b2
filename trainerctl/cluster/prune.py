"""Delete what the previous install applied and this one no longer renders.

An object is pruned only when it is in the previous inventory AND still carries our ownership
label AND is not exempted by `trainerctl.io/managed: "false"` AND no unfinished TrainJob
references it (a runtime). CRDs (their deletion deletes every custom resource), Leases (the
controller's), Namespaces and TrainJobs are never pruned.
"""

from __future__ import annotations

import time
from typing import Callable

from trainerctl.cluster.apply import delete_and_wait, get_meta, strip_legacy_finalizer
from trainerctl.cluster.client import ApiError, Cluster, object_path
from trainerctl.cluster.discovery import Discovery, split_api_version
from trainerctl.cluster.inventory import Entry
from trainerctl.cluster.objects import LEGACY_FINALIZER, Ref, is_exempt, parse_label
from trainerctl.cluster.pool import parallel_map
from trainerctl.cluster.report import ObjectResult
from trainerctl.cluster.stages import STAGE_INDEX

NEVER_PRUNE = frozenset({("apiextensions.k8s.io", "CustomResourceDefinition"), ("coordination.k8s.io", "Lease"),
                         ("", "Namespace"), ("trainer.kubeflow.org", "TrainJob")})
KEPT_IN_USE = "kept: referenced by unfinished TrainJob"


def resolve_entry(discovery: Discovery, ref: Ref, entry: Entry):
    """The resource for an inventory entry; None when its kind is no longer served."""
    res = discovery.lookup(entry.api_version, ref.kind)
    if res is None or not res.served:
        res = discovery.preferred(split_api_version(entry.api_version)[0], ref.kind)
    return res


def prune(cluster: Cluster, discovery: Discovery, candidates: dict[str, Entry], owner_label: str, *,
          dry_run: bool = False, timeout: float = 120.0, on_done=None,
          in_use: Callable[[Ref], list[str]] | None = None) -> list[ObjectResult]:
    """`in_use(ref)`: the unfinished TrainJobs that reference a runtime (kept, named in the result)."""
    label_key, label_value = parse_label(owner_label)
    results: list[ObjectResult] = []
    by_stage: dict[int, list[tuple[Ref, Entry]]] = {}
    for key, entry in candidates.items():
        ref = Ref.from_key(key)
        if (ref.group, ref.kind) in NEVER_PRUNE:
            continue
        by_stage.setdefault(STAGE_INDEX.get(entry.stage, len(STAGE_INDEX)), []).append((ref, entry))

    def one(item: tuple[Ref, Entry]) -> ObjectResult | None:
        ref, entry = item
        res = resolve_entry(discovery, ref, entry)
        if res is None:
            return None  # the kind is gone, so is the object
        path = object_path(res.group, res.version, res.resource, ref.namespace or None, ref.name)
        meta = get_meta(cluster, path)
        if meta is None:
            return None
        md = meta.get("metadata") or {}
        result = ObjectResult(ref.kind, ref.name, ref.namespace, ref.group, entry.stage, "pruned")
        if (md.get("labels") or {}).get(label_key) != label_value:
            result.action, result.message = "skipped", f"not pruned: no {owner_label} label"
        elif is_exempt(md):
            result.action, result.message = "skipped", 'not pruned: trainerctl.io/managed is "false"'
        elif in_use and (jobs := in_use(ref)):
            result.action, result.message = "skipped", f"{KEPT_IN_USE} {', '.join(jobs)}"
            if LEGACY_FINALIZER in (md.get("finalizers") or []):  # kept, so stripped like every runtime we keep
                if not dry_run:
                    strip_legacy_finalizer(cluster, path, md)
                result.message += f"; legacy finalizer {'would be ' if dry_run else ''}removed"
        else:
            try:
                delete_and_wait(cluster, path, time.monotonic() + timeout, dry_run=dry_run)
            except ApiError as exc:
                if exc.status != 404:
                    result.action, result.message = "failed", f"prune: {exc}"
        if on_done:
            on_done(result)
        return result

    # Reverse apply order: runtimes before the controller that validates them, RBAC last.
    for idx in sorted(by_stage, reverse=True):
        results.extend(r for r in parallel_map(one, sorted(by_stage[idx])) if r is not None)
    return results
