"""AnnotationsTransformer: `commonAnnotations:` and `kind: AnnotationsTransformer`."""

from __future__ import annotations

from trainerctl.kustomize import schema
from trainerctl.kustomize.transformers.labels import map_setter

KIND = "AnnotationsTransformer"
CONFIG = schema.Struct(KIND, {"annotations": schema.Map(schema.STR),
                              "fieldSpecs": schema.List(schema.FIELD_SPEC)})


def configure(cfg: dict, ctx):
    return map_setter(cfg.get("annotations") or {}, cfg.get("fieldSpecs"), ctx, "annotations")
