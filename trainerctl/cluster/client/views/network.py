"""Views of a Service and an EndpointSlice (discovery.k8s.io/v1): what a webhook's wait reads."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from trainerctl.cluster.client.views.field_types import Cursor
from trainerctl.cluster.client.views.meta import Meta

_PORT = 65535


@dataclass(frozen=True)
class ServicePort:
    name: str
    port: int
    target: str  # targetPort: a number or a name, as text


@dataclass(frozen=True)
class Service:
    meta: Meta
    selector: dict[str, str] = field(default_factory=dict)
    ports: tuple[ServicePort, ...] = ()

    @classmethod
    def read(cls, raw: Any) -> "Service":
        obj = Cursor.of("Service", raw)
        spec = obj.mapping("spec")
        ports = []
        for p in spec.mappings("ports"):
            port = p.integer("port", 1, _PORT, 0)
            target = p.int_or_string("targetPort", 1, _PORT, "a port number or name")
            ports.append(ServicePort(p.string("name"), port, str(target or port)))
        return cls(Meta.read(obj), spec.string_map("selector"), tuple(ports))


@dataclass(frozen=True)
class EndpointSlice:
    meta: Meta
    ports: tuple[tuple[str, int], ...] = ()  # (name, port)
    ready: int = 0  # endpoints with an address that are not known to be unready

    @classmethod
    def read(cls, raw: Any) -> "EndpointSlice":
        obj = Cursor.of("EndpointSlice", raw)
        ports = tuple((p.string("name"), p.integer("port", 0, _PORT, 0)) for p in obj.mappings("ports"))
        ready = 0
        for ep in obj.mappings("endpoints"):
            # ready: "nil should be interpreted as true" (the EndpointConditions API)
            if ep.mapping("conditions").boolean("ready", True) and ep.strings("addresses"):
                ready += 1
        return cls(Meta.read(obj, name_required=False), ports, ready)
