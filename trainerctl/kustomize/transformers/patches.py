"""What the three patch transformers share: reading patch text, telling a strategic merge patch
from a JSON 6902 one, and applying each as kustomize does (kustomize's ApplySmPatch keeps the
target's name, kind and namespace unless the patch's options allow a change)."""

from __future__ import annotations

import copy
import json

from trainerctl.kustomize import smp, yamlio
from trainerctl.kustomize.errors import KustomizeError
from trainerctl.kustomize.resource import Resource


def load_text(cfg: dict, loader, where: str, inline_key: str = "patch") -> tuple[str, str]:
    """The patch text and how to name it in messages."""
    inline = (cfg.get(inline_key) or "").strip()
    path = cfg.get("path") or ""
    if inline and path:
        raise KustomizeError(f"{where}: patch and path can't be set at the same time")
    if path:
        return loader.read_text(path), loader.name(path)
    if inline:
        return inline, where
    raise KustomizeError(f"{where}: must specify one of patch and path")


def sm_patches(text: str, source: str) -> list[Resource] | None:
    """The strategic merge patches in `text`, or None when it is not one (kustomize accepts a
    text as such when it reads as objects with a kind and a name)."""
    if text.lstrip().startswith("["):
        return None
    try:
        docs = yamlio.load_all(text, source, raw_annotations=True)
    except KustomizeError:
        return None
    if not all(isinstance(d, dict) for d in docs):
        return None
    out = []
    for doc in docs:
        from trainerctl.kustomize.loadres import objects_of

        try:
            out.extend(Resource(o, source) for o in objects_of(doc, source))
        except KustomizeError:
            return None
    return out


def json_ops(text: str, source: str) -> list | None:
    """The operations of a JSON 6902 patch, or None when `text` is not one."""
    if text.startswith("["):
        try:
            ops = json.loads(text)
        except ValueError:
            return None
    else:
        try:
            # kustomize converts a YAML patch to JSON with go-yaml v2 (YAML 1.1 words).
            docs = yamlio.load_all(text, source, yaml11=True)
        except KustomizeError:
            return None
        ops = docs[0] if docs else None
    if not isinstance(ops, list):
        return None
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
    if isinstance(patched, dict):
        r.obj.update(patched)


def apply_sm(resmap, target: Resource, patch: Resource) -> None:
    """kustomize's ResMap.ApplySmPatch for one selected target."""
    p = copy.deepcopy(patch.obj)
    p["apiVersion"] = target.obj.get("apiVersion")
    p["kind"] = patch.obj.get("kind")
    name, kind, namespace = target.name, target.kind, target.namespace
    if patch.allow_name_change or patch.allow_kind_change:
        target.store_previous()
    result = smp.apply(target.obj, p, patch.source)
    if not result:
        target.obj.clear()
        resmap.drop_empties()
        return
    target.obj.clear()
    target.obj.update(result)
    if not patch.allow_kind_change:
        target.obj["kind"] = kind
    md = target.metadata
    if not patch.allow_name_change:
        md["name"] = name
    if namespace:
        md["namespace"] = namespace
    else:
        md.pop("namespace", None)
