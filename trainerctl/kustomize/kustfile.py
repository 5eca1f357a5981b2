"""Reading a kustomization file: every field is known, checked for shape, or refused by name."""

from __future__ import annotations

from typing import Any

from trainerctl.kustomize import yamlio
from trainerctl.kustomize.errors import KustomizeError

# Fields of kustomize's types.Kustomization that this engine implements.
SUPPORTED = {
    "apiVersion": str, "kind": str, "metadata": dict,
    "resources": list, "bases": list, "components": list, "crds": list,
    "namespace": str, "namePrefix": str, "nameSuffix": str,
    "commonLabels": dict, "labels": list, "commonAnnotations": dict,
    "images": list, "replicas": list,
    "configMapGenerator": list, "secretGenerator": list, "generatorOptions": dict,
    "patches": list, "patchesStrategicMerge": list, "patchesJson6902": list,
    "replacements": list, "configurations": list, "vars": list,
    "sortOptions": dict, "buildMetadata": list,
}
# Fields kustomize knows that trainerctl does not: refused by name rather than ignored.
UNSUPPORTED = {
    "helmCharts", "helmGlobals", "helmChartInflationGenerator", "generators", "transformers",
    "validators", "openapi", "imageTags",
}
KINDS = {"Kustomization", "Component"}


def parse(text: str, source: str) -> dict:
    data = yamlio.load(text, source)
    if data is None:
        raise KustomizeError(f"{source}: kustomization is empty")
    if not isinstance(data, dict):
        raise KustomizeError(f"{source}: expected a mapping at the top level")
    for key, value in data.items():
        if key in UNSUPPORTED:
            raise KustomizeError(f"{source}: field `{key}` is not supported by trainerctl")
        expected = SUPPORTED.get(key)
        if expected is None:
            raise KustomizeError(f"{source}: invalid Kustomization: unknown field `{key}`")
        if value is None:
            continue
        if not isinstance(value, expected):
            raise KustomizeError(
                f"{source}: field `{key}` must be a {_type_word(expected)}, "
                f"got {_type_word(type(value))}"
            )
    kind = data.get("kind") or "Kustomization"
    if kind not in KINDS:
        raise KustomizeError(f"{source}: kind `{kind}` is not Kustomization or Component")
    for key in ("resources", "bases", "components", "crds", "configurations",
                "patchesStrategicMerge"):
        for item in data.get(key) or []:
            if not isinstance(item, str):
                raise KustomizeError(f"{source}: `{key}` entries must be strings, got {item!r}")
    for key in ("commonLabels", "commonAnnotations"):
        for k, v in (data.get(key) or {}).items():
            if not isinstance(v, str):
                raise KustomizeError(f"{source}: `{key}.{k}` must be a string, got {v!r}")
    if data.get("sortOptions"):
        order = data["sortOptions"].get("order")
        if order not in ("legacy", "fifo"):
            raise KustomizeError(f"{source}: sortOptions.order must be legacy or fifo, got {order!r}")
    if data.get("buildMetadata"):
        for opt in data["buildMetadata"]:
            if opt not in ("originAnnotations", "transformerAnnotations", "managedByLabel"):
                raise KustomizeError(f"{source}: unknown buildMetadata option {opt!r}")
            if opt != "managedByLabel":
                raise KustomizeError(f"{source}: buildMetadata `{opt}` is not supported by trainerctl")
    return data


def _type_word(t: Any) -> str:
    return {str: "string", dict: "mapping", list: "list", int: "number", float: "number",
            bool: "boolean", type(None): "null"}.get(t, getattr(t, "__name__", str(t)))


def check_fields(entry: Any, allowed: set[str], where: str) -> dict:
    """A mapping entry (a generator, a patch, ...) with only known fields."""
    if not isinstance(entry, dict):
        raise KustomizeError(f"{where}: expected a mapping, got {entry!r}")
    unknown = set(entry) - allowed
    if unknown:
        raise KustomizeError(f"{where}: unknown field(s) {', '.join(sorted(map(str, unknown)))}")
    return entry
