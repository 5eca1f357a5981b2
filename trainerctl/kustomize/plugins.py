"""Builtin plugins by kind, and reading the `generators:` / `transformers:` configs that name them.

A builtin plugin config (`apiVersion: builtin`, `kind: PatchTransformer`, ...) is read with the
plugin module's CONFIG type and handed to the same `configure` a kustomization field uses: one
implementation per transformer or generator. Exec, container and KRM-function plugins are
refused by name, as kustomize refuses them without its alpha-plugin flags.
"""

from __future__ import annotations

import importlib

from trainerctl.kustomize import schema
from trainerctl.kustomize.errors import KustomizeError

TYPE_CHECKING = False  # typing costs a tenth of a kustomize run's start-up
if TYPE_CHECKING:
    from typing import Any, Callable

# kind -> module under trainerctl.kustomize (which has CONFIG and configure, or PLUGINS).
GENERATORS = {
    "ConfigMapGenerator": "generators.configmap",
    "SecretGenerator": "generators.secret",
    "IAMPolicyGenerator": "generators.iampolicy",
}
TRANSFORMERS = {
    "AnnotationsTransformer": "transformers.annotations",
    "HashTransformer": "transformers.hashes",
    "ImageTagTransformer": "transformers.images",
    "LabelTransformer": "transformers.labels",
    "NamespaceTransformer": "transformers.namespace",
    "PatchJson6902Transformer": "transformers.patchjson6902",
    "PatchStrategicMergeTransformer": "transformers.patchstrategicmerge",
    "PatchTransformer": "transformers.patch",
    "PrefixSuffixTransformer": "transformers.affix",
    "PrefixTransformer": "transformers.affix",
    "SuffixTransformer": "transformers.affix",
    "ReplacementTransformer": "transformers.replacements",
    "ReplicaCountTransformer": "transformers.replicas",
}
# Builtins kustomize has that trainerctl refuses, and why.
REFUSED = {
    "HelmChartInflationGenerator": "needs the helm binary (kubectl kustomize --enable-helm)",
    "ValueAddTransformer": "an alpha transformer with no kustomization field",
}


class Context:
    """What a plugin may use: files under its kustomization's root, a name for messages, and
    where the build keeps small files' parses (cachedread.SmallParses, or None)."""

    __slots__ = ("loader", "where", "parses")

    def __init__(self, loader: Any, where: str, parses: Any = None):
        self.loader, self.where, self.parses = loader, where, parses


def lookup(kind: str) -> tuple[schema.Struct, Callable]:
    module_name = GENERATORS.get(kind) or TRANSFORMERS[kind]
    module = importlib.import_module(f"trainerctl.kustomize.{module_name}")
    if hasattr(module, "PLUGINS"):
        return module.PLUGINS[kind]
    return module.CONFIG, module.configure


def configure(kind: str, cfg: dict, ctx: Context):
    """A kustomization field's plugin: `cfg` is already typed by the kustomization schema."""
    return lookup(kind)[1](cfg, ctx)


def from_config(res, role: str, loader) -> Callable:
    """A `generators:` or `transformers:` config object as a configured plugin."""
    obj = res.obj
    api_version, kind = obj.get("apiVersion"), obj.get("kind")
    where = f"{res.source}: {kind} {res.name!r}"
    if api_version != "builtin":
        raise KustomizeError(f"{where}: {_external(obj)} plugins are not run: kustomize needs "
                             f"--enable-alpha-plugins for them and trainerctl runs only builtin "
                             f"plugins (apiVersion: builtin)")
    if kind in REFUSED:
        raise KustomizeError(f"{where}: builtin {kind} is not supported by trainerctl: "
                             f"{REFUSED[kind]}")
    if kind not in GENERATORS and kind not in TRANSFORMERS:
        raise KustomizeError(f"{where}: unable to load builtin {kind}: no such builtin plugin")
    if role == "generator" and kind not in GENERATORS:
        raise KustomizeError(f"{where}: plugin {kind} is not a generator")
    if role == "transformer" and kind not in TRANSFORMERS:
        raise KustomizeError(f"{where}: plugin {kind} is not a transformer")
    config, make = lookup(kind)
    cfg = schema.Decoder(where, strict=False).struct(obj, config, "")
    return make(cfg, Context(loader, where))


def _external(obj: dict) -> str:
    md = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
    ann = md.get("annotations") if isinstance(md.get("annotations"), dict) else {}
    spec = ann.get("config.kubernetes.io/function") or ""
    if "container" in spec or "container" in str(obj.get("spec", "")):
        return "container (KRM function)"
    if "exec" in spec:
        return "exec (KRM function)"
    if spec or "starlark" in spec:
        return "KRM function"
    return f"external ({obj.get('apiVersion')}/{obj.get('kind')}) exec or Go"
