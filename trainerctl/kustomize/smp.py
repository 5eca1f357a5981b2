"""Strategic merge patch, as `kustomize build` applies it.

Maps merge key by key and a null in the patch deletes the field. Lists merge only where the
schema in use says so (openapi.py: data/patch_strategies.json, generated from the API server's
OpenAPI, or a kustomization's custom `openapi` schema): elements with the same merge key are
merged; the result lists the patch's elements in the patch's order, then the target's remaining
ones. Every other list is the patch's, verbatim.

The one directive is `$patch: delete|replace|merge`, on maps, on list elements, and on a whole
merging list (an element holding nothing but `$patch`). kustomize merges with kyaml, which
knows no other: `$setElementOrder/…`, `$retainKeys` and `$deleteFromPrimitiveList/…` are
ordinary fields there, and so here.
"""

from __future__ import annotations

import copy

from trainerctl.kustomize import openapi
from trainerctl.kustomize.errors import KustomizeError

TYPE_CHECKING = False  # typing costs a tenth of a kustomize run's start-up
if TYPE_CHECKING:
    from typing import Any

_DELETE = object()


def _field(types: dict, type_name: str | None, field: str) -> list:
    """[child type, patch strategy, merge key, list-map keys] of a field, as far as known."""
    fields = types.get(type_name) if type_name else None
    if not fields:
        return []
    info = fields.get(field)
    if info is None:
        info = fields.get(openapi.ANY_FIELD, [])
    return info


def apply(target: dict, patch: dict, source: str = "", bare_nulls: bool = False) -> dict | None:
    """Merge `patch` (from `source`) into a copy of `target`; None when it deletes the object.
    `bare_nulls`: the target may hold nulls written as nothing (yamlread.Mapping)."""
    table = openapi.current().smp_table()  # kustomize reads the schema even for a delete
    if patch.get("$patch") == "delete":
        return None
    type_name = table["kinds"].get(f"{target.get('apiVersion', '')}/{target.get('kind', '')}")
    try:
        merged = _merge_map(copy.deepcopy(target), patch, type_name, table["types"])
    except KustomizeError as exc:
        raise KustomizeError(f"{source}: {exc}" if source else str(exc)) from None
    if bare_nulls and isinstance(merged, dict):
        _drop_bare(merged, type_name, table["types"])
    return merged


def _merging(info: list) -> bool:
    strategy = info[1] if len(info) > 1 else None
    return bool(strategy) and "merge" in strategy.split(",")


def _drop_bare(node: dict, type_name: str | None, types: dict) -> None:
    """kyaml's merge walks every map of the target, and the elements of each list it merges,
    and sets each field again: a null is cleared there unless its text is kept (`key: null`,
    `~`), so a null written as nothing (`key:`) disappears. Lists that do not merge are taken
    whole, nulls and all."""
    bare = getattr(node, "bare", None)
    if bare:
        for key in bare:
            if key in node and node[key] is None:
                del node[key]
    for key, value in node.items():
        if isinstance(value, dict):
            info = _field(types, type_name, key)
            _drop_bare(value, info[0] if info else None, types)
        elif isinstance(value, list) and value:
            info = _field(types, type_name, key)
            if _merging(info):
                for item in value:
                    if isinstance(item, dict):
                        _drop_bare(item, info[0], types)


def _merge_map(dest: Any, patch: dict, type_name: str | None, types: dict) -> Any:
    directive = patch.get("$patch")
    if directive == "replace":
        # kyaml takes the patch's map and walks it as patch and target at once: its nulls are
        # cleared and its directives applied, as for any map the patch adds.
        return _merge_map({}, {k: v for k, v in patch.items() if k != "$patch"}, type_name, types)
    if directive == "delete":
        return _DELETE
    if directive not in (None, "merge"):
        raise KustomizeError(f"unknown strategic merge patch directive $patch: {directive!r}")
    if not isinstance(dest, dict):
        dest = {}
    for key, pval in patch.items():
        if key == "$patch":
            continue
        if pval is None:
            dest.pop(key, None)
            continue
        dval = dest.get(key)
        if dval is not None and _node_kind(dval) != _node_kind(pval):
            # kyaml's merge walks both at once and stops at nodes of different kinds.
            raise KustomizeError(f"strategic merge patch: field `{key}` is a {_node_kind(dval)} in "
                                 f"the target and a {_node_kind(pval)} in the patch (kubectl: "
                                 "wrong node kind)")
        info = _field(types, type_name, key)
        child = info[0] if info else None
        if isinstance(pval, dict):
            merged = _merge_map(dest.get(key), pval, child, types)
            if merged is _DELETE:
                dest.pop(key, None)
            else:
                dest[key] = merged
        elif isinstance(pval, list):
            if _merging(info):
                merge_key = info[2] if len(info) > 2 else None
                map_keys = info[3] if len(info) > 3 else None
                merged = _merge_list(dest.get(key), pval, child, merge_key, map_keys, types)
                if merged is _DELETE:
                    dest.pop(key, None)
                else:
                    dest[key] = merged
            else:
                # A list that does not merge is the patch's, exactly (directives and all).
                dest[key] = copy.deepcopy(pval)
        else:
            dest[key] = pval
    return dest


def _node_kind(value: Any) -> str:
    return "mapping" if isinstance(value, dict) else "sequence" if isinstance(value, list) else "scalar"


def _strip(value: Any) -> Any:
    """A list replaced by `$patch: replace` keeps no directives (kyaml walks its elements)."""
    if isinstance(value, dict):
        return {k: _strip(v) for k, v in value.items() if k != "$patch"}
    if isinstance(value, list):
        return [_strip(v) for v in value]
    return value


def _key_values(item: dict, keys: list[str]) -> list[str]:
    return ["" if item.get(k) is None else str(item.get(k)) for k in keys]


def _merge_multikey(dest: list, patch: list, child: str | None, keys: list[str],
                    types: dict) -> list:
    """Lists keyed by several list-map keys (ports: containerPort + protocol), as kustomize
    treats them: an element merges only when every key agrees (absent counts as empty); a
    patch element that leaves a key out but matches on the others is ignored; anything else
    is new and goes first, in patch order."""
    result = list(dest)
    new: list = []
    for p in patch:
        if not isinstance(p, dict):
            raise KustomizeError(f"strategic merge patch: list element {p!r} is not a mapping")
        pv = _key_values(p, keys)
        full = next((i for i, d in enumerate(result)
                     if isinstance(d, dict) and _key_values(d, keys) == pv), None)
        if full is not None:
            if p.get("$patch") == "delete":
                result[full] = _DELETE
                continue
            result[full] = _merge_map(result[full], p, child, types)
            continue
        present = [i for i, v in enumerate(pv) if v != ""]
        partial = any(isinstance(d, dict) and all(_key_values(d, keys)[i] == pv[i] for i in present)
                      for d in result) if len(present) < len(keys) else False
        if partial or p.get("$patch") == "delete":
            continue
        merged = _merge_map({}, p, child, types)
        if merged is not _DELETE:
            new.append(merged)
    return new + [d for d in result if d is not _DELETE]


def _list_directive(patch: list) -> tuple[str | None, list]:
    """kyaml's list directive: the first element with a `$patch` key, when that is its only
    key; elements carrying the same directive are dropped from the patch."""
    first = next((p for p in patch if isinstance(p, dict) and "$patch" in p), None)
    if first is None or len(first) > 1:
        return None, patch
    directive = first["$patch"]
    if directive not in ("delete", "replace", "merge"):
        raise KustomizeError(f"unknown strategic merge patch directive $patch: {directive!r}")
    return directive, [p for p in patch
                       if not (isinstance(p, dict) and p.get("$patch") == directive)]


def _merge_list(dest: Any, patch: list, child: str | None, merge_key: str | None,
                map_keys: list[str] | None, types: dict) -> Any:
    """Observed kustomize order: with one merge key, the patch's elements in patch order and
    then the target's others; with several list-map keys (ports), new elements first and then
    the target's elements in place."""
    if not isinstance(dest, list):
        if any(isinstance(p, dict) and list(p) == ["$patch"] for p in patch):
            # kyaml keeps such an element and drops others, by the quirks of its merge.
            raise KustomizeError("strategic merge patch: a list the target does not have holds "
                                 "a `$patch` directive element; trainerctl does not reproduce "
                                 "what kustomize makes of it")
        dest = []
    directive, patch = _list_directive(patch)
    if directive == "delete":
        return _DELETE
    if directive == "replace":
        return [_strip(copy.deepcopy(p)) for p in patch]
    if not merge_key:
        # A merging list of scalars: the patch's values, then the target's others.
        result = [copy.deepcopy(p) for p in patch]
        return result + [d for d in dest if d not in patch]
    if map_keys:
        return _merge_multikey(dest, patch, child, map_keys, types)
    merged_dest: dict[int, Any] = {}
    in_patch_order: list = []
    deleted: set[int] = set()
    for p in patch:
        if not isinstance(p, dict):
            raise KustomizeError(f"strategic merge patch: list element {p!r} is not a mapping")
        match = next((i for i, d in enumerate(dest)
                      if i not in merged_dest and i not in deleted
                      and isinstance(d, dict) and p.get(merge_key) is not None
                      and str(d.get(merge_key)) == str(p.get(merge_key))), None)
        if p.get("$patch") == "delete":
            if match is not None:
                deleted.add(match)
            continue
        merged = _merge_map(dest[match] if match is not None else {}, p, child, types)
        if merged is _DELETE:
            if match is not None:
                deleted.add(match)
            continue
        if match is not None:
            merged_dest[match] = merged
        in_patch_order.append(merged)
    return in_patch_order + [d for i, d in enumerate(dest)
                             if i not in merged_dest and i not in deleted]
