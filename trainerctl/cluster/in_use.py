"""Which runtimes unfinished TrainJobs still reference: those are never pruned.

A TrainJob names its runtime in `spec.runtimeRef` (kind ClusterTrainingRuntime unless it says
TrainingRuntime, which is then looked up in the TrainJob's namespace). Deleting a runtime under a
suspended or running TrainJob breaks that job, so prune keeps it, names the job, and tries again
on a later install. A TrainJob is finished once its Complete or Failed condition is True.
"""

from __future__ import annotations

from trainerctl.cluster.client import Cluster, object_path
from trainerctl.cluster.discovery import Discovery
from trainerctl.cluster.objects import Ref

GROUP = "trainer.kubeflow.org"
RUNTIME_KINDS = ("ClusterTrainingRuntime", "TrainingRuntime")
_FINISHED = ("Complete", "Failed")


def is_finished(job: dict) -> bool:
    return any(c.get("type") in _FINISHED and c.get("status") == "True"
               for c in (job.get("status") or {}).get("conditions") or [])


def runtime_key(kind: str, namespace: str, name: str) -> tuple[str, str, str]:
    return kind, namespace if kind == "TrainingRuntime" else "", name


def unfinished_references(cluster: Cluster, discovery: Discovery) -> dict[tuple[str, str, str], list[str]]:
    """(runtime kind, namespace, name) -> the unfinished TrainJobs ("ns/name") that reference it."""
    res = discovery.preferred(GROUP, "TrainJob")
    if res is None:
        return {}
    out: dict[tuple[str, str, str], list[str]] = {}
    path, token = object_path(res.group, res.version, res.resource, None), None
    while True:
        page = cluster.request("GET", path, query={"limit": "500", "continue": token})
        for job in page.get("items") or []:
            if is_finished(job):
                continue
            ref = (job.get("spec") or {}).get("runtimeRef") or {}
            if ref.get("apiGroup", GROUP) != GROUP or not ref.get("name"):
                continue
            meta = job.get("metadata") or {}
            key = runtime_key(ref.get("kind") or "ClusterTrainingRuntime", meta.get("namespace", ""), ref["name"])
            out.setdefault(key, []).append(f"{meta.get('namespace')}/{meta.get('name')}")
        token = (page.get("metadata") or {}).get("continue")
        if not token:
            return out


def referenced_by(refs: dict[tuple[str, str, str], list[str]], ref: Ref) -> list[str]:
    if ref.group != GROUP or ref.kind not in RUNTIME_KINDS:
        return []
    return sorted(refs.get(runtime_key(ref.kind, ref.namespace, ref.name), []))
