"""PatchTransformer: `patches:` entries and `kind: PatchTransformer`. A patch is a strategic
merge patch (applied by id, or to a `target` selection) or a JSON 6902 patch (needs a target)."""

from __future__ import annotations

from trainerctl.kustomize import schema
from trainerctl.kustomize.errors import KustomizeError
from trainerctl.kustomize.transformers import patches
from trainerctl.kustomize.transformers.selectors import select

KIND = "PatchTransformer"
CONFIG = schema.Struct(KIND, {"path": schema.STR, "patch": schema.STR,
                              "target": schema.SELECTOR, "options": schema.PATCH_ARGS})


def configure(cfg: dict, ctx):
    text, source = patches.load_text(cfg, ctx.loader, ctx.where)
    options = cfg.get("options") or {}
    target = cfg.get("target")
    sm = patches.sm_patches(text, source, ctx.parses)
    ops = patches.json_ops(text, source) if sm is None else None
    if sm is None and ops is None:
        raise KustomizeError(f"{source}: unable to parse SM or JSON patch")
    for p in sm or []:
        p.allow_name_change = bool(options.get("allowNameChange"))
        p.allow_kind_change = bool(options.get("allowKindChange"))
    if sm is not None and target is not None and len(sm) > 1:
        raise KustomizeError(f"{source}: Multiple Strategic-Merge Patches in one `patches` entry "
                             f"is not allowed to set `patches.target` field")

    def transform(resmap) -> None:
        if sm == []:
            return  # an empty patch file changes nothing
        if sm is not None:
            if target is not None:
                for r in select(resmap.items, target, ctx.where):
                    patches.apply_sm(resmap, r, sm[0])
                resmap.drop_empties()
                return
            for p in sm:
                r = resmap.get_by_id(p.orig_id(), source)
                patches.apply_sm(resmap, r, p, by_id=True)
            resmap.drop_empties()
            return
        if target is None:
            raise KustomizeError(f"{source}: must specify a target for JSON patch")
        for r in select(resmap.items, target, ctx.where):
            r.store_previous()
            patches.apply_json6902(r, ops, source)

    return transform
