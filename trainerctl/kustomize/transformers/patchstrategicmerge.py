"""PatchStrategicMergeTransformer: `patchesStrategicMerge:` and its plugin config. Each entry
is inline patch YAML or a file."""

from __future__ import annotations

from trainerctl.kustomize import schema
from trainerctl.kustomize.errors import KustomizeError
from trainerctl.kustomize.loadres import resources_from
from trainerctl.kustomize.transformers import patches

KIND = "PatchStrategicMergeTransformer"
CONFIG = schema.Struct(KIND, {"paths": schema.List(schema.STR), "patches": schema.STR})


def _entry(item: str, ctx) -> list:
    inline = patches.sm_patches(item, ctx.where, ctx.parses) if item.strip() else []
    if inline is not None:
        return inline
    text = ctx.loader.read_text(item)
    found = patches.sm_patches(text, ctx.loader.name(item), ctx.parses)
    if found is None:
        return resources_from(text, ctx.loader.name(item))  # raises the precise error
    return found


def configure(cfg: dict, ctx):
    paths, inline = cfg.get("paths") or [], cfg.get("patches") or ""
    if not paths and not inline:
        raise KustomizeError(f"{ctx.where}: empty file path and empty patch content")
    loaded = [p for item in paths for p in _entry(item, ctx)]
    if inline:
        loaded += patches.sm_patches(inline, ctx.where, ctx.parses) or []
    if not loaded:
        raise KustomizeError(f"{ctx.where}: patch appears to be empty; files={paths}")

    def transform(resmap) -> None:
        for p in loaded:
            r = resmap.get_by_id(p.orig_id(), p.source)
            patches.apply_sm(resmap, r, p)
        resmap.drop_empties()

    return transform
