"""What the API server does to a custom resource before it validates it: prune, drop nulls, default.

Following k8s.io/apiextensions-apiserver/pkg/apiserver/schema (pruning, defaulting), in the
order its decoder runs them: fields the schema does not know are dropped (the resource's
`apiVersion`, `kind` and `metadata` are kept, and so is everything under
`x-kubernetes-preserve-unknown-fields`), then null values that the schema neither allows
(`nullable`) nor defaults, then `default`s fill what is missing. It happens on every read of a
stored object too, so after an upgrade the controller sees the object this way.

Only the structural part of a schema counts here (`properties`, `items`, `additionalProperties`
and the extensions); `anyOf`, `allOf`, `oneOf` and `not` only validate.
"""

from __future__ import annotations

import copy
from typing import Any

_META = ("apiVersion", "kind", "metadata")


def _node(schema: Any) -> dict | None:
    return schema if isinstance(schema, dict) else None


def _properties(schema: dict | None) -> dict:
    props = (schema or {}).get("properties")
    return props if isinstance(props, dict) else {}


def additional(schema: dict | None) -> tuple[bool, dict | None]:
    """(whether additionalProperties is given at all, its schema or None for a plain true/false)."""
    if schema is None or "additionalProperties" not in schema:
        return False, None
    extra = schema["additionalProperties"]
    return True, extra if isinstance(extra, dict) else None


def items(schema: dict | None) -> dict | None:
    return _node((schema or {}).get("items"))


def default_of(schema: dict | None) -> Any:
    """The default, or None (a null default is no default, as the API server reads it)."""
    return None if schema is None else schema.get("default")


def nullable(schema: dict | None) -> bool:
    return bool(schema and schema.get("nullable") is True)


def coerce(obj: dict, root: dict | None) -> dict:
    """A copy of the resource as the API server would validate and serve it under `root`."""
    out = copy.deepcopy(obj)
    prune(out, dict(root or {}, **{"x-kubernetes-embedded-resource": True}))
    prune_nulls(out, root)
    apply_defaults(out, root)
    return out


def prune(x: Any, schema: dict | None, keep: bool = False) -> None:
    """Drop what the schema does not know. Under x-kubernetes-preserve-unknown-fields (`keep`)
    unknown fields stay, known ones are still pruned, and list items keep the mode."""
    keep = keep or (schema is not None and schema.get("x-kubernetes-preserve-unknown-fields") is True)
    if keep and schema is None:
        return
    if isinstance(x, dict):
        if schema is None:
            x.clear()
            return
        embedded = schema.get("x-kubernetes-embedded-resource") is True
        props = _properties(schema)
        has_extra, extra = additional(schema)
        for key in list(x):
            if embedded and key in _META:
                continue
            if key in props:
                prune(x[key], _node(props[key]))
            elif has_extra:
                prune(x[key], extra)
            elif not keep:
                del x[key]
    elif isinstance(x, list):
        sub = items(schema) if schema is not None else None
        for item in x:
            prune(item, sub, keep)


def _field_schema(key: str, schema: dict | None) -> dict | None:
    if schema is None:
        return None
    props = _properties(schema)
    if key in props:
        return _node(props[key])
    return additional(schema)[1]


def prune_nulls(x: Any, schema: dict | None) -> None:
    """Drop null map values whose schema is neither nullable nor defaulted (they would decode to
    Go's zero value); a null with a default is left for defaulting."""
    if isinstance(x, dict):
        for key in list(x):
            sub = _field_schema(key, schema)
            if x[key] is None and sub is not None and not nullable(sub) and default_of(sub) is None:
                del x[key]
            else:
                prune_nulls(x[key], sub)
    elif isinstance(x, list):
        sub = items(schema) if schema is not None else None
        for item in x:
            prune_nulls(item, sub)


def _non_nullable_null(value: Any, schema: dict | None) -> bool:
    return value is None and schema is not None and not nullable(schema)


def apply_defaults(x: Any, schema: dict | None) -> None:
    if schema is None:
        return
    if isinstance(x, dict):
        props = _properties(schema)
        for key, prop in props.items():
            prop = _node(prop)
            if default_of(prop) is None:
                continue
            if key not in x or _non_nullable_null(x[key], prop):
                x[key] = copy.deepcopy(default_of(prop))
        has_extra, extra = additional(schema)
        for key in list(x):
            if key in props:
                apply_defaults(x[key], _node(props[key]))
            elif has_extra:
                if _non_nullable_null(x[key], extra) and default_of(extra) is not None:
                    x[key] = copy.deepcopy(default_of(extra))
                apply_defaults(x[key], extra)
    elif isinstance(x, list):
        sub = items(schema)
        for i, item in enumerate(x):
            if _non_nullable_null(item, sub) and default_of(sub) is not None:
                x[i] = copy.deepcopy(default_of(sub))
            apply_defaults(x[i], sub)
