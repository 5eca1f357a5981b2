"""`patches`, `patchesStrategicMerge` and `patchesJson6902`."""

from __future__ import annotations

import copy
import json

from trainerctl.kustomize import smp, yamlio
from trainerctl.kustomize.errors import KustomizeError
from trainerctl.kustomize.kustfile import check_fields
from trainerctl.kustomize.loader import Loader
from trainerctl.kustomize.resid import Gvk, ResId
from trainerctl.kustomize.resource import Resource
from trainerctl.kustomize.transformers.selectors import select

_PATCH_FIELDS = {"path", "patch", "target", "options"}
_OPTIONS = {"allowNameChange", "allowKindChange"}


def _is_json6902(doc) -> bool:
    return isinstance(doc, list)


def _load_patch_text(entry: dict, loader: Loader, where: str) -> tuple[str, str]:
    if entry.get("path") and entry.get("patch"):
        raise KustomizeError(f"{where}: patch and path can't be set at the same time")
    if entry.get("path"):
        return loader.read_text(entry["path"]), loader.name(entry["path"])
    if isinstance(entry.get("patch"), str):
        return entry["patch"], where
    raise KustomizeError(f"{where}: must specify a patch (`path` or `patch`)")


def _parse_json6902(text: str, source: str) -> list:
    text_stripped = text.lstrip()
    if text_stripped.startswith("["):
        try:
            ops = json.loads(text)
        except ValueError as exc:
            raise KustomizeError(f"{source}: invalid JSON patch: {exc}") from None
    else:
        ops = yamlio.load(text, source)
    if not isinstance(ops, list):
        raise KustomizeError(f"{source}: a JSON 6902 patch must be a list of operations")
    for i, op in enumerate(ops):
        if not isinstance(op, dict) or op.get("op") not in (
            "add", "remove", "replace", "move", "copy", "test"
        ):
            raise KustomizeError(
                f"{source}: operation {i}: `op` must be one of add, remove, replace, move, copy, test"
            )
        if not isinstance(op.get("path"), str):
            raise KustomizeError(f"{source}: operation {i}: `path` is required")
        if op["op"] in ("add", "replace", "test") and "value" not in op:
            raise KustomizeError(f"{source}: operation {i} ({op['op']}): `value` is required")
        if op["op"] in ("move", "copy") and not isinstance(op.get("from"), str):
            raise KustomizeError(f"{source}: operation {i} ({op['op']}): `from` is required")
    return ops


def apply_json6902(r: Resource, ops: list, source: str) -> None:
    import jsonpatch

    try:
        patched = jsonpatch.JsonPatch(ops).apply(r.obj, in_place=False)
    except (jsonpatch.JsonPatchException, jsonpatch.JsonPointerException, KeyError,
            IndexError, TypeError) as exc:
        raise KustomizeError(f"{source}: cannot apply JSON patch to {r.id}: {exc}") from None
    r.obj.clear()
    r.obj.update(patched)


def _apply_smp(resources: list[Resource], r: Resource, patch: dict, options: dict) -> None:
    name, kind, namespace = r.name, r.kind, r.namespace
    if options.get("allowNameChange") or options.get("allowKindChange"):
        r.store_previous()
    result = smp.apply(r.obj, patch)
    if result is None:
        resources.remove(r)
        return
    r.obj.clear()
    r.obj.update(result)
    # kustomize quietly keeps the target's name, kind and namespace unless a change is allowed.
    if not options.get("allowKindChange"):
        r.obj["kind"] = kind
    md = r.metadata
    if not options.get("allowNameChange"):
        md["name"] = name
    if namespace:
        md["namespace"] = namespace
    else:
        md.pop("namespace", None)


def _find_by_id(resources: list[Resource], patch: dict, source: str) -> Resource:
    gvk = Gvk.of(patch)
    md = patch.get("metadata") if isinstance(patch.get("metadata"), dict) else {}
    name, ns = md.get("name") or "", md.get("namespace") or ""
    want = ResId(gvk, name, ns)
    matches = []
    for r in resources:
        if r.gvk != gvk:
            continue
        for n, rns in r.all_names():
            if n == name and ResId(gvk, n, rns).effective_namespace == want.effective_namespace:
                matches.append(r)
                break
    if not matches:
        raise KustomizeError(f"{source}: no resource matches strategic merge patch {want}")
    if len(matches) > 1:
        raise KustomizeError(f"{source}: multiple resources match strategic merge patch {want}")
    return matches[0]


def apply_patches(resources: list[Resource], entries: list, loader: Loader) -> None:
    for i, entry in enumerate(entries):
        where = f"{loader.name('')}: patches[{i}]"
        check_fields(entry, _PATCH_FIELDS, where)
        options = check_fields(entry.get("options") or {}, _OPTIONS, f"{where}.options")
        text, source = _load_patch_text(entry, loader, where)
        docs = yamlio.load_all(text, source) if not text.lstrip().startswith("[") else [None]
        if len(docs) == 1 and (docs[0] is None or _is_json6902(docs[0])):
            ops = _parse_json6902(text, source)
            if not entry.get("target"):
                raise KustomizeError(f"{source}: a JSON 6902 patch needs a `target`")
            # JSON 6902 patches may rename (kustomize checks names only for SM patches).
            for r in select(resources, entry["target"], where):
                apply_json6902(r, ops, source)
            continue
        for doc in docs:
            if not isinstance(doc, dict):
                raise KustomizeError(f"{source}: unable to parse SM or JSON patch")
            if entry.get("target"):
                for r in select(resources, entry["target"], where):
                    p = copy.deepcopy(doc)
                    if not isinstance(p.get("metadata"), dict):
                        p["metadata"] = {}
                    md = p["metadata"]
                    md["name"] = r.name
                    if r.namespace:
                        md["namespace"] = r.namespace
                    else:
                        md.pop("namespace", None)
                    p["apiVersion"] = r.obj.get("apiVersion")
                    p["kind"] = r.obj.get("kind")
                    _apply_smp(resources, r, p, options)
            else:
                r = _find_by_id(resources, doc, source)
                _apply_smp(resources, r, doc, options)


def apply_patches_strategic_merge(resources: list[Resource], paths: list, loader: Loader) -> None:
    for i, item in enumerate(paths):
        where = f"{loader.name('')}: patchesStrategicMerge[{i}]"
        if loader.is_local_file(item) or "\n" not in item and not item.lstrip().startswith(("apiVersion", "kind", "{")):
            text, source = loader.read_text(item), loader.name(item)
        else:
            text, source = item, where
        for doc in yamlio.load_all(text, source):
            if not isinstance(doc, dict):
                raise KustomizeError(f"{source}: a strategic merge patch must be an object")
            r = _find_by_id(resources, doc, source)
            _apply_smp(resources, r, doc, {})


def apply_patches_json6902(resources: list[Resource], entries: list, loader: Loader) -> None:
    for i, entry in enumerate(entries):
        where = f"{loader.name('')}: patchesJson6902[{i}]"
        check_fields(entry, {"path", "patch", "target"}, where)
        if not isinstance(entry.get("target"), dict):
            raise KustomizeError(f"{where}: `target` is required")
        text, source = _load_patch_text(entry, loader, where)
        ops = _parse_json6902(text, source)
        target = dict(entry["target"])
        matches = select(resources, target, where)
        for r in matches:
            apply_json6902(r, ops, source)
