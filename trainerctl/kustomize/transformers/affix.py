"""PrefixTransformer, SuffixTransformer and the legacy PrefixSuffixTransformer: `namePrefix:`,
`nameSuffix:` and their plugin configs."""

from __future__ import annotations

from trainerctl.kustomize import fieldspecs
from trainerctl.kustomize import schema
from trainerctl.kustomize.errors import KustomizeError
from trainerctl.kustomize.resid import Gvk

_FS = schema.List(schema.FIELD_SPEC)
PLUGINS = {}
# Never renamed: their names are fixed by what they define.
_SKIP = (Gvk("", "", "CustomResourceDefinition"), Gvk("apiregistration.k8s.io", "", "APIService"),
         Gvk("", "", "Namespace"))


def _skipped(gvk: Gvk) -> bool:
    return any(gvk.selected_by(s.group, s.version, s.kind) for s in _SKIP)


def _make(affix: str, is_prefix: bool, specs_raw, ctx):
    if specs_raw is None:
        raise KustomizeError(f"{ctx.where}: fieldSpecs is not expected to be nil")
    specs = [fieldspecs.FieldSpec.from_config(f, ctx.where) for f in specs_raw]

    def visit(parent, key) -> None:
        value = parent.get(key)
        text = "" if value is None else value if isinstance(value, str) else str(value)
        parent[key] = affix + text if is_prefix else text + affix

    def transform(resmap) -> None:
        for r in resmap:
            org = r.orig_id().gvk
            if _skipped(org):
                continue
            for spec in specs:
                if not org.selected_by(spec.group, spec.version, spec.kind):
                    continue
                if spec.path == ("metadata", "name") and affix:
                    (r.prefixes if is_prefix else r.suffixes).append(affix)
                    r.store_previous()
                if spec.applies_to(r.gvk):
                    fieldspecs.walk(r.obj, spec, fieldspecs.SCALAR, visit)

    return transform


def configure_prefix(cfg: dict, ctx):
    return _make(cfg.get("prefix", ""), True, cfg.get("fieldSpecs"), ctx)


def configure_suffix(cfg: dict, ctx):
    return _make(cfg.get("suffix", ""), False, cfg.get("fieldSpecs"), ctx)


def configure_both(cfg: dict, ctx):
    prefix, suffix = configure_prefix(cfg, ctx), configure_suffix(cfg, ctx)

    def transform(resmap) -> None:
        prefix(resmap)
        suffix(resmap)

    return transform


PLUGINS = {
    "PrefixTransformer": (schema.Struct("PrefixTransformer", {"prefix": schema.STR,
                                                              "fieldSpecs": _FS}),
                          configure_prefix),
    "SuffixTransformer": (schema.Struct("SuffixTransformer", {"suffix": schema.STR,
                                                              "fieldSpecs": _FS}),
                          configure_suffix),
    "PrefixSuffixTransformer": (schema.Struct("PrefixSuffixTransformer", {
        "prefix": schema.STR, "suffix": schema.STR, "fieldSpecs": _FS}), configure_both),
}
