"""`replacements`: copy a field of one resource into fields of others."""

from __future__ import annotations

import copy
import re
from typing import Any

from trainerctl.kustomize import yamlio
from trainerctl.kustomize.errors import KustomizeError
from trainerctl.kustomize.kustfile import check_fields
from trainerctl.kustomize.loader import Loader
from trainerctl.kustomize.resource import Resource
from trainerctl.kustomize.transformers.selectors import ids_select

_SOURCE_FIELDS = {"group", "version", "kind", "name", "namespace", "fieldPath", "options"}
_TARGET_FIELDS = {"select", "reject", "fieldPaths", "options"}
_OPTION_FIELDS = {"delimiter", "index", "create"}
_SELECT_FIELDS = {"group", "version", "kind", "name", "namespace", "labelSelector",
                  "annotationSelector"}


def split_field_path(path: str) -> list[str]:
    """'a.b.[name=x.y].c' -> ['a', 'b', '[name=x.y]', 'c']: dots inside brackets stay."""
    parts, current, depth = [], "", 0
    for ch in path:
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
        if ch == "." and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += ch
    parts.append(current)
    return parts


_MATCH = re.compile(r"^\[([^=\]]+)=([^\]]*)\]$")


def _lookup(node: Any, parts: list[str], create: bool, where: str) -> list[tuple[Any, Any]]:
    """(container, key) pairs the path reaches; '*' fans out over list elements."""
    results: list[tuple[Any, Any]] = []

    def go(cur, i):
        part = parts[i]
        last = i == len(parts) - 1
        m = _MATCH.match(part)
        if isinstance(cur, list):
            if m:
                key, value = m[1], m[2]
                hits = [j for j, el in enumerate(cur)
                        if isinstance(el, dict) and _scalar_str(el.get(key)) == value]
                if not hits and create:
                    cur.append({key: value})
                    hits = [len(cur) - 1]
                for j in hits:
                    if last:
                        results.append((cur, j))
                    else:
                        go(cur[j], i + 1)
                return
            if part == "*":
                for j in range(len(cur)):
                    if last:
                        results.append((cur, j))
                    else:
                        go(cur[j], i + 1)
                return
            if part.lstrip("-").isdigit():
                j = int(part)
                if j < 0 or j >= len(cur):
                    if create and j == len(cur):
                        cur.append({} if not last else None)
                    else:
                        raise KustomizeError(f"{where}: index {j} out of range in {'.'.join(parts)}")
                if last:
                    results.append((cur, j))
                else:
                    go(cur[j], i + 1)
                return
            raise KustomizeError(f"{where}: {part!r} selects in a list; use [key=value] or an index")
        if isinstance(cur, dict):
            if m:
                raise KustomizeError(f"{where}: {part!r} used on a mapping in {'.'.join(parts)}")
            if part == "*":
                for k in list(cur):
                    if last:
                        results.append((cur, k))
                    else:
                        go(cur[k], i + 1)
                return
            if part not in cur or cur[part] is None:
                if not create:
                    return
                if last:
                    results.append((cur, part))
                    return
                nxt = parts[i + 1]
                cur[part] = [] if (_MATCH.match(nxt) or nxt.isdigit()) else {}
            if last:
                results.append((cur, part))
            else:
                go(cur[part], i + 1)
            return
        # a scalar on the way: nothing to reach

    go(node, 0)
    return results


def _scalar_str(v: Any) -> str | None:
    if v is None:
        return None
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v) if not isinstance(v, (dict, list)) else None


def _parse_options(raw: Any, where: str) -> dict:
    return check_fields(raw or {}, _OPTION_FIELDS, f"{where}.options")


def _source_value(resources: list[Resource], src: dict, where: str) -> Any:
    check_fields(src, _SOURCE_FIELDS, f"{where}.source")
    sel = {k: src[k] for k in ("group", "version", "kind", "name", "namespace") if src.get(k)}
    matches = [r for r in resources if ids_select(r, sel)]
    if not matches:
        raise KustomizeError(f"{where}: nothing selected by source {_describe(sel)}")
    if len(matches) > 1:
        raise KustomizeError(f"{where}: more than one match for source {_describe(sel)}")
    path = src.get("fieldPath") or "metadata.name"
    found = _lookup(matches[0].obj, split_field_path(path), False, where)
    if not found:
        raise KustomizeError(f"{where}: fieldPath `{path}` is missing for replacement source {_describe(sel)}")
    container, key = found[0]
    value = copy.deepcopy(container[key])
    opts = _parse_options(src.get("options"), f"{where}.source")
    if opts.get("delimiter"):
        if not isinstance(value, str):
            raise KustomizeError(f"{where}: delimiter option can only be used with scalar nodes")
        pieces = value.split(opts["delimiter"])
        idx = int(opts.get("index") or 0)
        if idx < 0 or idx >= len(pieces):
            raise KustomizeError(f"{where}: options.index {idx} is out of bounds for value {value!r}")
        value = pieces[idx]
    return value


def _describe(sel: dict) -> str:
    return ", ".join(f"{k}={v}" for k, v in sel.items()) or "(empty selector)"


def _set_target(container: Any, key: Any, value: Any, opts: dict, where: str) -> None:
    if opts.get("delimiter"):
        current = container[key] if (isinstance(container, list) or key in container) else None
        if current is None:
            current = ""
        if not isinstance(current, str) or not isinstance(value, str):
            raise KustomizeError(f"{where}: delimiter option can only be used with scalar nodes")
        pieces = current.split(opts["delimiter"])
        idx = int(opts.get("index") or 0)
        if idx >= len(pieces):
            pieces.append(value)
        elif idx < 0:
            pieces.insert(0, value)
        else:
            pieces[idx] = value
        container[key] = opts["delimiter"].join(pieces)
        return
    container[key] = copy.deepcopy(value)


def _selected(r: Resource, selectors: list, where: str) -> bool:
    from trainerctl.kustomize.transformers.selectors import select

    for sel in selectors:
        check_fields(sel, _SELECT_FIELDS, f"{where}.select")
        id_sel = {k: sel[k] for k in ("group", "version", "kind", "name", "namespace") if sel.get(k)}
        if not ids_select(r, id_sel):
            continue
        rest = {k: sel[k] for k in ("labelSelector", "annotationSelector") if sel.get(k)}
        if rest and not select([r], rest, where):
            continue
        return True
    return False


def apply(resources: list[Resource], entries: list, loader: Loader) -> None:
    for i, entry in enumerate(_expand(entries, loader)):
        where = f"{loader.name('')}: replacements[{i}]"
        check_fields(entry, {"source", "targets", "path"}, where)
        if not isinstance(entry.get("source"), dict):
            raise KustomizeError(f"{where}: `source` is required")
        value = _source_value(resources, entry["source"], where)
        for t, target in enumerate(entry.get("targets") or []):
            twhere = f"{where}.targets[{t}]"
            check_fields(target, _TARGET_FIELDS, twhere)
            if not target.get("select"):
                raise KustomizeError(f"{twhere}: `select` is required")
            select = target["select"] if isinstance(target["select"], list) else [target["select"]]
            reject = target.get("reject") or []
            opts = _parse_options(target.get("options"), twhere)
            if not target.get("fieldPaths"):
                raise KustomizeError(f"{twhere}: `fieldPaths` is required")
            for r in resources:
                if not _selected(r, select, twhere):
                    continue
                if reject and _rejected(r, reject, twhere):
                    continue
                for fp in target["fieldPaths"]:
                    found = _lookup(r.obj, split_field_path(fp), bool(opts.get("create")), twhere)
                    if not found:
                        raise KustomizeError(
                            f"{twhere}: unable to find field `{fp}` in replacement target {r.id}"
                        )
                    for container, key in found:
                        _set_target(container, key, value, opts, twhere)


def _rejected(r: Resource, rejects: list, where: str) -> bool:
    for sel in rejects:
        id_sel = {k: sel[k] for k in ("group", "version", "kind", "name", "namespace") if sel.get(k)}
        if not id_sel and not sel.get("labelSelector") and not sel.get("annotationSelector"):
            continue
        if _selected(r, [sel], where):
            return True
    return False


def _expand(entries: list, loader: Loader) -> list:
    """Entries with `path:` load their replacements from a file."""
    out = []
    for entry in entries:
        if isinstance(entry, dict) and "path" in entry and len(entry) == 1:
            loaded = yamlio.load_all(loader.read_text(entry["path"]), loader.name(entry["path"]))
            for doc in loaded:
                out.extend(doc if isinstance(doc, list) else [doc])
        else:
            out.append(entry)
    return out
