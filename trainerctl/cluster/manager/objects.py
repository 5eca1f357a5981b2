"""Object identity and the small transformations every apply body goes through."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass

from trainerctl.cluster.client.discovery import Resource, split_api_version

MANAGED_ANNOTATION = "trainerctl.io/managed"


@dataclass(frozen=True, order=True)
class Ref:
    """Identity of one object; the version is not part of it (the server stores one object)."""

    group: str
    kind: str
    namespace: str
    name: str

    @property
    def key(self) -> str:
        return f"{self.group}/{self.kind}/{self.namespace}/{self.name}"

    @classmethod
    def from_key(cls, key: str) -> "Ref":
        group, kind, namespace, name = key.split("/", 3)
        return cls(group, kind, namespace, name)

    def __str__(self) -> str:
        gk = f"{self.kind}.{self.group}" if self.group else self.kind
        return f"{gk} {self.namespace}/{self.name}" if self.namespace else f"{gk} {self.name}"


def ref_of(obj: dict) -> Ref:
    group, _ = split_api_version(obj.get("apiVersion", ""))
    meta = obj.get("metadata") or {}
    return Ref(group, obj.get("kind", ""), meta.get("namespace") or "", meta.get("name", ""))


def parse_label(label: str | tuple[str, str]) -> tuple[str, str]:
    if isinstance(label, (tuple, list)):
        return label[0], label[1]
    key, sep, value = label.partition("=")
    return key, value if sep else ""


def label_selector(label: str | tuple[str, str]) -> str:
    key, value = parse_label(label)
    return f"{key}={value}"


def is_exempt(meta: dict | None) -> bool:
    """`trainerctl.io/managed: "false"` on the live object: hands off (no update, no prune)."""
    annotations = (meta or {}).get("annotations") or {}
    return str(annotations.get(MANAGED_ANNOTATION, "")).lower() == "false"


EXEMPT = f'{MANAGED_ANNOTATION} is "false"'


def not_exempt(meta, raw: dict) -> str:
    """A delete proof's rule (manager/delete.py): what is marked hands-off is never deleted."""
    return EXEMPT if is_exempt(raw.get("metadata") if isinstance(raw.get("metadata"), dict) else None) else ""


def prepare(obj: dict, res: Resource, default_namespace: str) -> dict:
    """The body we apply: only the fields we own, placed where the server expects them.

    `obj` is left as it was. Only the containers this changes are copied (metadata, webhooks,
    the CRD conversion path); the rest is shared with `obj`: a deep copy of megabytes of CRD
    schema would cost more than the whole no-op install decides with."""
    body = without_controller_fields(obj, res.group)
    meta = body["metadata"] = dict(body.get("metadata") or {})
    if res.namespaced:
        meta.setdefault("namespace", default_namespace)
    else:
        # kustomize's `namespace:` also lands on custom kinds it cannot know are cluster-scoped.
        meta.pop("namespace", None)
    for key in ("resourceVersion", "uid", "creationTimestamp", "managedFields", "generation"):
        meta.pop(key, None)
    body.pop("status", None)
    return body


def without_controller_fields(obj: dict, group: str) -> dict:
    """`obj` without what a cert rotator writes after install: a webhook configuration's or a CRD
    conversion webhook's caBundle, an empty Secret's data (the cert it fills in). Whoever applies
    them fights the rotator. Copies only the containers it changes, like prepare."""
    body = dict(obj)
    kind = body.get("kind")
    if kind == "Secret" and group == "":
        # Owning an empty `data` would not delete the rotator's keys, but owning nothing is the
        # honest statement.
        if not body.get("data"):
            body.pop("data", None)
        if not body.get("stringData"):
            body.pop("stringData", None)
    elif kind in ("ValidatingWebhookConfiguration", "MutatingWebhookConfiguration") and group == "admissionregistration.k8s.io":
        if isinstance(body.get("webhooks"), list):
            body["webhooks"] = [_without_ca_bundle(hook) for hook in body["webhooks"]]
    elif kind == "CustomResourceDefinition" and group == "apiextensions.k8s.io":
        spec = body.get("spec")
        webhook = ((spec or {}).get("conversion") or {}).get("webhook")
        if isinstance(webhook, dict) and "caBundle" in (webhook.get("clientConfig") or {}):
            conversion = dict(spec["conversion"], webhook=_without_ca_bundle(webhook))
            body["spec"] = dict(spec, conversion=conversion)
    return body


def _without_ca_bundle(holder: dict) -> dict:
    """holder (a webhook) with clientConfig.caBundle dropped, copied only where it changes."""
    if not isinstance(holder, dict) or not isinstance(holder.get("clientConfig"), dict) \
            or "caBundle" not in holder["clientConfig"]:
        return holder
    client = {k: v for k, v in holder["clientConfig"].items() if k != "caBundle"}
    return dict(holder, clientConfig=client)


def body_hash(body: dict, field_manager: str) -> str:
    """Fingerprint of what we asked for; with the live resourceVersion it proves a no-op."""
    text = json.dumps(body, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(f"{field_manager}\n{text}".encode()).hexdigest()[:32]
