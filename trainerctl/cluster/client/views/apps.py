"""Views of apps/v1 kinds: Deployment and ReplicaSet, and the label selector they share."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from trainerctl.cluster.client.views.core import Container
from trainerctl.cluster.client.views.field_types import INT32, INT64, Cursor
from trainerctl.cluster.client.views.meta import Condition, Meta

REVISION_ANNOTATION = "deployment.kubernetes.io/revision"


@dataclass(frozen=True)
class Requirement:
    key: str
    operator: str
    values: tuple[str, ...] = ()


@dataclass(frozen=True)
class Selector:
    match_labels: dict[str, str] = field(default_factory=dict)
    expressions: tuple[Requirement, ...] = ()

    @classmethod
    def read(cls, sel: Cursor) -> "Selector":
        return cls(sel.string_map("matchLabels"),
                   tuple(Requirement(e.string("key", required=True), e.string("operator", required=True),
                                     e.strings("values")) for e in sel.mappings("matchExpressions")))

    def query(self) -> str:
        """The selector as a labelSelector query string."""
        parts = [f"{k}={v}" for k, v in sorted(self.match_labels.items())]
        for expr in self.expressions:
            values = ",".join(expr.values)
            parts.append({"In": f"{expr.key} in ({values})", "NotIn": f"{expr.key} notin ({values})",
                          "Exists": expr.key, "DoesNotExist": f"!{expr.key}"}.get(expr.operator, expr.key))
        return ",".join(parts)


@dataclass(frozen=True)
class ReplicaCounts:
    """A Deployment's or ReplicaSet's status counts (absent: 0)."""

    observed_generation: int = 0
    replicas: int = 0
    updated: int = 0
    ready: int = 0
    available: int = 0
    terminating: int = 0

    @classmethod
    def read(cls, status: Cursor) -> "ReplicaCounts":
        counts = [status.integer(key, 0, INT32, 0) for key in ("replicas", "updatedReplicas", "readyReplicas",
                                                                "availableReplicas", "terminatingReplicas")]
        return cls(status.integer("observedGeneration", 0, INT64, 0), *counts)


def _replicas(spec: Cursor) -> int:
    return spec.integer("replicas", 0, INT32, 1)  # absent or null: the API's default, 1


@dataclass(frozen=True)
class Deployment:
    meta: Meta
    replicas: int = 1  # wanted (spec.replicas)
    selector: Selector = Selector()
    containers: tuple[Container, ...] = ()  # of the pod template
    status: ReplicaCounts = ReplicaCounts()
    conditions: tuple[Condition, ...] = ()

    @classmethod
    def read(cls, raw: Any) -> "Deployment":
        obj = Cursor.of("Deployment", raw)
        spec, status = obj.mapping("spec"), obj.mapping("status")
        pod_spec = spec.mapping("template").mapping("spec")
        return cls(Meta.read(obj), _replicas(spec), Selector.read(spec.mapping("selector")),
                   Container.read_all(pod_spec, "containers"), ReplicaCounts.read(status), Condition.read_all(status))

    @property
    def display(self) -> str:
        return f"Deployment {self.meta.display}"


@dataclass(frozen=True)
class ReplicaSet:
    meta: Meta
    revision: int = 0  # the deployment controller's revision annotation (0: none)
    replicas: int = 1
    status: ReplicaCounts = ReplicaCounts()
    conditions: tuple[Condition, ...] = ()

    @classmethod
    def read(cls, raw: Any) -> "ReplicaSet":
        obj = Cursor.of("ReplicaSet", raw)
        meta = Meta.read(obj)
        spec, status = obj.mapping("spec"), obj.mapping("status")
        return cls(meta, _revision(obj, meta), _replicas(spec), ReplicaCounts.read(status), Condition.read_all(status))


def _revision(obj: Cursor, meta: Meta) -> int:
    text = meta.annotations.get(REVISION_ANNOTATION)
    if text is None:
        return 0
    if not (text.isascii() and text.isdigit() and len(text) <= 18):
        raise obj.mapping("metadata").mapping("annotations").fail(REVISION_ANNOTATION, "a revision number", text)
    return int(text)
