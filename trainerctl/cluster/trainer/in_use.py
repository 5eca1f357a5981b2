"""Which runtimes unfinished TrainJobs still reference: those are never pruned.

A TrainJob names its runtime in `spec.runtimeRef` (kind ClusterTrainingRuntime unless it says
TrainingRuntime, which is then looked up in the TrainJob's namespace). Deleting a runtime under a
suspended or running TrainJob breaks that job, so prune keeps it, names the job, and tries again
on a later install. A TrainJob is finished once its Complete or Failed condition is True.
"""

from __future__ import annotations

from trainerctl.cluster.manager.delete import remove_finalizer
from trainerctl.cluster.client.client import Cluster, object_path
from trainerctl.cluster.client.discovery import Discovery
from trainerctl.cluster.manager.objects import Ref, ref_of
from trainerctl.cluster.manager.prune import KeepRule
from trainerctl.cluster.manager.resource_manager import ResourceManager
from trainerctl.cluster.trainer.policy import GROUP, LEGACY_FINALIZER, RUNTIME_KINDS, is_runtime
from trainerctl.cluster.trainer.verify.views import TrainJob

KEPT_IN_USE = "kept: referenced by unfinished TrainJob"


def runtime_key(kind: str, namespace: str, name: str) -> tuple[str, str, str]:
    return kind, namespace if kind == "TrainingRuntime" else "", name


def unfinished_references(cluster: Cluster, discovery: Discovery) -> dict[tuple[str, str, str], list[str]]:
    """(runtime kind, namespace, name) -> the unfinished TrainJobs ("ns/name") that reference it."""
    res = discovery.preferred(GROUP, "TrainJob")
    if res is None:
        return {}
    out: dict[tuple[str, str, str], list[str]] = {}
    # A TrainJob that does not fit its view names no runtime we can trust: Unreadable (exit 3),
    # since pruning past it could delete the runtime it runs on.
    for page in cluster.pages(object_path(res.group, res.version, res.resource, None), items_checked=False):
        for job in map(TrainJob.read, page.get("items") or []):
            ref = job.runtime
            if job.finished or ref is None or ref.api_group != GROUP:
                continue
            key = runtime_key(ref.kind, job.meta.namespace, ref.name)
            out.setdefault(key, []).append(job.meta.display)
    return out


def referenced_by(refs: dict[tuple[str, str, str], list[str]], ref: Ref) -> list[str]:
    if not is_runtime(ref.group, ref.kind):
        return []
    return sorted(refs.get(runtime_key(ref.kind, ref.namespace, ref.name), []))


def keep_in_use(cluster: Cluster, discovery: Discovery, candidates: list[Ref]) -> KeepRule | None:
    """The prune rule that keeps runtimes unfinished TrainJobs reference (TrainJobs are read once,
    and only when a runtime is among the candidates). A kept runtime loses the legacy finalizer
    like every runtime an install keeps."""
    if not any(is_runtime(r.group, r.kind) for r in candidates):
        return None
    jobs = unfinished_references(cluster, discovery)

    def keep(ref: Ref, path: str, meta: dict, dry_run: bool) -> str:
        users = referenced_by(jobs, ref)
        if not users:
            return ""
        why = f"{KEPT_IN_USE} {', '.join(users)}"
        if LEGACY_FINALIZER in (meta.get("finalizers") or []):
            if not dry_run:
                remove_finalizer(cluster, path, meta, LEGACY_FINALIZER)
            why += f"; legacy finalizer {'would be ' if dry_run else ''}removed"
        return why

    return keep


def left_behind(resources: ResourceManager, objects: list[dict]) -> list[tuple[Ref, list[str]]]:
    """Runtimes with the ownership label that `objects` no longer has, each with the unfinished
    TrainJobs still using it (sorted). A GitOps engine never prunes runtimes (it cannot know what
    a TrainJob still needs), so these are what is left for someone to delete once no job uses it."""
    cluster, discovery = resources.cluster, resources.discovery
    rendered = {runtime_key(r.kind, r.namespace, r.name) for r in map(ref_of, objects) if is_runtime(r.group, r.kind)}
    types = [res for res in (discovery.preferred(GROUP, kind) for kind in RUNTIME_KINDS) if res is not None]
    found = [f for f in resources.find_labelled(types, everywhere=True)
             if runtime_key(f.ref.kind, f.ref.namespace, f.ref.name) not in rendered]
    if not found:
        return []
    jobs = unfinished_references(cluster, discovery)
    return [(f.ref, referenced_by(jobs, f.ref)) for f in sorted(found, key=lambda f: f.ref)]
