"""What every kind shares: object metadata and status conditions."""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass, field
from typing import Any

from trainerctl.cluster.client.views.field_types import DNS_LABEL, DNS_SUBDOMAIN, INT64, LABEL_NAME, SUBDOMAIN_NAME, Cursor


@dataclass(frozen=True)
class OwnerRef:
    kind: str
    name: str
    uid: str
    controller: bool


@dataclass(frozen=True)
class Meta:
    name: str
    namespace: str = ""
    uid: str = ""
    resource_version: str = ""
    generation: int = 0
    labels: dict[str, str] = field(default_factory=dict)
    annotations: dict[str, str] = field(default_factory=dict)
    owners: tuple[OwnerRef, ...] = ()
    deleting: bool = False  # deletionTimestamp is set
    created: _dt.datetime | None = None
    finalizers: tuple[str, ...] = ()

    @classmethod
    def read(cls, obj: Cursor, *, name_required: bool = True, k8s_names: bool = False) -> "Meta":
        """`k8s_names`: the name and namespace must keep Kubernetes' name rules (the kinds whose
        names trainerctl puts in paths and file names: pods, their containers, nodes)."""
        meta = obj.mapping("metadata")
        owners = tuple(OwnerRef(ref.string("kind"), ref.string("name"), ref.string("uid"), ref.boolean("controller"))
                       for ref in meta.mappings("ownerReferences"))
        name_rule, ns_rule = (SUBDOMAIN_NAME, LABEL_NAME) if k8s_names else (None, None)
        return cls(meta.string("name", required=name_required, rule=name_rule,
                               expected=DNS_SUBDOMAIN if k8s_names else ""),
                   meta.string("namespace", rule=ns_rule, expected=DNS_LABEL if k8s_names else ""),
                   meta.string("uid"), meta.string("resourceVersion"),
                   meta.integer("generation", 0, INT64, 0), meta.string_map("labels"), meta.string_map("annotations"),
                   owners, meta.time("deletionTimestamp") is not None, meta.time("creationTimestamp"),
                   meta.strings("finalizers"))

    @property
    def display(self) -> str:
        return f"{self.namespace}/{self.name}" if self.namespace else self.name

    def owned_by(self, uid: str) -> bool:
        return bool(uid) and any(ref.uid == uid for ref in self.owners)


@dataclass(frozen=True)
class Condition:
    type: str
    status: str
    reason: str = ""
    message: str = ""
    last_transition: _dt.datetime | None = None

    @classmethod
    def read_all(cls, status: Cursor) -> tuple["Condition", ...]:
        return tuple(cls(c.string("type"), c.string("status"), c.text("reason"), c.text("message"),
                         c.time("lastTransitionTime")) for c in status.mappings("conditions"))


NO_CONDITION = Condition("", "")


def condition(conditions: tuple[Condition, ...], type_: str) -> Condition:
    """The condition of that type, else an empty one."""
    return next((c for c in conditions if c.type == type_), NO_CONDITION)


def meta_of(kind: str, raw: Any) -> Meta:
    """The metadata of an object of any kind read as `kind` (one a command lists or made)."""
    return Meta.read(Cursor.of(kind, raw))
