"""Typed reading of kustomization fields and builtin plugin configs, as kustomize's Go structs
read them (YAML → JSON → encoding/json).

A field's type is data: STR, BOOL, INT, `Map(STR)`, `List(T)` or a `Struct` of named fields.
Keys match exactly or in any letter case (encoding/json's rule; on a clash the key sorting last
wins, as Go marshals the JSON object sorted). A value of the wrong type is refused naming the
file and the field path. A kustomization file is read strictly (unknown fields refused, no type
coercion); a plugin config file is read like sigs.k8s.io/yaml's Unmarshal: unknown fields are
ignored and scalars given for string fields become strings.
"""

from __future__ import annotations

import math

from trainerctl.kustomize.errors import KustomizeError
from trainerctl.kustomize.yamlemit import go_float

TYPE_CHECKING = False  # typing costs a tenth of a kustomize run's start-up
if TYPE_CHECKING:
    from typing import Any


class _Scalar:
    __slots__ = ("name",)

    def __init__(self, name: str):
        self.name = name

    def __repr__(self) -> str:
        return self.name


STR, BOOL, INT = _Scalar("string"), _Scalar("boolean"), _Scalar("integer")
ANY = _Scalar("any")


class Map:
    """A mapping of string keys to values of one type."""

    __slots__ = ("value",)

    def __init__(self, value: Any):
        self.value = value


class List:
    """A list of values of one type."""

    __slots__ = ("item",)

    def __init__(self, item: Any):
        self.item = item


class Struct:
    """A Go struct's fields (matched in any letter case, as Go's JSON decoding does)."""

    __slots__ = ("name", "fields", "_folded")

    def __init__(self, name: str, fields: dict[str, Any] | None = None):
        self.name = name
        self.fields = fields if fields is not None else {}
        self._folded = {k.lower(): k for k in self.fields}

    def lookup(self, key: str) -> str | None:
        if key in self.fields:
            return key
        return self._folded.get(key.lower())

    def extend(self, name: str, **more: Any) -> "Struct":
        """A struct embedding this one (Go's inline embedding)."""
        return Struct(name, {**self.fields, **more})


def describe(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"boolean {str(value).lower()}"
    if isinstance(value, (int, float)):
        return f"number {go_number(value)}"
    if isinstance(value, str):
        text = value if len(value) <= 40 else value[:37] + "..."
        return f"string {text!r}"
    if isinstance(value, dict):
        return "a mapping"
    return "a list"


def go_number(value: int | float) -> str:
    if isinstance(value, float) and value == int(value) and abs(value) < 1e21:
        return str(int(value))
    return repr(value)


def _or_zero(value: Any, spec: Any) -> Any:
    """A JSON null leaves a Go value at its zero."""
    if value is not None:
        return value
    if spec is STR:
        return ""
    if spec is BOOL:
        return False
    if spec is INT:
        return 0
    return [] if isinstance(spec, List) else {} if spec is not ANY else None


def _coerced(value: Any) -> str | None:
    """sigs.k8s.io/yaml turns a scalar given for a string field into its text."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isinf(value) or math.isnan(value):
            return None
        return go_float(value)
    return None


class Decoder:
    def __init__(self, source: str, *, strict: bool, what: str = "field"):
        self.source = source
        self.strict = strict  # a kustomization file: unknown fields refused, no coercion
        self.what = what

    def fail(self, path: str, expected: str, value: Any) -> KustomizeError:
        return KustomizeError(
            f"{self.source}: {self.what} `{path}` must be {expected}, got {describe(value)}"
        )

    def decode(self, value: Any, spec: Any, path: str) -> Any:
        if value is None:
            return None
        if spec is ANY:
            return value
        if spec is STR:
            if isinstance(value, str):
                return value
            if not self.strict:
                text = _coerced(value)
                if text is not None:
                    return text
            raise self.fail(path, "a string", value)
        if spec is BOOL:
            if isinstance(value, bool):
                return value
            raise self.fail(path, "true or false", value)
        if spec is INT:
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise self.fail(path, "an integer", value)
            if isinstance(value, float):
                if not value.is_integer():
                    raise self.fail(path, "an integer", value)
                value = int(value)
            if not -(2 ** 63) <= value < 2 ** 63:
                raise self.fail(path, "a 64-bit integer", value)
            return value
        if isinstance(spec, List):
            if not isinstance(value, list):
                raise self.fail(path, "a list", value)
            return [_or_zero(self.decode(v, spec.item, f"{path}[{i}]"), spec.item)
                    for i, v in enumerate(value)]
        if isinstance(spec, Map):
            if not isinstance(value, dict):
                raise self.fail(path, "a mapping", value)
            out = {}
            for k, v in value.items():
                decoded = self.decode(v, spec.value, f"{path}.{k}")
                out[k] = "" if decoded is None and spec.value is STR else decoded
            return out
        if isinstance(spec, Struct):
            return self.struct(value, spec, path)
        raise TypeError(spec)

    def struct(self, value: Any, spec: Struct, path: str) -> dict:
        if not isinstance(value, dict):
            raise self.fail(path or spec.name, "a mapping", value)
        out: dict = {}
        for key in sorted(value):
            name = spec.lookup(key)
            sub = f"{path}.{key}" if path else key
            if name is None:
                if self.strict:
                    raise KustomizeError(
                        f"{self.source}: invalid {spec.name}: unknown field `{sub}`"
                    )
                continue
            decoded = self.decode(value[key], spec.fields[name], f"{path}.{name}" if path else name)
            if decoded is None:
                out.pop(name, None)
            else:
                out[name] = decoded
        return out


# --- the types kustomization fields and plugin configs share (kustomize api/types)

GVK = {"group": STR, "version": STR, "kind": STR}
RESID = {**GVK, "name": STR, "namespace": STR}
OBJECT_META = Struct("ObjectMeta", {"name": STR, "namespace": STR, "labels": Map(STR),
                                    "annotations": Map(STR)})
TYPE_META = {"apiVersion": STR, "kind": STR}
FIELD_SPEC = Struct("FieldSpec", {**GVK, "path": STR, "create": BOOL})
SELECTOR = Struct("Selector", {**RESID, "annotationSelector": STR, "labelSelector": STR})
GENERATOR_OPTIONS = Struct("GeneratorOptions", {
    "labels": Map(STR), "annotations": Map(STR), "disableNameSuffixHash": BOOL, "immutable": BOOL,
})
GENERATOR_ARGS = Struct("GeneratorArgs", {
    "namespace": STR, "name": STR, "behavior": STR,
    "literals": List(STR), "files": List(STR), "envs": List(STR), "env": STR,
    "options": GENERATOR_OPTIONS,
})
CONFIGMAP_ARGS = GENERATOR_ARGS.extend("ConfigMapArgs")
SECRET_ARGS = GENERATOR_ARGS.extend("SecretArgs", type=STR)
IMAGE = Struct("Image", {"name": STR, "newName": STR, "tagSuffix": STR, "newTag": STR,
                         "digest": STR})
REPLICA = Struct("Replica", {"name": STR, "count": INT})
LABEL = Struct("Label", {"pairs": Map(STR), "includeSelectors": BOOL, "includeTemplates": BOOL,
                         "fields": List(FIELD_SPEC)})
PATCH_ARGS = Struct("PatchArgs", {"allowNameChange": BOOL, "allowKindChange": BOOL})
PATCH = Struct("Patch", {"path": STR, "patch": STR, "target": SELECTOR, "options": PATCH_ARGS})
FIELD_OPTIONS = Struct("FieldOptions", {"delimiter": STR, "index": INT, "encoding": STR,
                                        "create": BOOL})
SOURCE_SELECTOR = Struct("SourceSelector", {**RESID, "fieldPath": STR, "options": FIELD_OPTIONS})
TARGET_SELECTOR = Struct("TargetSelector", {"select": SELECTOR, "reject": List(SELECTOR),
                                            "fieldPaths": List(STR), "options": FIELD_OPTIONS})
REPLACEMENT = Struct("Replacement", {"source": SOURCE_SELECTOR, "targets": List(TARGET_SELECTOR),
                                     "sourceValue": STR})
REPLACEMENT_FIELD = REPLACEMENT.extend("ReplacementField", path=STR)
VAR = Struct("Var", {
    "name": STR,
    "objref": Struct("Target", {"apiVersion": STR, **GVK, "name": STR, "namespace": STR}),
    "fieldref": Struct("FieldSelector", {"fieldPath": STR}),
})
SORT_OPTIONS = Struct("SortOptions", {
    "order": STR,
    "legacySortOptions": Struct("LegacySortOptions", {"orderFirst": List(STR),
                                                      "orderLast": List(STR)}),
})

KUSTOMIZATION = Struct("Kustomization", {
    **TYPE_META,
    "metadata": OBJECT_META,
    "openapi": Map(STR),
    "namePrefix": STR, "nameSuffix": STR, "namespace": STR,
    "commonLabels": Map(STR), "labels": List(LABEL), "commonAnnotations": Map(STR),
    "patchesStrategicMerge": List(STR), "patchesJson6902": List(PATCH), "patches": List(PATCH),
    "images": List(IMAGE), "imageTags": List(IMAGE),
    "replacements": List(REPLACEMENT_FIELD), "replicas": List(REPLICA), "vars": List(VAR),
    "sortOptions": SORT_OPTIONS,
    "resources": List(STR), "components": List(STR), "crds": List(STR), "bases": List(STR),
    "configMapGenerator": List(CONFIGMAP_ARGS), "secretGenerator": List(SECRET_ARGS),
    "helmGlobals": ANY, "helmCharts": ANY, "helmChartInflationGenerator": ANY,
    "generatorOptions": GENERATOR_OPTIONS,
    "configurations": List(STR), "generators": List(STR), "transformers": List(STR),
    "validators": List(STR),
    "buildMetadata": List(STR),
})
