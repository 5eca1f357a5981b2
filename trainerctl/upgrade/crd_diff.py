"""Compare an installed CRD with the CRD a target render would apply.

Pure functions over plain dicts (as read from the API server or from YAML): no cluster access.
Schema paths are written the way users read their objects: `spec.initializer.env[*].name` for
list items and `spec.labels.*` for map values (additionalProperties).
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from typing import Any, Iterator

# Finding kinds, in report order.
CRD_REMOVED = "crd-removed"
SERVED_VERSION_REMOVED = "served-version-removed"
STORED_VERSION_UNSERVED = "stored-version-unserved"
FIELD_REMOVED = "field-removed"
FIELD_REQUIRED = "field-required"
TYPE_CHANGED = "type-changed"
VALIDATION_ADDED = "validation-added"
VALIDATION_CHANGED = "validation-changed"
VALIDATION_REMOVED = "validation-removed"
# What existing objects hold, checked against the target's schema (trainerctl.upgrade.stored).
OBJECT_REJECTED = "object-rejected"
OBJECTS_UNREAD = "objects-not-read"
NOT_CHECKED = "not-checked"

KIND_ORDER = [
    CRD_REMOVED,
    STORED_VERSION_UNSERVED,
    OBJECT_REJECTED,
    OBJECTS_UNREAD,
    SERVED_VERSION_REMOVED,
    FIELD_REMOVED,
    FIELD_REQUIRED,
    TYPE_CHANGED,
    VALIDATION_ADDED,
    VALIDATION_CHANGED,
    VALIDATION_REMOVED,
    NOT_CHECKED,
]

# `self == oldSelf` (either order) is how CEL spells "this field may not change once set".
_IMMUTABLE_RULE = re.compile(r"\bself\s*==\s*oldSelf\b|\boldSelf\s*==\s*self\b")


@dataclass(frozen=True)
class Finding:
    crd: str
    kind: str
    detail: str
    version: str | None = None
    path: str | None = None
    rule: str | None = None
    old_rule: str | None = None
    message: str | None = None
    immutable: bool = False
    # Blocking on its own; a removed field additionally blocks when a live object uses it
    # (decided by the report, which knows the usages).
    blocking: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if v is not None}


def is_immutability_rule(rule: str) -> bool:
    return bool(_IMMUTABLE_RULE.search(rule))


def uses_old_self(rule: str) -> bool:
    """Transition rules compare with the previous object; they only run on update."""
    return "oldSelf" in rule


def _served(crd: dict) -> dict[str, dict]:
    return {v["name"]: v for v in crd.get("spec", {}).get("versions") or [] if v.get("served")}


def _all_versions(crd: dict) -> dict[str, dict]:
    return {v["name"]: v for v in crd.get("spec", {}).get("versions") or []}


def _schema(version: dict) -> dict:
    return ((version.get("schema") or {}).get("openAPIV3Schema")) or {}


def walk_schema(schema: dict, path: str = "") -> Iterator[tuple[str, dict]]:
    """Yield (path, node) for every schema node reachable through properties, items and
    additionalProperties, parents before children; the root has path ""."""
    yield path, schema
    for name, child in (schema.get("properties") or {}).items():
        if isinstance(child, dict):
            yield from walk_schema(child, f"{path}.{name}" if path else name)
    items = schema.get("items")
    if isinstance(items, dict):
        yield from walk_schema(items, f"{path}[*]")
    extra = schema.get("additionalProperties")
    if isinstance(extra, dict):
        yield from walk_schema(extra, f"{path}.*" if path else "*")


def _child_paths(path: str, node: dict) -> dict[str, dict]:
    """The direct children of a node, keyed by their full path."""
    out: dict[str, dict] = {}
    for name, child in (node.get("properties") or {}).items():
        if isinstance(child, dict):
            out[f"{path}.{name}" if path else name] = child
    if isinstance(node.get("items"), dict):
        out[f"{path}[*]"] = node["items"]
    if isinstance(node.get("additionalProperties"), dict):
        out[f"{path}.*" if path else "*"] = node["additionalProperties"]
    return out


def _rules(node: dict) -> list[dict]:
    return [r for r in node.get("x-kubernetes-validations") or [] if isinstance(r, dict) and "rule" in r]


def _display(path: str) -> str:
    return path or "<root>"


def _type_name(node: dict) -> str | None:
    return "int-or-string" if node.get("x-kubernetes-int-or-string") is True else node.get("type")


def _compare_schemas(crd: str, version: str, live: dict, target: dict) -> list[Finding]:
    findings: list[Finding] = []

    def visit(path: str, old: dict, new: dict) -> None:
        old_type, new_type = _type_name(old), _type_name(new)
        if old_type and new_type and old_type != new_type:
            findings.append(Finding(crd, TYPE_CHANGED, f"type changed from {old_type} to {new_type}",
                                    version=version, path=_display(path)))
        new_required = set(new.get("required") or []) - set(old.get("required") or [])
        for name in sorted(new_required):
            child = f"{path}.{name}" if path else name
            findings.append(Finding(crd, FIELD_REQUIRED, "field became required",
                                    version=version, path=child))
        findings.extend(_compare_rules(crd, version, path, _rules(old), _rules(new)))

        old_children, new_children = _child_paths(path, old), _child_paths(path, new)
        # An object that keeps unknown fields does not prune what it no longer declares.
        keeps_unknown = bool(new.get("x-kubernetes-preserve-unknown-fields"))
        for child, old_node in old_children.items():
            if child in new_children:
                visit(child, old_node, new_children[child])
            elif not keeps_unknown:
                findings.append(Finding(crd, FIELD_REMOVED,
                                        "field removed from the schema; stored values are pruned",
                                        version=version, path=child))
        # Rules on brand-new fields matter too: they apply as soon as someone sets the field.
        for child, new_node in new_children.items():
            if child not in old_children:
                for sub, node in walk_schema(new_node, child):
                    findings.extend(_compare_rules(crd, version, sub, [], _rules(node)))

    visit("", live, target)
    return findings


def _compare_rules(crd: str, version: str, path: str, old: list[dict], new: list[dict]) -> list[Finding]:
    old_texts = [r["rule"] for r in old]
    new_texts = [r["rule"] for r in new]
    added = [r for r in new if r["rule"] not in old_texts]
    removed = [r for r in old if r["rule"] not in new_texts]
    out: list[Finding] = []
    # A rule whose text changed at the same place shows up as one removed + one added;
    # pair them by message first, then by position, so the report says "changed".
    pairs: list[tuple[dict, dict]] = []
    for r in list(added):
        match = next((o for o in removed if o.get("message") and o.get("message") == r.get("message")), None)
        if match is not None:
            pairs.append((match, r))
            added.remove(r)
            removed.remove(match)
    while added and removed:
        pairs.append((removed.pop(0), added.pop(0)))
    shown = _display(path)
    for r in added:
        out.append(_rule_finding(crd, VALIDATION_ADDED, version, shown, r, None))
    for old_rule, new_rule in pairs:
        out.append(_rule_finding(crd, VALIDATION_CHANGED, version, shown, new_rule, old_rule))
    for r in removed:
        out.append(Finding(crd, VALIDATION_REMOVED, "validation rule removed", version=version,
                           path=shown, rule=r["rule"], message=r.get("message")))
    return out


def _rule_finding(crd: str, kind: str, version: str, path: str, rule: dict, old: dict | None) -> Finding:
    text = rule["rule"]
    immutable = is_immutability_rule(text)
    if immutable:
        detail = "immutability rule: the field can no longer be changed once set"
    elif uses_old_self(text):
        detail = "transition rule: updates are checked against the previous value"
    else:
        detail = "validation rule: creates and updates must satisfy it"
    if kind == VALIDATION_CHANGED:
        detail = "changed " + detail
    else:
        detail = "new " + detail
    return Finding(crd, kind, detail, version=version, path=path, rule=text,
                   old_rule=old["rule"] if old else None, message=rule.get("message"),
                   immutable=immutable)


def diff_crd(live: dict, target: dict | None) -> list[Finding]:
    """Everything that changes for users when `target` replaces the installed `live` CRD."""
    name = live.get("metadata", {}).get("name", "?")
    if target is None:
        # trainerctl never deletes CRDs; the old one stays, unmanaged.
        return [Finding(name, CRD_REMOVED, "CRD no longer in the target render; it stays installed")]
    findings: list[Finding] = []
    live_served, target_served = _served(live), _served(target)
    target_all = _all_versions(target)
    stored = list((live.get("status") or {}).get("storedVersions") or [])
    for version in live_served:
        if version not in target_served:
            findings.append(Finding(name, SERVED_VERSION_REMOVED,
                                    "version no longer served; clients using it get 404",
                                    version=version))
    for version in stored:
        if version in target_served:
            continue
        if version in target_all:
            detail = ("version still in status.storedVersions is no longer served: objects stored "
                      "in it cannot be read through it; migrate them first")
        else:
            detail = ("version still in status.storedVersions is removed from spec.versions: the "
                      "API server rejects the CRD update; migrate stored objects and trim "
                      "status.storedVersions first")
        findings.append(Finding(name, STORED_VERSION_UNSERVED, detail, version=version, blocking=True))
    for version, live_version in live_served.items():
        if version in target_served:
            findings.extend(_compare_schemas(name, version, _schema(live_version),
                                             _schema(target_served[version])))
    return sort_findings(findings)


def sort_findings(findings: list[Finding]) -> list[Finding]:
    return sorted(findings, key=lambda f: (f.crd, KIND_ORDER.index(f.kind), f.version or "",
                                           f.path or "", f.rule or ""))


def diff_crds(live_crds: list[dict], target_crds: list[dict]) -> list[Finding]:
    """Compare every installed CRD that the target also defines (or used to): a CRD only in the
    target is a plain create and has nothing to report."""
    targets = {c["metadata"]["name"]: c for c in target_crds if is_crd(c)}
    findings: list[Finding] = []
    for live in sorted((c for c in live_crds if is_crd(c)), key=lambda c: c["metadata"]["name"]):
        findings.extend(diff_crd(live, targets.get(live["metadata"]["name"])))
    return findings


def is_crd(obj: dict) -> bool:
    return obj.get("kind") == "CustomResourceDefinition" and str(obj.get("apiVersion", "")).startswith(
        "apiextensions.k8s.io/")
