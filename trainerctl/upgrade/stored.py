"""Existing custom resources checked against the schemas the target would install.

After an upgrade the API server reads every stored object through the new schema (pruned and
defaulted, not validated again), a controller decodes it into its Go types, and every update of
it is validated. So each object of a CRD the target changes is validated here as the API server
would validate it under the target's schema (trainerctl.upgrade.schema), as if it were created
again (its status left out where status is a subresource): a value the target rejects blocks the
upgrade, and names the object, the field, the value and why.

Objects the install replaces (the target render has them: a runtime it ships) or prunes (they
carry the ownership label) are left out: the install's own content wins. A CEL rule, pattern or format that is not evaluated here is listed as not checked when it
is new in the target and some object holds a value where it applies; one the live schema had
already at the same place was checked by the API server when the object was last written.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Iterable

from trainerctl.cluster.client.views.field_types import Cursor, Unreadable, shown_value
from trainerctl.cluster.client.views.meta import Meta
from trainerctl.cluster.manager.objects import parse_label
from trainerctl.upgrade.crd_diff import (
    NOT_CHECKED, OBJECT_REJECTED, OBJECTS_UNREAD, Finding, is_crd, sort_findings, walk_schema,
)
from trainerctl.upgrade.schema.validate import Unchecked, validate

Identity = tuple[str, str, str, str]  # API group, kind, namespace ("" when cluster-scoped), name


@dataclass(frozen=True)
class Rejection:
    """One value of one existing object that the target's schema rejects."""

    crd: str
    kind: str
    namespace: str | None
    name: str
    version: str
    path: str  # the schema's path (`[*]`, `.*`), as the finding names it
    field: str  # the object's own path, e.g. spec.containers[1].name
    value: Any
    reason: str
    missing: bool = False

    @property
    def ref(self) -> str:
        return f"{self.namespace}/{self.name}" if self.namespace else self.name

    @property
    def shown(self) -> str:
        return "(not set)" if self.missing else shown_value(self.value)

    def line(self) -> str:
        return f"{self.kind} {self.ref}: {self.field}: {self.shown}: {self.reason}"

    def to_dict(self) -> dict[str, Any]:
        return {"crd": self.crd, "kind": self.kind, "namespace": self.namespace, "name": self.name,
                "version": self.version, "path": self.path, "field": self.field, "value": self.shown,
                "reason": self.reason}


def identity(obj: dict) -> Identity | None:
    api_version, kind = obj.get("apiVersion"), obj.get("kind")
    meta = obj.get("metadata")
    if not isinstance(api_version, str) or not isinstance(kind, str) or not isinstance(meta, dict):
        return None
    group = api_version.rpartition("/")[0]
    namespace = meta.get("namespace") if isinstance(meta.get("namespace"), str) else ""
    return group, kind, namespace, str(meta.get("name", ""))


def installs_own(target_objects: Iterable[dict], owner_label: str | tuple[str, str] | None) -> Callable[[dict], bool]:
    """Whether the install itself replaces an existing object (the target render has one of the
    same identity) or prunes it (it carries the ownership label and the render has it not).
    `owner_label` as the session holds it (KEY=VALUE) or as a (key, value) pair."""
    replaced = {ident for o in target_objects if isinstance(o, dict) and not is_crd(o) and (ident := identity(o))}
    key, value = parse_label(owner_label) if owner_label is not None else (None, None)

    def own(obj: dict) -> bool:
        if identity(obj) in replaced:
            return True
        labels = (obj.get("metadata") or {}).get("labels")
        return key is not None and isinstance(labels, dict) and labels.get(key) == value

    return own


def _schemas(crd: dict) -> dict[str, dict]:
    out = {}
    for version in (crd.get("spec") or {}).get("versions") or []:
        if isinstance(version, dict) and version.get("served"):
            out[str(version.get("name"))] = ((version.get("schema") or {}).get("openAPIV3Schema")) or {}
    return out


def _status_subresource(crd: dict) -> set[str]:
    """The versions whose status is a subresource: a create drops what the object says there."""
    return {str(v.get("name")) for v in (crd.get("spec") or {}).get("versions") or []
            if isinstance(v, dict) and isinstance((v.get("subresources") or {}).get("status"), dict)}


def _version_of(obj: dict) -> str:
    return str(obj.get("apiVersion", "")).rpartition("/")[2]


def _known(schema: dict) -> set[tuple[str, str, str]]:
    """(path, what, detail) of every rule, pattern and format of a schema: what was checked before."""
    out: set[tuple[str, str, str]] = set()
    for path, node in walk_schema(schema):
        where = path or "<root>"
        for rule in node.get("x-kubernetes-validations") or []:
            if isinstance(rule, dict) and isinstance(rule.get("rule"), str):
                out.add((where, "rule", rule["rule"]))
        if isinstance(node.get("pattern"), str):
            out.add((where, "pattern", node["pattern"]))
        if isinstance(node.get("format"), str):
            out.add((where, "format", node["format"]))
    return out


_WHAT = {"rule": "CEL rule", "pattern": "pattern", "format": "format", "embedded metadata": "embedded metadata"}


def check_objects(live_crds: list[dict], target_crds: list[dict], live_resources: dict[str, list[dict]],
                  own: Callable[[dict], bool]) -> tuple[list[Finding], list[Rejection]]:
    """The findings (rejected values, not-checked rules, unreadable objects) and each rejection."""
    targets = {c["metadata"]["name"]: c for c in target_crds if is_crd(c)}
    lives = {c["metadata"]["name"]: c for c in live_crds if is_crd(c)}
    findings: list[Finding] = []
    rejections: list[Rejection] = []
    for crd_name in sorted(live_resources):
        target = targets.get(crd_name)
        if target is None:
            continue
        target_schemas, live_schemas = _schemas(target), _schemas(lives.get(crd_name) or {})
        status_apart = _status_subresource(target)
        known = {v: _known(s) for v, s in live_schemas.items()}
        reached: dict[tuple[str, Unchecked], set[str]] = {}
        for obj in live_resources[crd_name]:
            version = _version_of(obj)
            schema = target_schemas.get(version)
            ident = identity(obj)
            if schema is None or (ident is not None and own(obj)):
                continue
            try:  # an object whose metadata, apiVersion or kind does not fit is named, never skipped
                meta = Meta.read(Cursor.of(ident[1] if ident and ident[1] else "object", obj), k8s_names=True)
                if ident is None:
                    raise Unreadable("object", meta.display, "apiVersion and kind", "strings")
            except Unreadable as exc:
                findings.append(Finding(crd_name, OBJECTS_UNREAD, f"{exc}; it cannot be checked", version=version,
                                        blocking=True))
                continue
            # Judged as re-created: where status is a subresource, a create keeps none of it (the
            # controller writes it again), so only the rest must pass.
            verdict = validate({k: v for k, v in obj.items() if k != "status"} if version in status_apart else obj,
                               schema)
            for p in verdict.problems:
                rejections.append(Rejection(crd_name, ident[1], meta.namespace or None, meta.name, version,
                                            p.schema_path, p.path or "<root>", p.value, p.reason, p.missing))
            for item in verdict.unchecked:
                if item.transition or (item.path, item.what, item.detail) in known.get(version, set()):
                    continue
                reached.setdefault((version, item), set()).add(meta.display)
        read = {_version_of(o) for o in live_resources[crd_name]}
        for version in sorted(set(target_schemas) - set(live_schemas)):
            if read:  # a version new in the target: its objects come converted, which is not done here
                findings.append(Finding(
                    crd_name, NOT_CHECKED, f"a version new in the target: the existing objects, served through it "
                    f"converted from {', '.join(sorted(read))}, are not checked against its schema", version=version))
        for (version, item), refs in reached.items():
            findings.append(Finding(
                crd_name, NOT_CHECKED,
                f"{_WHAT.get(item.what, item.what)} not evaluated by trainerctl; {len(refs)} existing object(s) "
                "hold a value there (the API server checks it on their next update)",
                version=version, path=item.path, rule=item.detail if item.what == "rule" else None,
                message=item.message if item.what == "rule" else (f"{item.what}: {item.detail}")))
    keys = sorted({(r.crd, r.version, r.path) for r in rejections})
    for crd_name, version, path in keys:
        count = len({r.ref for r in rejections if (r.crd, r.version, r.path) == (crd_name, version, path)})
        findings.append(Finding(crd_name, OBJECT_REJECTED,
                                f"the target's schema rejects what {count} existing object(s) hold here",
                                version=version, path=path, blocking=True))
    return sort_findings(findings), sorted(rejections, key=lambda r: (r.crd, r.namespace or "", r.name, r.field))
