"""LabelTransformer: `labels:`, `commonLabels:` and `kind: LabelTransformer`; also the map
setter AnnotationsTransformer shares."""

from __future__ import annotations

from trainerctl.kustomize import fieldspecs
from trainerctl.kustomize import schema
from trainerctl.kustomize.errors import KustomizeError

KIND = "LabelTransformer"
CONFIG = schema.Struct(KIND, {"labels": schema.Map(schema.STR),
                              "fieldSpecs": schema.List(schema.FIELD_SPEC)})


def map_setter(pairs: dict, specs_raw, ctx, what: str):
    """Add `pairs` to the mappings the field specs reach, creating them where asked."""
    specs = [fieldspecs.FieldSpec.from_config(f, ctx.where) for f in specs_raw or []]

    def transform(resmap) -> None:
        if not pairs:
            return
        for r in resmap:
            gvk = r.gvk
            for spec in specs:
                if not spec.applies_to(gvk):
                    continue

                def visit(parent, key, r=r, spec=spec):
                    current = parent.get(key)
                    if current is None:
                        current = {}
                        parent[key] = current
                    if not isinstance(current, dict):
                        raise KustomizeError(
                            f"{ctx.where}: {what}: {spec.path_string} in {r.id} is not a mapping"
                        )
                    current.update(pairs)

                fieldspecs.walk(r.obj, spec, fieldspecs.MAPPING, visit)

    return transform


def configure(cfg: dict, ctx):
    return map_setter(cfg.get("labels") or {}, cfg.get("fieldSpecs"), ctx, "labels")
