"""`vars` (deprecated in kustomize, still common): `$(NAME)` in the fields the varReference
field specs list becomes the value of a field of a named resource, once, at the top of the
build after name references are fixed (kustomize's ResolveVars and filters/refvar)."""

from __future__ import annotations

import re

from trainerctl.kustomize import fieldspecs
from trainerctl.kustomize.errors import KustomizeError
from trainerctl.kustomize.resid import Gvk, ResId
from trainerctl.kustomize.resource import Resource

TYPE_CHECKING = False  # typing costs a tenth of a kustomize run's start-up
if TYPE_CHECKING:
    from typing import Any


def var_target(var: dict) -> ResId:
    ref = var.get("objref") or {}
    group, version = ref.get("group", ""), ref.get("version", "")
    api_version = ref.get("apiVersion", "")
    if api_version:
        parts = api_version.split("/")
        if len(parts) == 2:
            group, version = parts
        elif len(parts) == 1:
            version = parts[0]
    return ResId(Gvk(group, version, ref.get("kind", "")), ref.get("name", ""),
                 ref.get("namespace", ""))


def mark(resources: list[Resource], variables: list[dict], where: str) -> None:
    """kustomize's MergeVars: the one resource a var refers to remembers the var's name."""
    for var in variables:
        target = var_target(var)
        exact = bool(target.namespace) or target.gvk.cluster_scoped
        matched = [r for r in resources if r.obj and any(
            (i.equals(target) if exact else i.gvkn_equals(target)) for i in r.all_ids())]
        if len(matched) > 1:
            raise KustomizeError(f"{where}: found {len(matched)} resId matches for var "
                                 f"{var.get('name')!r} (unable to disambiguate)")
        if matched:
            matched[0].ref_var_names.append(var.get("name", ""))


def merge(into: dict[str, dict], variables: list[dict], where: str) -> None:
    for var in variables:
        name = var.get("name", "")
        if name in into:
            raise KustomizeError(f"{where}: var '{name}' already encountered")
        into[name] = var


_INDEX = re.compile(r"^(.*)\[(\d+)\]$")


def field_value(obj: Any, path: str) -> Any:
    """kyaml's GetFieldValue on a dotted path (`spec.ports[0].port`)."""
    node = obj
    for part in path.split("."):
        m = _INDEX.match(part)
        keys: list = [m[1], int(m[2])] if m else [part]
        for key in keys:
            if isinstance(key, int):
                if not isinstance(node, list) or key >= len(node):
                    return _MISSING
                node = node[key]
            elif key == "":
                continue
            else:
                if not isinstance(node, dict) or key not in node:
                    return _MISSING
                node = node[key]
    return node


_MISSING = object()


def resolve(resources: list[Resource], variables: dict[str, dict], specs: list, where: str) -> None:
    values: dict[str, Any] = {}
    for name, var in variables.items():
        owner = next((r for r in resources if name in r.ref_var_names), None)
        if owner is None:
            raise KustomizeError(f"{where}: var '{name}' cannot be mapped to a field in the set "
                                 f"of known resources")
        path = (var.get("fieldref") or {}).get("fieldPath") or "metadata.name"
        value = field_value(owner.obj, path)
        if value is _MISSING or value is None:
            raise KustomizeError(f"{where}: field specified in var '{name}' ({path}) not found "
                                 f"in corresponding resource")
        if isinstance(value, (dict, list)):
            raise KustomizeError(f"{where}: var '{name}' refers to a mapping or list at {path}; "
                                 f"trainerctl (like kustomize) substitutes only scalars")
        values[name] = value
    if not values:
        return

    def replace(text: str) -> Any:
        return _expand(text, values)

    for r in resources:
        gvk = r.gvk
        for spec in specs:
            if not spec.applies_to(gvk):
                continue

            def visit(parent, key):
                _set(parent, key, replace)

            fieldspecs.walk(r.obj, fieldspecs.FieldSpec(spec.path, spec.group, spec.version, spec.kind, False),
                            fieldspecs.SCALAR, visit)


def _set(parent, key, replace) -> None:
    value = parent[key]
    if value is None:
        return
    if isinstance(value, str):
        parent[key] = replace(value)
    elif isinstance(value, dict):
        for k, v in value.items():
            if isinstance(v, str):
                value[k] = replace(v)
    elif isinstance(value, list):
        for i, item in enumerate(value):
            if not isinstance(item, str):
                raise KustomizeError("invalid value type expect a string")
            value[i] = replace(item)


def _go_text(value: Any) -> str:
    """Go's %v of a var's value."""
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, float):
        return repr(value) if value != int(value) or abs(value) >= 1e21 else str(int(value))
    return str(value)


def _expand(text: str, values: dict[str, Any]) -> Any:
    """kustomize's DoReplacements: `$(NAME)` replaced, `$$` is a literal `$`, unknown names
    left as written; a field that is exactly `$(NAME)` takes the value with its type."""
    out: list[str] = []
    checkpoint = 0
    cursor = 0
    n = len(text)
    while cursor < n:
        if text[cursor] == "$" and cursor + 1 < n:
            out.append(text[checkpoint:cursor])
            nxt = text[cursor + 1]
            if nxt == "$":
                out.append("$")
                advance = 1
            elif nxt == "(":
                close = text.find(")", cursor + 2)
                if close < 0:
                    out.append("$(")
                    advance = 1
                else:
                    name = text[cursor + 2:close]
                    if name in values:
                        if text == f"$({name})":
                            return values[name]
                        out.append(_go_text(values[name]))
                    else:
                        out.append(f"$({name})")
                    advance = close - cursor
            else:
                out.append("$" + nxt)
                advance = 1
            cursor += advance
            checkpoint = cursor + 1
        cursor += 1
    return "".join(out) + text[checkpoint:]
