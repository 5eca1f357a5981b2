"""Strategic merge patch, as `kustomize build` applies it.

Maps merge key by key and a null in the patch deletes the field. Lists merge only where the
Kubernetes API says so (data/patch_strategies.json, generated from the API server's OpenAPI):
elements with the same merge key are merged; the result lists the patch's elements in the
patch's order, then the target's remaining ones. Every other list is replaced. Directives:
`$patch: delete|replace` on maps and list elements, `$setElementOrder/<field>` and
`$retainKeys` are honoured, `$deleteFromPrimitiveList/<field>` removes scalars.
"""

from __future__ import annotations

import copy
import functools
import json
from pathlib import Path
from typing import Any

from trainerctl.kustomize.errors import KustomizeError

_DATA = Path(__file__).with_name("data") / "patch_strategies.json"
_DELETE = object()


@functools.lru_cache(maxsize=1)
def _table() -> dict:
    return json.loads(_DATA.read_text())


def schema_for(api_version: str, kind: str) -> str | None:
    return _table()["kinds"].get(f"{api_version}/{kind}")


def _field(type_name: str | None, field: str) -> list:
    if not type_name:
        return []
    return _table()["types"].get(type_name, {}).get(field, [])


def apply(target: dict, patch: dict) -> dict | None:
    """Merge `patch` into a copy of `target`; None when the patch deletes the object."""
    if patch.get("$patch") == "delete":
        return None
    type_name = schema_for(str(target.get("apiVersion", "")), str(target.get("kind", "")))
    result = _merge_map(copy.deepcopy(target), patch, type_name)
    return result


def _merge_map(dest: Any, patch: dict, type_name: str | None) -> Any:
    directive = patch.get("$patch")
    if directive == "replace":
        return {k: copy.deepcopy(v) for k, v in patch.items() if k != "$patch"}
    if directive == "delete":
        return _DELETE
    if directive not in (None, "merge"):
        raise KustomizeError(f"unknown strategic merge patch directive $patch: {directive!r}")
    if not isinstance(dest, dict):
        dest = {}
    retain = patch.get("$retainKeys")
    orders = {k[len("$setElementOrder/"):]: v for k, v in patch.items()
              if k.startswith("$setElementOrder/")}
    deletes = {k[len("$deleteFromPrimitiveList/"):]: v for k, v in patch.items()
               if k.startswith("$deleteFromPrimitiveList/")}
    for key, pval in patch.items():
        if key.startswith("$"):
            continue
        if pval is None:
            dest.pop(key, None)
            continue
        info = _field(type_name, key)
        child = info[0] if info else None
        if isinstance(pval, dict):
            merged = _merge_map(dest.get(key), pval, child)
            if merged is _DELETE:
                dest.pop(key, None)
            else:
                dest[key] = merged
        elif isinstance(pval, list):
            strategy = info[1] if len(info) > 1 else None
            merge_key = info[2] if len(info) > 2 else None
            map_keys = info[3] if len(info) > 3 else None
            if strategy and "merge" in strategy.split(","):
                dest[key] = _merge_list(dest.get(key), pval, child, merge_key, orders.get(key),
                                        map_keys)
            else:
                dest[key] = [_strip(copy.deepcopy(v)) for v in pval]
        else:
            dest[key] = pval
    for key, values in deletes.items():
        if isinstance(dest.get(key), list):
            dest[key] = [v for v in dest[key] if v not in values]
    if isinstance(retain, list):
        for key in list(dest):
            if key not in retain:
                del dest[key]
    return dest


def _strip(value: Any) -> Any:
    """Directives never reach the output, even inside replaced lists."""
    if isinstance(value, dict):
        return {k: _strip(v) for k, v in value.items() if not k.startswith("$")}
    if isinstance(value, list):
        return [_strip(v) for v in value]
    return value


def _key_values(item: dict, keys: list[str]) -> list[str]:
    return ["" if item.get(k) is None else str(item.get(k)) for k in keys]


def _merge_multikey(dest: list, patch: list, child: str | None, keys: list[str]) -> list:
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
            merged = _merge_map(result[full], p, child)
            result[full] = merged
            continue
        present = [i for i, v in enumerate(pv) if v != ""]
        partial = any(isinstance(d, dict) and all(_key_values(d, keys)[i] == pv[i] for i in present)
                      for d in result) if len(present) < len(keys) else False
        if partial or p.get("$patch") == "delete":
            continue
        merged = _merge_map({}, p, child)
        if merged is not _DELETE:
            new.append(merged)
    return new + [d for d in result if d is not _DELETE]


def _merge_list(dest: Any, patch: list, child: str | None, merge_key: str | None,
                order: list | None, map_keys: list[str] | None = None) -> list:
    """Observed kustomize order: with one merge key, the patch's elements in patch order and
    then the target's others; with several list-map keys (ports), new elements first and then
    the target's elements in place."""
    if not isinstance(dest, list):
        dest = []
    if any(isinstance(p, dict) and p.get("$patch") == "replace" for p in patch):
        return [_strip(copy.deepcopy(p)) for p in patch
                if not (isinstance(p, dict) and p.get("$patch") == "replace")]
    if not merge_key:
        # A merging list of scalars: the patch's values, then the target's others.
        result = [copy.deepcopy(p) for p in patch]
        result += [d for d in dest if d not in patch]
        return _ordered(result, order, None)
    if map_keys:
        return _ordered(_merge_multikey(dest, patch, child, map_keys), order, merge_key)
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
        merged = _merge_map(dest[match] if match is not None else {}, p, child)
        if merged is _DELETE:
            if match is not None:
                deleted.add(match)
            continue
        if match is not None:
            merged_dest[match] = merged
        in_patch_order.append(merged)
    result = in_patch_order + [d for i, d in enumerate(dest)
                               if i not in merged_dest and i not in deleted]
    return _ordered(result, order, merge_key)


def _ordered(items: list, order: list | None, merge_key: str | None) -> list:
    if not order:
        return items
    def key_of(item):
        return item.get(merge_key) if merge_key and isinstance(item, dict) else item
    wanted = [o.get(merge_key) if merge_key and isinstance(o, dict) else o for o in order]
    rank = {json.dumps(w, sort_keys=True): i for i, w in enumerate(wanted)}
    return sorted(items, key=lambda it: rank.get(json.dumps(key_of(it), sort_keys=True), len(rank)))
