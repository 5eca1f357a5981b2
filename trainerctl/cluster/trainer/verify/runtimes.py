"""The runtimes verify tries: every ClusterTrainingRuntime, and the TrainingRuntimes of the
namespace verify works in; the TrainJob that names one."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from trainerctl.cluster.client.client import ApiError, Cluster, object_path
from trainerctl.cluster.client.views import Meta, read_each
from trainerctl.cluster.client.views.field_types import Cursor
from trainerctl.cluster.trainer.verify.owned import TRAINER_GROUP, TRAINER_VERSION

FRAMEWORK_LABEL = "trainer.kubeflow.org/framework"
CLUSTER_KIND, NAMESPACED_KIND = "ClusterTrainingRuntime", "TrainingRuntime"


@dataclass(frozen=True)
class Runtime:
    """A ClusterTrainingRuntime or TrainingRuntime, as verify reads it."""

    kind: str  # ClusterTrainingRuntime or TrainingRuntime
    name: str
    namespace: str  # "" for a ClusterTrainingRuntime
    framework: str  # its trainer.kubeflow.org/framework label
    templates: tuple[tuple[str, dict], ...] = ()  # (replicatedJob name, its pod template), sent as they are

    @classmethod
    def read(cls, raw: Any, kind: str = CLUSTER_KIND, namespace: str = "") -> "Runtime":
        obj = Cursor.of(kind, raw)
        meta = Meta.read(obj)
        templates = []
        for job in obj.mapping("spec").mapping("template").mapping("spec").mappings("replicatedJobs"):
            pod = job.mapping("template").mapping("spec").mapping("template")
            if pod.has("spec"):
                _template_fields(pod)
                templates.append((job.string("name", "?"), pod.data))
        return cls(kind, meta.name, namespace, meta.labels.get(FRAMEWORK_LABEL, ""), tuple(templates))

    @property
    def display(self) -> str:
        return f"{self.kind} {self.namespace + '/' if self.namespace else ''}{self.name}"

    def pod_templates(self) -> list[tuple[str, dict]]:
        """(replicatedJob name, pod template) of each of its replicated jobs."""
        return list(self.templates)


def _template_fields(pod: Cursor) -> None:
    """The fields of a pod template the namespace tier reads and fills in, of their types (or the
    runtime is unreadable): its labels and annotations, each container's image."""
    meta = pod.mapping("metadata")
    meta.string_map("labels"), meta.string_map("annotations")
    spec = pod.mapping("spec")
    for key in ("containers", "initContainers"):
        for container in spec.mappings(key):
            container.string("image")


def listed(cluster: Cluster, namespace: str | None, unreadable: list[str] | None = None) -> list[Runtime]:
    """ClusterTrainingRuntimes, then the TrainingRuntimes of `namespace`, each sorted by name; one
    that does not fit its view is a line in `unreadable`, and skipped. ApiError when they cannot be
    listed (the caller says which permission is missing)."""
    out = []
    for kind, resource, ns in ((CLUSTER_KIND, "clustertrainingruntimes", None),
                               (NAMESPACED_KIND, "trainingruntimes", namespace)):
        if kind == NAMESPACED_KIND and not namespace:
            continue
        items = cluster.items(object_path(TRAINER_GROUP, TRAINER_VERSION, resource, ns))
        out += read_each(lambda raw, kind=kind, ns=ns: Runtime.read(raw, kind, ns or ""), items,
                         unreadable if unreadable is not None else [])
    return sorted(out, key=lambda r: (r.kind != CLUSTER_KIND, r.name))


def rendered(objects: list[dict], namespace: str) -> list[Runtime]:
    """The runtimes among rendered objects (what an install would create), as `listed` gives them."""
    kinds = (CLUSTER_KIND, NAMESPACED_KIND)
    out = read_each(lambda o: Runtime.read(o, o["kind"], namespace if o["kind"] == NAMESPACED_KIND else ""),
                    [o for o in objects if isinstance(o, dict) and o.get("kind") in kinds], [])
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
