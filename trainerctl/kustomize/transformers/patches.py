"""What the three patch transformers share: reading patch text, telling a strategic merge patch
from a JSON 6902 one, and applying each as kustomize does (kustomize's ApplySmPatch keeps the
target's name, kind and namespace unless the patch's options allow a change)."""

from __future__ import annotations

import copy
import json

from trainerctl.kustomize import jsonpatch, smp, yamlread
from trainerctl.kustomize.aliases import ExcessiveAliasing
from trainerctl.kustomize.cachedread import SmallParses, load_resources
from trainerctl.kustomize.errors import KustomizeError
from trainerctl.kustomize.loadres import objects_of
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


def sm_patches(text: str, source: str, parses: SmallParses | None = None) -> list[Resource] | None:
    """The strategic merge patches in `text`, or None when it is not one (kustomize accepts a
    text as such when it reads as objects with a kind and a name). `parses` keeps the parse."""
    if text.lstrip().startswith("["):
        return None
    try:
        docs = load_resources(text, source, None, parses)
    except ExcessiveAliasing:
        raise
    except KustomizeError:
        return None
    if not all(isinstance(d.doc, dict) for d in docs):
        return None
    out = []
    for d in docs:
        try:
            out.extend(Resource(o, source, marked=d.marked, texts=d.texts)
                       for o in objects_of(d.doc, source))
        except KustomizeError:
            return None
    return out


class JsonOps:
    """A JSON 6902 patch: its operations, and for a JSON-text patch with a `test`, the values
    as written (jsonpatch compares those by their text)."""

    __slots__ = ("ops", "raw")

    def __init__(self, ops: list, raw: list | None = None):
        self.ops, self.raw = ops, raw


def json_ops(text: str, source: str) -> JsonOps | None:
    """The operations of a JSON 6902 patch, or None when `text` is not one. Operations are
    checked when applied, as kustomize does (a patch whose target selects nothing is never
    read further)."""
    raw = None
    if text.startswith("["):
        try:
            ops = json.loads(text)
        except ValueError:
            return None
        if isinstance(ops, list) and any(isinstance(op, dict) and op.get("op") == "test" for op in ops):
            raw = jsonpatch.raw_values(text)
    else:
        try:
            # kustomize converts a YAML patch to JSON with go-yaml v2 (YAML 1.1 words).
            ops = yamlread.load_as_json(text, source)
        except ExcessiveAliasing:
            raise
        except KustomizeError:
            return None
    if not isinstance(ops, list) or not all(op is None or isinstance(op, dict) for op in ops):
        return None
    return JsonOps([op or {} for op in ops], raw)


def apply_json6902(r: Resource, patch: JsonOps, source: str) -> None:
    """kustomize's patchjson6902 filter: the object as JSON, the patch, and back; on the way
    every null is spelled out (kyaml's merge no longer drops one) and numbers become float64."""
    try:
        doc = _as_json(r.obj, r.marked)
    except KustomizeError as exc:
        raise KustomizeError(f"{source}: cannot apply JSON patch to {r.id}: {exc}") from None
    md = doc.get("metadata")
    build = r.build_annotations()
    if isinstance(md, dict) and build and (md.get("annotations") is None
                                           or isinstance(md["annotations"], dict)):
        # The patch sees kustomize's own annotations (the previous ids it has just stored).
        md["annotations"] = {**(md.get("annotations") or {}), **build}
    try:
        patched = jsonpatch.apply(doc, patch.ops, patch.raw)
    except jsonpatch.JsonPatchError as exc:
        raise KustomizeError(f"{source}: cannot apply JSON patch to {r.id}: {exc}") from None
    if not isinstance(patched, dict):
        raise KustomizeError(f"{source}: cannot apply JSON patch to {r.id}: the result is not an "
                             f"object (json: cannot unmarshal array into map[string]interface {{}})")
    patched = _from_json(patched)
    md = patched.get("metadata")
    name = md.get("name") if isinstance(md, dict) else None
    if (name is None or name == "") and not str(patched.get("kind", "")).endswith("List"):
        raise KustomizeError(f"{source}: the JSON patch leaves {r.id} without metadata.name "
                             f"(kubectl: missing metadata.name in object)")
    r.obj.clear()
    r.obj.update(patched)
    r.marked = False
    r.texts = None  # every scalar is written anew from JSON: no text is as read any more
    md = r.obj.get("metadata")
    if isinstance(md, dict):
        # kustomize sets the annotations again, its own as they were before the patch
        ann = md.get("annotations")
        if isinstance(ann, dict):
            for key in build:
                ann.pop(key, None)
        r.annotations_as_text()


def _as_json(value, marked: bool):
    """A plain copy of `value` as kyaml's MarshalJSON sees it: a bare null in a flow mapping
    (`{a: }`) is an empty string there, NaN and infinities are refused."""
    if isinstance(value, dict):
        if marked and getattr(value, "dups", ()):
            raise KustomizeError(f"mapping key {value.dups[0][0]!r} is written twice: kubectl "
                                 "fails to write the object as JSON (mapping key already defined)")
        out = {k: _as_json(v, marked) for k, v in value.items()}
        if marked and getattr(value, "flow", False):
            for k in value.bare:
                if out.get(k, "") is None:
                    out[k] = ""
        return out
    if isinstance(value, list):
        return [_as_json(v, marked) for v in value]
    if value.__class__ is yamlread.Styled:
        return str(value)
    if isinstance(value, float) and (value != value or value in (float("inf"), float("-inf"))):
        raise KustomizeError(f"json: unsupported value: {value}")
    return value


_FLOAT_EXACT = 2 ** 53


def _from_json(value):
    """Back from JSON as kyaml's UnmarshalJSON reads it: every number is a float64, which only
    shows for integers beyond 2**53 (they lose their last digits)."""
    if isinstance(value, dict):
        return {k: _from_json(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_from_json(v) for v in value]
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) > _FLOAT_EXACT:
        return float(value)
    return None if value is jsonpatch.RAW_NULL else value


def _with_build_annotations(r: Resource) -> tuple[dict, bool]:
    """Put in `r`'s annotations what kustomize keeps there while it builds (previous ids,
    prefixes, suffixes), for a merge to meet them as kyaml does; (them, whether the object
    had annotations before)."""
    build = r.build_annotations()
    md = r.obj.get("metadata")
    had = isinstance(md, dict) and "annotations" in md
    if build and isinstance(md, dict) and (md.get("annotations") is None
                                           or isinstance(md["annotations"], dict)):
        md["annotations"] = {**(md.get("annotations") or {}), **build}
    else:
        build = {}
    return build, had


def _without_build_annotations(r: Resource, put: tuple[dict, bool]) -> None:
    """Take them out again. What the merge removed (a null or `$patch` on the annotations) is
    gone from the build state too, as it is from kustomize's."""
    build, had = put
    if not build:
        return
    md = r.obj.get("metadata")
    ann = md.get("annotations") if isinstance(md, dict) else None
    kept = {k for k in build if isinstance(ann, dict) and ann.get(k) == build[k]}
    for key in kept:
        del ann[key]
    if isinstance(ann, dict) and not ann and not had:
        del md["annotations"]
    if not {f"internal.config.kubernetes.io/{w}" for w in
            ("previousNames", "previousNamespaces", "previousKinds")} <= kept:
        r.previous = []
    for what in ("prefixes", "suffixes"):
        if f"internal.config.kubernetes.io/{what}" not in kept:
            setattr(r, what, [])


def apply_sm(resmap, target: Resource, patch: Resource, by_id: bool = False) -> None:
    """kustomize's ResMap.ApplySmPatch for one selected target; `by_id`: Resource.ApplySmPatch
    (a `patches` entry without a target). Through the ResMap the patch's labels and
    annotations are first set again from their text (CopyMergeMetaDataFieldsFrom), so there
    a null in them is the string of its text, not a deletion."""
    p = copy.deepcopy(patch.obj)
    md = p.get("metadata")
    if not by_id and isinstance(md, dict):
        for field in ("labels", "annotations"):
            texts = patch.text_map(field)
            if texts:
                md[field] = texts
            else:
                md.pop(field, None)
    p["apiVersion"] = target.obj.get("apiVersion")
    p["kind"] = patch.obj.get("kind")
    name, kind, namespace = target.name, target.kind, target.namespace
    if patch.allow_name_change or patch.allow_kind_change:
        target.store_previous()
    build = _with_build_annotations(target)
    result, styled = smp.apply(target.obj, p, patch.source)
    # the patch's maps may be the target's now; Styled strings are made plain when written
    target.marked = target.marked or patch.marked or styled
    if not result:
        target.obj.clear()
        resmap.drop_empties()
        return
    _without_build_annotations(target, build)
    if not patch.allow_kind_change:
        target.obj["kind"] = kind
    md = target.metadata
    if not patch.allow_name_change:
        md["name"] = name
    if namespace:
        md["namespace"] = namespace
    else:
        md.pop("namespace", None)
