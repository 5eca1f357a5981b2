"""A structural OpenAPI v3 check, as the API server applies a CRD's schema, stricter on one point:
a field the schema does not declare is an error (the server would prune it silently, or reject
it under strict field validation, which hides a runtime that cannot work with a ref)."""

from __future__ import annotations

from typing import Any

_TYPES = {
    "object": dict, "array": list, "string": str, "boolean": bool,
    "integer": int, "number": (int, float),
}


def schema_errors(value: Any, schema: dict, path: str = "") -> list[str]:
    errors: list[str] = []
    where = path or "<root>"
    if schema.get("x-kubernetes-int-or-string"):
        if not isinstance(value, (int, str)) or isinstance(value, bool):
            errors.append(f"{where}: expected an integer or string")
        return errors
    if "anyOf" in schema:
        if all(schema_errors(value, _merge(schema, alt), path) for alt in schema["anyOf"]):
            errors.append(f"{where}: matches none of anyOf")
        return errors
    expected = schema.get("type")
    if expected:
        py = _TYPES[expected]
        if not isinstance(value, py) or (expected in ("integer", "number") and isinstance(value, bool)):
            return [f"{where}: expected {expected}, got {type(value).__name__}"]
    if "enum" in schema and value not in schema["enum"]:
        errors.append(f"{where}: {value!r} not one of {schema['enum']}")
    if isinstance(value, dict):
        props = schema.get("properties")
        for key in schema.get("required", ()):
            if key not in value:
                errors.append(f"{where}: missing required field {key!r}")
        for key, sub in value.items():
            child = f"{path}.{key}" if path else key
            if props is not None and key in props:
                errors.extend(schema_errors(sub, props[key], child))
            elif isinstance(schema.get("additionalProperties"), dict):
                errors.extend(schema_errors(sub, schema["additionalProperties"], child))
            elif props is not None and not schema.get("x-kubernetes-preserve-unknown-fields"):
                errors.append(f"{child}: unknown field")
    if isinstance(value, list) and "items" in schema:
        for i, item in enumerate(value):
            errors.extend(schema_errors(item, schema["items"], f"{path}[{i}]"))
    return errors


def _merge(schema: dict, alt: dict) -> dict:
    merged = {k: v for k, v in schema.items() if k != "anyOf"}
    merged.update(alt)
    return merged


def crd_schema(objects: list[dict], kind: str, version: str) -> dict:
    """openAPIV3Schema of kind's served version from the CRDs among objects."""
    for obj in objects:
        if obj.get("kind") == "CustomResourceDefinition" and obj["spec"]["names"]["kind"] == kind:
            for v in obj["spec"]["versions"]:
                if v["name"] == version and v.get("served", True):
                    return v["schema"]["openAPIV3Schema"]
    raise LookupError(f"no served CRD version {version} for {kind}")


def validate_against_crd(obj: dict, objects: list[dict]) -> list[str]:
    """Errors of `obj` against the CRD for its kind among `objects` (LookupError when none)."""
    version = obj["apiVersion"].rpartition("/")[2]
    schema = crd_schema(objects, obj["kind"], version)
    # metadata is the API server's, not the CRD's, to check
    body = {k: v for k, v in obj.items() if k != "metadata"}
    props = {k: v for k, v in schema.get("properties", {}).items() if k != "metadata"}
    return schema_errors(body, {**schema, "properties": props})
