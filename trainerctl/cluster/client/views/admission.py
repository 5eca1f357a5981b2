"""The view of an admissionregistration.k8s.io/v1 Validating- or MutatingWebhookConfiguration:
each webhook's name, where the API server calls it (a Service or a URL) and the API groups it
judges. What explains a failed webhook call reads it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from trainerctl.cluster.client.views.field_types import Cursor, Unreadable
from trainerctl.cluster.client.views.meta import Meta

_PORT = 65535


@dataclass(frozen=True)
class ServiceRef:
    namespace: str
    name: str
    port: int = 443  # the API's default


@dataclass(frozen=True)
class Webhook:
    name: str
    service: ServiceRef | None = None
    url: str = ""
    groups: tuple[str, ...] = ()  # the API groups of its rules
    rules: tuple[tuple[str, str], ...] = ()  # (API group, resource without its subresource) its rules match

    @classmethod
    def read(cls, hook: Cursor) -> "Webhook":
        client = hook.mapping("clientConfig")
        service = None
        if client.has("service"):
            svc = client.mapping("service")
            service = ServiceRef(svc.string("namespace", required=True), svc.string("name", required=True),
                                 svc.integer("port", 1, _PORT, 443))
        rules = [(rule.strings("apiGroups"), rule.strings("resources")) for rule in hook.mappings("rules")]
        groups = tuple(dict.fromkeys(g for found, _ in rules for g in found))
        pairs = tuple(dict.fromkeys((g, r.split("/")[0]) for found, resources in rules for g in found for r in resources))
        return cls(hook.string("name", required=True), service, client.string("url"), groups, pairs)


@dataclass(frozen=True)
class WebhookConfiguration:
    meta: Meta
    kind: str
    webhooks: tuple[Webhook, ...] = ()
    unreadable: tuple[str, ...] = ()  # one line per webhook that does not fit (skipped: the others still explain)

    @classmethod
    def read(cls, raw: Any, kind: str = "ValidatingWebhookConfiguration", *, strict: bool = False
             ) -> "WebhookConfiguration":
        """`strict`: a webhook that does not fit is Unreadable, not skipped (for a caller that
        cannot go on without every webhook)."""
        obj = Cursor.of(kind, raw)
        meta = Meta.read(obj, name_required=False)
        hooks, skipped = [], []
        for i, item in enumerate(obj.items("webhooks")):
            try:
                if not isinstance(item, dict):
                    raise Unreadable(kind, obj.name, f"webhooks[{i}]", "a mapping", item)
                hooks.append(Webhook.read(Cursor(kind, obj.name, item, f"webhooks[{i}]")))
            except Unreadable as exc:
                if strict:
                    raise
                skipped.append(str(exc))
        return cls(meta, kind, tuple(hooks), tuple(skipped))

    @property
    def display(self) -> str:
        return f"{self.kind} {self.meta.name}"
