"""Views of core/v1 kinds: Pod (its containers and their statuses), Event, Node, ConfigMap."""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass, field
from typing import Any

from trainerctl.cluster.client.views.field_types import DNS_LABEL, INT32, LABEL_NAME, Cursor
from trainerctl.cluster.client.views.meta import Condition, Meta

_INT32_MIN = -(2**31)


@dataclass(frozen=True)
class Container:
    name: str
    image: str = ""

    @classmethod
    def read_all(cls, spec: Cursor, key: str) -> tuple["Container", ...]:
        return tuple(cls(c.string("name", required=True, rule=LABEL_NAME, expected=DNS_LABEL), c.string("image"))
                     for c in spec.mappings(key))


@dataclass(frozen=True)
class Waiting:
    reason: str = ""
    message: str = ""


@dataclass(frozen=True)
class Terminated:
    exit_code: int = 0
    reason: str = ""
    message: str = ""


@dataclass(frozen=True)
class ContainerState:
    waiting: Waiting | None = None
    running: bool = False
    terminated: Terminated | None = None

    @classmethod
    def read(cls, state: Cursor) -> "ContainerState":
        waiting = Waiting(state.mapping("waiting").text("reason"), state.mapping("waiting").text("message")) \
            if state.has("waiting") else None
        term = state.mapping("terminated")
        terminated = Terminated(term.integer("exitCode", _INT32_MIN, INT32, 0), term.text("reason"),
                                term.text("message")) if state.has("terminated") else None
        state.mapping("running")  # its type checked; only its presence is read
        return cls(waiting, state.has("running"), terminated)


@dataclass(frozen=True)
class ContainerStatus:
    name: str
    image: str = ""
    ready: bool = False
    restarts: int = 0
    state: ContainerState = ContainerState()
    last_state: ContainerState = ContainerState()

    @classmethod
    def read_all(cls, status: Cursor, key: str) -> tuple["ContainerStatus", ...]:
        return tuple(cls(c.string("name", required=True, rule=LABEL_NAME, expected=DNS_LABEL), c.string("image"),
                         c.boolean("ready"), c.integer("restartCount", 0, INT32, 0),
                         ContainerState.read(c.mapping("state")), ContainerState.read(c.mapping("lastState")))
                     for c in status.mappings(key))


@dataclass(frozen=True)
class Pod:
    meta: Meta
    containers: tuple[Container, ...] = ()
    init_containers: tuple[Container, ...] = ()
    phase: str = ""
    reason: str = ""
    message: str = ""
    conditions: tuple[Condition, ...] = ()
    statuses: tuple[ContainerStatus, ...] = ()
    init_statuses: tuple[ContainerStatus, ...] = ()

    @classmethod
    def read(cls, raw: Any) -> "Pod":
        obj = Cursor.of("Pod", raw)
        meta = Meta.read(obj, k8s_names=True)
        spec, status = obj.mapping("spec"), obj.mapping("status")
        return cls(meta, Container.read_all(spec, "containers"), Container.read_all(spec, "initContainers"),
                   status.string("phase"), status.text("reason"), status.text("message"),
                   Condition.read_all(status), ContainerStatus.read_all(status, "containerStatuses"),
                   ContainerStatus.read_all(status, "initContainerStatuses"))

    @property
    def name(self) -> str:
        return self.meta.name

    @property
    def namespace(self) -> str:
        return self.meta.namespace


@dataclass(frozen=True)
class ObjectRef:
    kind: str = ""
    name: str = ""
    namespace: str = ""
    uid: str = ""


@dataclass(frozen=True)
class Event:
    meta: Meta
    involved: ObjectRef = ObjectRef()
    reason: str = ""
    message: str = ""
    type: str = ""
    count: int = 0
    source: str = ""  # the component that reported it
    first: _dt.datetime | None = None
    last: _dt.datetime | None = None
    event_time: _dt.datetime | None = None
    series_count: int = 0
    series_last: _dt.datetime | None = None

    @classmethod
    def read(cls, raw: Any) -> "Event":
        obj = Cursor.of("Event", raw)
        ref, series = obj.mapping("involvedObject"), obj.mapping("series")
        return cls(Meta.read(obj, name_required=False),
                   ObjectRef(ref.string("kind"), ref.string("name"), ref.string("namespace"), ref.string("uid")),
                   obj.text("reason"), obj.text("message"), obj.string("type"), obj.integer("count", 0, INT32, 0),
                   obj.mapping("source").string("component") or obj.string("reportingComponent"),
                   obj.time("firstTimestamp"), obj.time("lastTimestamp"), obj.micro_time("eventTime"),
                   series.integer("count", 0, INT32, 0), series.micro_time("lastObservedTime"))

    @property
    def last_seen(self) -> _dt.datetime | None:
        return self.series_last or self.last or self.event_time or self.first

    @property
    def times(self) -> int:
        return self.count or self.series_count or 1


_EPOCH = _dt.datetime(1, 1, 1, tzinfo=_dt.timezone.utc)


def by_time(event: Event) -> _dt.datetime:
    """Sort key: oldest first, events without any time before all others."""
    return event.last_seen or _EPOCH


@dataclass(frozen=True)
class Taint:
    key: str
    value: str = ""
    effect: str = ""


@dataclass(frozen=True)
class Node:
    meta: Meta
    unschedulable: bool = False
    taints: tuple[Taint, ...] = ()
    conditions: tuple[Condition, ...] = ()
    node_info: dict[str, str] = field(default_factory=dict)  # versions, and machine ids
    allocatable: dict[str, str] = field(default_factory=dict)

    @classmethod
    def read(cls, raw: Any) -> "Node":
        obj = Cursor.of("Node", raw)
        spec, status = obj.mapping("spec"), obj.mapping("status")
        return cls(Meta.read(obj, k8s_names=True), spec.boolean("unschedulable"),
                   tuple(Taint(t.string("key"), t.string("value"), t.string("effect")) for t in spec.mappings("taints")),
                   Condition.read_all(status), status.string_map("nodeInfo"), status.string_map("allocatable"))


@dataclass(frozen=True)
class ConfigMap:
    meta: Meta
    data: dict[str, str] = field(default_factory=dict)

    @classmethod
    def read(cls, raw: Any) -> "ConfigMap":
        obj = Cursor.of("ConfigMap", raw)
        return cls(Meta.read(obj), obj.string_map("data"))
