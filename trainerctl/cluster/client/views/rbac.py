"""The view of an rbac.authorization.k8s.io/v1 ClusterRoleBinding or RoleBinding: the role it
grants and to whom (what tells whether a binding points into a namespace)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from trainerctl.cluster.client.views.field_types import Cursor
from trainerctl.cluster.client.views.meta import Meta


@dataclass(frozen=True)
class Subject:
    kind: str
    name: str
    namespace: str = ""


@dataclass(frozen=True)
class RoleBinding:
    meta: Meta
    role_kind: str  # roleRef.kind: ClusterRole or Role
    role_name: str
    subjects: tuple[Subject, ...] = ()

    @classmethod
    def read(cls, raw: Any, kind: str = "ClusterRoleBinding") -> "RoleBinding":
        obj = Cursor.of(kind, raw)
        ref = obj.mapping("roleRef")
        return cls(Meta.read(obj), ref.string("kind", required=True), ref.string("name", required=True),
                   tuple(Subject(s.string("kind"), s.string("name"), s.string("namespace"))
                         for s in obj.mappings("subjects")))
