"""Typed views of the Trainer objects verify reads back from the server (the client's views,
trainerctl/cluster/client/views, hold the Kubernetes kinds): a TrainJob's metadata and
conditions, and the metadata of anything verify labelled. An object that does not fit raises
`Unreadable`, one line naming the object and the field; where verify can go on it skips it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from trainerctl.cluster.client.views import Condition, Meta, condition
from trainerctl.cluster.client.views.fields import Cursor


@dataclass(frozen=True)
class TrainJob:
    meta: Meta
    conditions: tuple[Condition, ...] = ()

    @classmethod
    def read(cls, raw: Any) -> "TrainJob":
        obj = Cursor.of("TrainJob", raw)
        return cls(Meta.read(obj), Condition.read_all(obj.mapping("status")))

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
    return Meta.read(Cursor.of(kind, raw))
