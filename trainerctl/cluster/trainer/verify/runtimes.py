"""The runtimes verify tries: every ClusterTrainingRuntime, and the TrainingRuntimes of the
namespace verify works in; the TrainJob that names one."""

from __future__ import annotations

from dataclasses import dataclass

from trainerctl.cluster.client.client import ApiError, Cluster, object_path
from trainerctl.cluster.trainer.verify.owned import TRAINER_GROUP, TRAINER_VERSION

FRAMEWORK_LABEL = "trainer.kubeflow.org/framework"
CLUSTER_KIND, NAMESPACED_KIND = "ClusterTrainingRuntime", "TrainingRuntime"


@dataclass(frozen=True)
class Runtime:
    kind: str  # ClusterTrainingRuntime or TrainingRuntime
    name: str
    namespace: str  # "" for a ClusterTrainingRuntime
    framework: str  # its trainer.kubeflow.org/framework label
    raw: dict

    @property
    def display(self) -> str:
        return f"{self.kind} {self.namespace + '/' if self.namespace else ''}{self.name}"

    def pod_templates(self) -> list[tuple[str, dict]]:
        """(replicatedJob name, pod template spec) of each of its replicated jobs."""
        spec = _dig(self.raw, "spec", "template", "spec")
        jobs = spec.get("replicatedJobs") if isinstance(spec.get("replicatedJobs"), list) else []
        out = []
        for job in jobs:
            pod = _dig(job, "template", "spec", "template")
            if isinstance(pod.get("spec"), dict):
                out.append((str(job.get("name", "?")), pod))
        return out


def _dig(obj, *keys: str) -> dict:
    for key in keys:
        obj = obj.get(key) if isinstance(obj, dict) else None
    return obj if isinstance(obj, dict) else {}


def listed(cluster: Cluster, namespace: str | None) -> list[Runtime]:
    """ClusterTrainingRuntimes, then the TrainingRuntimes of `namespace`, each sorted by name.
    ApiError when they cannot be listed (the caller says which permission is missing)."""
    out = []
    for kind, resource, ns in ((CLUSTER_KIND, "clustertrainingruntimes", None),
                               (NAMESPACED_KIND, "trainingruntimes", namespace)):
        if kind == NAMESPACED_KIND and not namespace:
            continue
        for raw in cluster.items(object_path(TRAINER_GROUP, TRAINER_VERSION, resource, ns)):
            meta = _dig(raw, "metadata")
            labels = meta.get("labels") if isinstance(meta.get("labels"), dict) else {}
            if isinstance(meta.get("name"), str):
                out.append(Runtime(kind, meta["name"], ns or "", str(labels.get(FRAMEWORK_LABEL, "")), raw))
    return sorted(out, key=lambda r: (r.kind != CLUSTER_KIND, r.name))


def rendered(objects: list[dict], namespace: str) -> list[Runtime]:
    """The runtimes among rendered objects (what an install would create), as `listed` gives them."""
    out = []
    for obj in objects:
        meta = _dig(obj, "metadata")
        if obj.get("kind") in (CLUSTER_KIND, NAMESPACED_KIND) and isinstance(meta.get("name"), str):
            labels = meta.get("labels") if isinstance(meta.get("labels"), dict) else {}
            ns = namespace if obj["kind"] == NAMESPACED_KIND else ""
            out.append(Runtime(obj["kind"], meta["name"], ns, str(labels.get(FRAMEWORK_LABEL, "")), obj))
    return sorted(out, key=lambda r: (r.kind != CLUSTER_KIND, r.name))


def default_runtime(runtimes: list[Runtime]) -> Runtime | None:
    """The first torch runtime, a CPU one when there is one (the run needs no accelerator)."""
    torch = [r for r in runtimes if r.framework == "torch"] or runtimes
    return next((r for r in torch if "cpu" in r.name), torch[0] if torch else None)


def find(runtimes: list[Runtime], name: str) -> Runtime | None:
    return next((r for r in runtimes if r.name == name and r.kind == NAMESPACED_KIND), None) or \
        next((r for r in runtimes if r.name == name), None)


def trainjob(runtime: Runtime, name: str, namespace: str, labels: dict[str, str], *, suspend: bool,
             trainer: dict | None = None) -> dict:
    """A TrainJob on `runtime`: no more than the runtime needs, one node."""
    spec: dict = {"runtimeRef": {"name": runtime.name, "apiGroup": TRAINER_GROUP, "kind": runtime.kind},
                  "trainer": {"numNodes": 1, **(trainer or {})}}
    if suspend:
        spec["suspend"] = True
    return {"apiVersion": f"{TRAINER_GROUP}/{TRAINER_VERSION}", "kind": "TrainJob",
            "metadata": {"name": name, "namespace": namespace, "labels": dict(labels)}, "spec": spec}


def forbidden_line(exc: ApiError, verb: str, what: str) -> str:
    return f"cannot {verb} {what}: {exc}" + (" (grant it, or run verify with more permission)"
                                             if exc.status == 403 else "")
