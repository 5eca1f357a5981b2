"""A small JSON Schema (2020-12) checker for the keywords trainerctl's schemas use.

A keyword it does not implement is an error, never silently ignored, so a schema cannot claim
more than the tests check.
"""

from __future__ import annotations

from typing import Any

_TYPES = {"object": dict, "array": list, "string": str, "boolean": bool, "integer": int,
          "number": (int, float), "null": type(None)}
_ANNOTATIONS = {"$schema", "$id", "title", "description", "$comment", "$defs", "examples", "default"}
_KEYWORDS = {"$ref", "type", "enum", "properties", "required", "additionalProperties", "items", "minItems",
             "maxItems", "minimum"}


def errors(value: Any, schema: dict | bool, root: dict | None = None, path: str = "$") -> list[str]:
    if schema is True:
        return []
    if schema is False:
        return [f"{path}: not allowed"]
    root = root if root is not None else schema
    unknown = set(schema) - _ANNOTATIONS - _KEYWORDS
    if unknown:
        raise ValueError(f"schema at {path} uses keywords this checker does not implement: {sorted(unknown)}")
    if "$ref" in schema:
        target: Any = root
        for part in schema["$ref"].removeprefix("#/").split("/"):
            target = target[part]
        return errors(value, target, root, path)
    types = schema.get("type")
    if types is not None:
        names = types if isinstance(types, list) else [types]
        if not any(isinstance(value, _TYPES[t]) and not (t in ("integer", "number") and isinstance(value, bool))
                   for t in names):
            return [f"{path}: expected {' or '.join(names)}, got {type(value).__name__}"]
    out: list[str] = []
    if "enum" in schema and value not in schema["enum"]:
        out.append(f"{path}: {value!r} is not one of {schema['enum']}")
    if "minimum" in schema and isinstance(value, (int, float)) and value < schema["minimum"]:
        out.append(f"{path}: {value} < {schema['minimum']}")
    if isinstance(value, dict):
        props = schema.get("properties", {})
        out += [f"{path}: missing {key!r}" for key in schema.get("required", ()) if key not in value]
        for key, sub in value.items():
            if key in props:
                out += errors(sub, props[key], root, f"{path}.{key}")
            elif "additionalProperties" in schema:
                out += errors(sub, schema["additionalProperties"], root, f"{path}.{key}")
    if isinstance(value, list):
        if len(value) < schema.get("minItems", 0) or len(value) > schema.get("maxItems", len(value)):
            out.append(f"{path}: {len(value)} items, expected {schema.get('minItems', 0)}..{schema.get('maxItems', '')}")
        for i, item in enumerate(value):
            if "items" in schema:
                out += errors(item, schema["items"], root, f"{path}[{i}]")
    return out
