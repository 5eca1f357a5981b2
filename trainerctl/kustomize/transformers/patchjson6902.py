"""PatchJson6902Transformer: `patchesJson6902:` entries and its plugin config (the target needs
a name)."""

from __future__ import annotations

from trainerctl.kustomize import schema
from trainerctl.kustomize.errors import KustomizeError
from trainerctl.kustomize.transformers import patches
from trainerctl.kustomize.transformers.selectors import select

KIND = "PatchJson6902Transformer"
CONFIG = schema.Struct(KIND, {"target": schema.SELECTOR, "path": schema.STR,
                              "jsonOp": schema.STR})


def configure(cfg: dict, ctx):
    target = cfg.get("target") or {}
    if not target.get("name"):
        raise KustomizeError(f"{ctx.where}: must specify the target name")
    text, source = patches.load_text(cfg, ctx.loader, ctx.where, inline_key="jsonOp")
    if not text:
        raise KustomizeError(f"{source}: patch file seems to be empty")
    ops = patches.json_ops(text, source)
    if ops is None:
        raise KustomizeError(f"{source}: not a JSON 6902 patch (a list of operations)")
    if not ops.ops:
        raise KustomizeError(f"{source}: patch appears to be empty")

    def transform(resmap) -> None:
        for r in select(resmap.items, target, ctx.where):
            patches.apply_json6902(r, ops, source)

    return transform
