"""The view of an apiextensions.k8s.io/v1 CustomResourceDefinition: names, versions, conditions.

Its schemas are not read here: the upgrade check reads them whole (api_shape.check_crd)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from trainerctl.cluster.client.views.field_types import Cursor
from trainerctl.cluster.client.views.meta import Condition, Meta


@dataclass(frozen=True)
class CRDVersion:
    name: str
    served: bool = False
    storage: bool = False


@dataclass(frozen=True)
class CRD:
    meta: Meta
    group: str = ""
    kind: str = ""
    plural: str = ""
    scope: str = ""
    versions: tuple[CRDVersion, ...] = ()
    conditions: tuple[Condition, ...] = ()
    stored_versions: tuple[str, ...] = field(default_factory=tuple)

    @classmethod
    def read(cls, raw: Any) -> "CRD":
        obj = Cursor.of("CustomResourceDefinition", raw)
        spec, status = obj.mapping("spec"), obj.mapping("status")
        names = spec.mapping("names")
        return cls(Meta.read(obj), spec.string("group"), names.string("kind"), names.string("plural"),
                   spec.string("scope"),
                   tuple(CRDVersion(v.string("name", required=True), v.boolean("served"), v.boolean("storage"))
                         for v in spec.mappings("versions")),
                   Condition.read_all(status), status.strings("storedVersions"))
