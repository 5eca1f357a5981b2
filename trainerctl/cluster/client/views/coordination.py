"""The view of a coordination.k8s.io/v1 Lease (the install lock is one)."""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass
from typing import Any

from trainerctl.cluster.client.views.field_types import INT32, Cursor, Unreadable
from trainerctl.cluster.client.views.meta import Meta


@dataclass(frozen=True)
class Lease:
    meta: Meta
    holder: str = ""  # spec.holderIdentity; "" when released
    acquired: _dt.datetime | None = None
    renewed: _dt.datetime | None = None
    duration: int | None = None  # leaseDurationSeconds
    transitions: int = 0

    @classmethod
    def read(cls, raw: Any) -> "Lease":
        obj = Cursor.of("Lease", raw)
        spec = obj.mapping("spec")
        return cls(Meta.read(obj, name_required=False), spec.string("holderIdentity"), spec.micro_time("acquireTime"),
                   spec.micro_time("renewTime"), spec.integer("leaseDurationSeconds", 1, INT32),
                   spec.integer("leaseTransitions", 0, INT32, 0))

    @staticmethod
    def read_meta(raw: Any) -> Meta:
        """Only the metadata: what guards a write to a Lease whose spec does not fit."""
        return Meta.read(Cursor.of("Lease", raw), name_required=False)

    def version(self) -> str:
        """The resourceVersion an update or delete is guarded by; a Lease the server answers
        without one cannot be guarded, so it is unreadable for that purpose."""
        if not self.meta.resource_version:
            raise Unreadable("Lease", self.meta.display, "metadata.resourceVersion", "a non-empty string")
        return self.meta.resource_version
