"""Name references: after renames (prefix, suffix, namespace, hash), point every reference at
the referred object's current name. kustomize's FixBackReferences."""

from __future__ import annotations

from trainerctl.kustomize import fieldspecs as fsm
from trainerctl.kustomize.config import TransformerConfig
from trainerctl.kustomize.errors import KustomizeError
from trainerctl.kustomize.resource import Resource


def fix(resources: list[Resource], cfg: TransformerConfig) -> None:
    for (group, version, kind), specs in cfg.name_reference:
        candidates = [r for r in resources if r.gvk.selected_by(group, version, kind)]
        if not candidates:
            continue
        for referrer in resources:
            gvk = referrer.gvk
            for spec in specs:
                if not spec.applies_to(gvk):
                    continue
                for parent, key in list(fsm.field_values(referrer.obj, spec)):
                    _update(parent, key, referrer, candidates, spec, kind)


def _pick(name: str, namespace: str | None, referrer: Resource, candidates: list[Resource],
          kind: str, where: str) -> Resource | None:
    matches = [c for c in candidates if name in (n for n, _ in c.all_names())]
    if namespace is not None:
        matches = [c for c in matches if namespace in (ns for _, ns in c.all_names())
                   or (c.gvk.cluster_scoped)]
    elif not referrer.gvk.cluster_scoped:
        ns = referrer.namespace
        same = [c for c in matches if c.gvk.cluster_scoped or c.namespace == ns]
        matches = same
    if len(matches) > 1:
        # Several objects answer to the name: keep those renamed by the same prefixes and
        # suffixes as the referrer (they came through the same kustomizations).
        same = [m for m in matches if m.affixes == referrer.affixes]
        if same:
            matches = same
        unique = {(m.name, m.namespace) for m in matches}
        if len(unique) > 1:
            raise KustomizeError(
                f"{referrer.source}: {where}: found multiple possible referrals for {kind} "
                f"{name!r}: {', '.join(sorted(f'{n}.{s}' for n, s in unique))}"
            )
    return matches[0] if matches else None


def _update(parent, key, referrer: Resource, candidates: list[Resource], spec, kind: str) -> None:
    value = parent[key]
    where = spec.path_string
    if isinstance(value, str):
        if spec.path[-1] == "name" and len(spec.path) >= 2 and spec.path[-2] == "roleRef":
            if isinstance(parent, dict) and parent.get("kind") and parent["kind"] != kind:
                return
        found = _pick(value, None, referrer, candidates, kind, where)
        if found is not None and found.name != value:
            parent[key] = found.name
    elif isinstance(value, dict):
        _update_mapping(value, referrer, candidates, kind, where)
    elif isinstance(value, list):
        for i, item in enumerate(value):
            if isinstance(item, str):
                found = _pick(item, None, referrer, candidates, kind, where)
                if found is not None:
                    value[i] = found.name
            elif isinstance(item, dict):
                _update_mapping(item, referrer, candidates, kind, where)


def _update_mapping(node: dict, referrer: Resource, candidates, kind: str, where: str) -> None:
    # Like kustomize, a mapping reference (a binding subject) is matched by name and namespace
    # only; its `kind` is not compared.
    name = node.get("name")
    if not isinstance(name, str):
        return
    namespace = node.get("namespace") if isinstance(node.get("namespace"), str) else None
    found = _pick(name, namespace, referrer, candidates, kind, where)
    if found is None:
        return
    node["name"] = found.name
    # kustomize writes the referral's namespace into the reference, adding the field if needed.
    if found.namespace:
        node["namespace"] = found.namespace
