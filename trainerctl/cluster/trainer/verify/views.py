"""Typed views of the Trainer objects verify reads back from the server (the client's views,
trainerctl/cluster/client/views, hold the Kubernetes kinds): a TrainJob's metadata, conditions and
runtime (which prune reads too: trainer/in_use.py), and the metadata of anything verify labelled.
An object that does not fit raises `Unreadable`, one line naming the object and the field; where
verify can go on it skips it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from trainerctl.cluster.client.views import Condition, Meta, condition, meta_of
from trainerctl.cluster.client.views.field_types import Cursor


TRAINER_GROUP = "trainer.kubeflow.org"


@dataclass(frozen=True)
class RuntimeRef:
    """spec.runtimeRef: the API's defaults for what it leaves out."""

    name: str
    kind: str = "ClusterTrainingRuntime"
    api_group: str = TRAINER_GROUP


@dataclass(frozen=True)
class TrainJob:
    meta: Meta
    conditions: tuple[Condition, ...] = ()
    runtime: RuntimeRef | None = None  # None: it names no runtime

    @classmethod
    def read(cls, raw: Any) -> "TrainJob":
        obj = Cursor.of("TrainJob", raw)
        ref = obj.mapping("spec").mapping("runtimeRef")
        name = ref.string("name")
        runtime = RuntimeRef(name, ref.string("kind") or RuntimeRef.kind,
                             ref.string("apiGroup") or RuntimeRef.api_group) if name else None
        return cls(Meta.read(obj), Condition.read_all(obj.mapping("status")), runtime)

    @property
    def finished(self) -> bool:
        """Complete or Failed: it needs its runtime no more."""
        return any(condition(self.conditions, t).status == "True" for t in ("Complete", "Failed"))

    @property
    def complete(self) -> bool:
        return condition(self.conditions, "Complete").status == "True"

    @property
    def failed(self) -> str:
        """Why it failed ("" while it has not): its Failed condition's message or reason."""
        failed = condition(self.conditions, "Failed")
        return (failed.message or failed.reason or "Failed") if failed.status == "True" else ""


def meta(kind: str, raw: Any) -> Meta:
    """The metadata of an object of any kind verify made or lists (a Namespace, a Job)."""
    return meta_of(kind, raw)
