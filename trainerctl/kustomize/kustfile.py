"""Reading a kustomization file as kustomize does: YAML 1.1 (a repeated key takes the last
value), every field typed (schema.KUSTOMIZATION), keys in any letter case, unknown fields and
wrong types refused by name; then kustomize's FixKustomization (bases → resources, imageTags →
images, env → envs) and its emptiness and kind/apiVersion checks."""

from __future__ import annotations

from trainerctl.kustomize import schema
from trainerctl.kustomize.cachedread import SmallParses, load_yaml11
from trainerctl.kustomize.errors import KustomizeError
from trainerctl.parsed_cache import ParsedCache

KINDS = {"Kustomization": "kustomize.config.k8s.io/v1beta1",
         "Component": "kustomize.config.k8s.io/v1alpha1"}
# Fields kustomize knows that trainerctl does not build, with the reason given to the user.
UNSUPPORTED = {
    "helmCharts": "needs the helm binary (kubectl kustomize --enable-helm)",
    "helmGlobals": "needs the helm binary (kubectl kustomize --enable-helm)",
    "helmChartInflationGenerator": "needs the helm binary (kubectl kustomize --enable-helm)",
}
BUILD_METADATA = ("originAnnotations", "transformerAnnotations", "managedByLabel")


def parse(text: str, source: str, cache: ParsedCache | None = None, small: SmallParses | None = None) -> dict:
    """The kustomization in `text` (`cache`, or `small` for a small file, keeps its YAML parse
    for the next build)."""
    docs = load_yaml11(text, source, cache, small)
    if len(docs) > 1:
        raise KustomizeError(f"{source}: expected one YAML document, found {len(docs)}")
    data = docs[0] if docs else None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise KustomizeError(f"{source}: invalid Kustomization: expected a mapping at the top level")
    k = schema.Decoder(source, strict=True).struct(data, schema.KUSTOMIZATION, "")
    for key in UNSUPPORTED:
        if k.get(key):
            raise KustomizeError(f"{source}: field `{key}` is not supported by trainerctl: "
                                 f"{UNSUPPORTED[key]}")
    _fix(k)
    # kustomize compares with an empty Kustomization (reflect.DeepEqual): `resources: []` is a
    # list, not nothing, while "", false and 0 are the zero values.
    if not any(v is not None and (isinstance(v, (list, dict)) or v)
               for key, v in k.items() if key not in ("apiVersion", "kind")):
        raise KustomizeError(f"{source}: kustomization.yaml is empty")
    kind = k.get("kind") or "Kustomization"
    if kind not in KINDS:
        raise KustomizeError(f"{source}: field `kind` should be Kustomization or Component, "
                             f"got {kind!r}")
    if k.get("apiVersion") and k["apiVersion"] != KINDS[kind]:
        raise KustomizeError(f"{source}: field `apiVersion` for {kind} should be {KINDS[kind]}, "
                             f"got {k['apiVersion']!r}")
    k["kind"] = kind
    for opt in k.get("buildMetadata") or []:
        if opt not in BUILD_METADATA:
            raise KustomizeError(f"{source}: field `buildMetadata` takes {', '.join(BUILD_METADATA)};"
                                 f" got {opt!r}")
    _check_sort_options(k.get("sortOptions"), source)
    return k


def _fix(k: dict) -> None:
    """kustomize's FixKustomization: deprecated spellings folded into their successors."""
    if k.get("bases"):
        k["resources"] = list(k.get("resources") or []) + k.pop("bases")
    k.pop("bases", None)
    if k.get("imageTags"):
        k["images"] = list(k.get("images") or []) + k.pop("imageTags")
    k.pop("imageTags", None)
    for key in ("configMapGenerator", "secretGenerator"):
        for gen in k.get(key) or []:
            if gen.get("env"):
                gen["envs"] = list(gen.get("envs") or []) + [gen.pop("env")]
            gen.pop("env", None)


def _check_sort_options(opts: dict | None, source: str) -> None:
    """kustomize's SortOrderTransformer configuration checks."""
    if opts is None:
        return
    order = opts.get("order", "")
    legacy = opts.get("legacySortOptions")
    if order not in ("legacy", "fifo"):
        raise KustomizeError(f"{source}: field `sortOptions.order` must be legacy or fifo, "
                             f"got {order!r}")
    if order == "fifo" and legacy is not None:
        raise KustomizeError(f"{source}: field `sortOptions.legacySortOptions` is not allowed "
                             f"with order fifo")
