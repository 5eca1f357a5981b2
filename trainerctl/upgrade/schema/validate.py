"""A custom resource checked against a CRD's structural schema, the way the API server checks it.

The order and the rules are the API server's (k8s.io/apiextensions-apiserver: pruning,
defaulting, then kube-openapi's validate package, then x-kubernetes-list-type and embedded
resources): `type` (with int-or-string and nullable), `format` (int32/int64/float ranges and
the string formats), `enum`, `required`, `pattern` (Go's RE2), `minimum`/`maximum` (exclusive
too), `multipleOf`, `minLength`/`maxLength` (in characters), `minItems`/`maxItems`,
`uniqueItems`, `minProperties`/`maxProperties`, `additionalProperties`, `anyOf`/`allOf`/`oneOf`/
`not`, and unique keys of list-type set and map lists. kube-openapi's quirks are kept where
they decide a verdict (an integer field takes `1.0`; a bound that is not an integer refuses every
value of an integer field; an enum of strings takes the number of a character's code point).

What is not evaluated here is returned as `Unchecked`, never as passed: CEL rules
(`x-kubernetes-validations`), a pattern or a format this module cannot reproduce exactly, and the
metadata of an embedded resource.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field, replace
from typing import Any

from trainerctl.upgrade.schema import formats
from trainerctl.upgrade.schema.coerce import additional, coerce, items
from trainerctl.upgrade.schema.goregex import Untranslatable, compile_go
from trainerctl.upgrade.schema.gonum import (
    as_float, deep_equal, enum_matches, float_to_int64, go_value, is_json_integer, kind, parses_as,
    text_of_number,
)

_PLAIN = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")
_DNS1035 = re.compile(r"[a-z]([-a-z0-9]*[a-z0-9])?")
_SCHEMA_TYPES = {"bool": "boolean", "string": "string", "int": "integer", "float": "number", "slice": "array",
                 "map": "object"}


@dataclass(frozen=True)
class Problem:
    """One reason the API server rejects the object: where, the value there, and why."""

    path: str
    value: Any
    reason: str
    missing: bool = False  # a required field that is absent (value is None)
    schema_path: str = ""  # the same place as the schema names it: `[*]` for any item, `.*` for any key


@dataclass(frozen=True)
class Unchecked:
    """A rule on a field the object sets that is not evaluated here. `path` is the schema's path
    (`[*]` for any list item, `.*` for any map key), so the same rule reads the same everywhere."""

    path: str
    what: str  # "rule" (CEL), "pattern", "format", "embedded metadata"
    detail: str
    message: str | None = None
    transition: bool = False  # a CEL rule comparing with oldSelf: run on updates only


@dataclass
class Verdict:
    problems: list[Problem] = field(default_factory=list)
    unchecked: list[Unchecked] = field(default_factory=list)

    @property
    def valid(self) -> bool:
        return not self.problems


def validate(obj: dict, schema: dict | None) -> Verdict:
    """The API server's verdict on `obj` created under `schema` (a version's openAPIV3Schema),
    after it prunes and defaults the object as it does on every create and read."""
    run = _Run()
    coerced = coerce(obj, schema)
    if isinstance(schema, dict):
        run.problems = run.node(schema, coerced, "", "", structural=True)
    return Verdict(run.problems, list(run.unchecked))


def child(path: str, key: str) -> str:
    if _PLAIN.fullmatch(key):
        return f"{path}.{key}" if path else key
    return f"{path}[{json.dumps(key, ensure_ascii=False)}]"


def _schema_child(spath: str, key: str) -> str:
    return f"{spath}.{key}" if spath else key


def _types(schema: dict) -> list[str]:
    if schema.get("x-kubernetes-int-or-string") is True:
        return ["integer", "string"]
    value = schema.get("type")
    if isinstance(value, str) and value:
        return [value]
    return [t for t in value if isinstance(t, str)] if isinstance(value, list) else []


def _number(schema: dict, key: str) -> float | None:
    value = schema.get(key)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return as_float(value)


def _count(schema: dict, key: str) -> int | None:
    value = schema.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


class _Run:
    def __init__(self) -> None:
        self.problems: list[Problem] = []
        self.unchecked: dict[Unchecked, None] = {}

    def skip(self, item: Unchecked) -> None:
        self.unchecked.setdefault(item, None)

    # -- one schema node (kube-openapi's SchemaValidator.Validate) -------------------------------
    def node(self, s: dict, data: Any, path: str, spath: str, *, structural: bool) -> list[Problem]:
        out: list[Problem] = []
        types = _types(s)
        fmt = formats.kept_format(types[0] if len(types) == 1 else "", len(types) > 1,
                                  s.get("format") if isinstance(s.get("format"), str) else "")
        if data is None:
            if types and "null" not in types and s.get("nullable") is not True:
                out.append(Problem(path, None, f"must be of type {','.join(types)}"))
            out += self.enum(s, data, path)
            return [p if p.schema_path else replace(p, schema_path=spath or "<root>") for p in out]
        data = go_value(data)
        k = kind(data)
        if types or fmt:
            out += self.type_of(types, fmt, data, k, path)
        out += self.combinators(s, data, path, spath)
        if k == "string":
            out += self.string(s, data, path, spath)
            out += self.format(fmt, data, path, spath)
        if k in ("int", "float"):
            out += self.number(s, types, fmt, data, path)
        if k == "slice":
            out += self.slice(s, data, path, spath, structural)
        out += self.enum(s, data, path)
        if k == "map":
            out += self.object(s, data, path, spath, structural)
        if structural:
            self.rules(s, spath)
        return [p if p.schema_path else replace(p, schema_path=spath or "<root>") for p in out]

    def type_of(self, types: list[str], fmt: str, data: Any, k: str, path: str) -> list[Problem]:
        have = _SCHEMA_TYPES.get(k, "")
        have_format = {"int": "int64", "float": "float64"}.get(k, "")
        float_int = have == "number" and is_json_integer(as_float(data)) and "integer" in types
        int_float = have == "integer" and "number" in types
        if k not in ("string", "slice") and fmt and not (have in types or have_format == fmt or float_int or int_float):
            return [Problem(path, data, f"must be of type {fmt}")]
        if not ("number" in types or "integer" in types) and fmt and k in ("string", "slice"):
            return []
        if not (have in types or float_int or int_float):
            return [Problem(path, data, f"must be of type {','.join(types)}: {json.dumps(have)}")]
        return []

    def combinators(self, s: dict, data: Any, path: str, spath: str) -> list[Problem]:
        out: list[Problem] = []
        subs = {key: [x for x in s.get(key) or [] if isinstance(x, dict)] for key in ("anyOf", "oneOf", "allOf")}
        if subs["anyOf"]:
            results = [self.node(x, data, path, spath, structural=False) for x in subs["anyOf"]]
            if all(results):
                out.append(Problem(path, data, "must validate at least one schema (anyOf)"))
                out += min(results, key=len)
        if subs["oneOf"]:
            results = [self.node(x, data, path, spath, structural=False) for x in subs["oneOf"]]
            valid = sum(1 for r in results if not r)
            if valid != 1:
                found = "found none valid" if not valid else f"found {valid} valid alternatives"
                out.append(Problem(path, data, f"must validate one and only one schema (oneOf): {found}"))
        if subs["allOf"]:
            for x in subs["allOf"]:
                out += self.node(x, data, path, spath, structural=False)
        if isinstance(s.get("not"), dict) and not self.node(s["not"], data, path, spath, structural=False):
            out.append(Problem(path, data, "must not validate the schema (not)"))
        return out

    def string(self, s: dict, data: str, path: str, spath: str) -> list[Problem]:
        length = len(data)
        high, low = _count(s, "maxLength"), _count(s, "minLength")
        if high is not None and length > high:
            return [Problem(path, data, f"may not be more than {high} characters long")]
        if low is not None and length < low:
            return [Problem(path, data, f"should be at least {low} characters long")]
        pattern = s.get("pattern")
        if isinstance(pattern, str) and pattern:
            try:
                matched = compile_go(pattern).search(data) is not None
            except Untranslatable:
                self.skip(Unchecked(spath, "pattern", pattern))
                return []
            if not matched:
                return [Problem(path, data, f"should match '{pattern}'")]
        return []

    def format(self, fmt: str, data: str, path: str, spath: str) -> list[Problem]:
        name = formats.normalise(fmt)
        if not fmt or name not in formats.SUPPORTED:
            return []
        if name in formats.UNCHECKED:
            self.skip(Unchecked(spath, "format", fmt))
            return []
        return [] if formats.CHECKS[name](data) else [Problem(path, data, f"must be of type {fmt}")]

    def number(self, s: dict, types: list[str], fmt: str, data: Any, path: str) -> list[Problem]:
        out: list[Problem] = []
        type_name, number_format = "", ""
        if len(types) == 1 and types[0] == "integer":
            type_name, number_format = "integer", fmt if fmt in ("int32", "int64") else ""
        elif len(types) == 1 and types[0] == "number":
            type_name, number_format = "number", fmt if fmt in ("float", "double") else ""
        go_type = _range_type(type_name, number_format)
        if go_type and not parses_as(text_of_number(data), go_type):
            out.append(Problem(path, data, f"must be of {_range_name(type_name, number_format)}"))
        is_int = kind(data) == "int"
        factor = _number(s, "multipleOf")
        if factor is not None:
            if go_type and not parses_as(text_of_number(factor), go_type):
                out.append(Problem(path, data, f"the schema's multipleOf {text_of_number(factor)} is not of "
                                               f"{_range_name(type_name, number_format)}: no value passes"))
                out += _multiple_of_float(as_float(data), factor, path, data)
            elif is_int:
                whole = float_to_int64(factor)
                if whole <= 0:
                    out.append(Problem(path, data, f"multipleOf {whole} must be positive"))
                elif data % whole:
                    out.append(Problem(path, data, f"should be a multiple of {whole}"))
            else:
                out += _multiple_of_float(as_float(data), factor, path, data)
        for key, exclusive_key, above in (("minimum", "exclusiveMinimum", False), ("maximum", "exclusiveMaximum", True)):
            bound = _number(s, key)
            if bound is None:
                continue
            exclusive = s.get(exclusive_key) is True
            if go_type and not parses_as(text_of_number(bound), go_type):
                out.append(Problem(path, data, f"the schema's {key} {text_of_number(bound)} is not of "
                                               f"{_range_name(type_name, number_format)}: no value passes"))
                value, limit = as_float(data), bound
            elif is_int:
                value, limit = data, float_to_int64(bound)
            else:
                value, limit = as_float(data), bound
            if above and (value > limit or (exclusive and value >= limit)):
                out.append(Problem(path, data, f"should be less than {'' if exclusive else 'or equal to '}"
                                               f"{text_of_number(limit)}"))
            if not above and (value < limit or (exclusive and value <= limit)):
                out.append(Problem(path, data, f"should be greater than {'' if exclusive else 'or equal to '}"
                                               f"{text_of_number(limit)}"))
        return out

    def slice(self, s: dict, data: list, path: str, spath: str, structural: bool) -> list[Problem]:
        out: list[Problem] = []
        sub = items(s)
        if sub is not None:
            for i, item in enumerate(data):
                out += self.node(sub, item, f"{path}[{i}]", f"{spath}[*]", structural=structural)
        low, high = _count(s, "minItems"), _count(s, "maxItems")
        if low is not None and len(data) < low:
            out.append(Problem(path, data, f"should have at least {low} items"))
        if high is not None and len(data) > high:
            out.append(Problem(path, data, f"Too many: {len(data)}: must have at most {high} items"))
        if s.get("uniqueItems") is True and any(deep_equal(a, b) for i, a in enumerate(data) for b in data[:i]):
            out.append(Problem(path, data, "shouldn't contain duplicates"))
        if structural:
            out += _list_type(s, data, path)
        return out

    def enum(self, s: dict, data: Any, path: str) -> list[Problem]:
        allowed = s.get("enum")
        if not isinstance(allowed, list) or not allowed:
            return []
        if any(enum_matches(data, value) for value in allowed):
            return []
        shown = ", ".join(json.dumps(v) if not isinstance(v, str) else json.dumps(v, ensure_ascii=False)
                          for v in allowed)
        return [Problem(path, data, f"Unsupported value: supported values: {shown}")]

    def object(self, s: dict, data: dict, path: str, spath: str, structural: bool) -> list[Problem]:
        out: list[Problem] = []
        low, high = _count(s, "minProperties"), _count(s, "maxProperties")
        if low is not None and len(data) < low:
            out.append(Problem(path, data, f"should have at least {low} properties"))
        if high is not None and len(data) > high:
            out.append(Problem(path, data, f"Too many: {len(data)}: must have at most {high} properties"))
        props = s.get("properties") if isinstance(s.get("properties"), dict) else {}
        has_extra, extra = additional(s)
        for key in sorted(data):
            if key in props:
                if isinstance(props[key], dict):
                    out += self.node(props[key], data[key], child(path, key), _schema_child(spath, key),
                                     structural=structural)
            elif has_extra and s.get("additionalProperties") is False:
                out.append(Problem(child(path, key), data[key], "is a forbidden property",
                                   schema_path=_schema_child(spath, key)))
            elif extra is not None:
                out += self.node(extra, data[key], child(path, key), _schema_child(spath, "*"), structural=structural)
        for key in s.get("required") or []:
            if isinstance(key, str) and key not in data:
                out.append(Problem(child(path, key), None, "Required value", missing=True,
                                   schema_path=_schema_child(spath, key)))
        if structural and s.get("x-kubernetes-embedded-resource") is True and path:
            out += self.embedded(data, path, spath)
        return out

    def embedded(self, data: dict, path: str, spath: str) -> list[Problem]:
        """An embedded object's apiVersion and kind (objectmeta.Validate); its metadata is listed."""
        out: list[Problem] = []
        for key in ("apiVersion", "kind"):
            value = data.get(key)
            where = child(path, key)
            if key not in data:
                out.append(Problem(where, None, "Required value", missing=True, schema_path=_schema_child(spath, key)))
            elif not isinstance(value, str):
                out.append(Problem(where, value, "must be a string"))
            elif not value:
                out.append(Problem(where, value, "must not be empty"))
            elif key == "apiVersion" and value.count("/") > 1:
                out.append(Problem(where, value, f"unexpected GroupVersion string: {value}"))
            elif key == "kind" and not (len(value) <= 63 and _DNS1035.fullmatch(_ascii_lower(value))):
                out.append(Problem(where, value, "may have mixed case, but should otherwise match a DNS-1035 label"))
        if data.get("metadata"):
            self.skip(Unchecked(_schema_child(spath, "metadata"), "embedded metadata",
                                "an embedded object's metadata (name, labels, annotations)"))
        return out

    def rules(self, s: dict, spath: str) -> None:
        for rule in s.get("x-kubernetes-validations") or []:
            if isinstance(rule, dict) and isinstance(rule.get("rule"), str):
                text = rule["rule"]
                self.skip(Unchecked(spath or "<root>", "rule", text,
                                    rule.get("message") if isinstance(rule.get("message"), str) else None,
                                    transition="oldSelf" in text))


def _ascii_lower(text: str) -> str:
    return "".join(c.lower() if c.isascii() else c for c in text)


def _range_type(type_name: str, number_format: str) -> str:
    """The Go type kube-openapi parses a number as before the checks (IsValueValidAgainstRange)."""
    if type_name == "integer":
        return "int32" if number_format == "int32" else "int64"
    if number_format == "float":
        return "float32"
    return ""


def _range_name(type_name: str, number_format: str) -> str:
    return f"type {type_name} with format {number_format}" if number_format else f"type {type_name} (default format)"


def _multiple_of_float(value: float, factor: float, path: str, data: Any) -> list[Problem]:
    if factor <= 0:
        return [Problem(path, data, f"multipleOf {text_of_number(factor)} must be positive")]
    quotient = (1 / factor * value) if factor < 1 else value / factor
    if not is_json_integer(quotient):
        return [Problem(path, data, f"should be a multiple of {text_of_number(factor)}")]
    return []


def _list_type(s: dict, data: list, path: str) -> list[Problem]:
    """x-kubernetes-list-type set: no two equal items; map: no two items with the same keys."""
    list_type = s.get("x-kubernetes-list-type")
    if list_type == "set":
        return [Problem(f"{path}[{i}]", data[i], "Duplicate value") for i in _repeats(data)]
    if list_type != "map":
        return []
    for i, item in enumerate(data):
        if item is not None and not isinstance(item, dict):
            return [Problem(f"{path}[{i}]", item, "must be an object for an array of list-type map")]
    keys = [k for k in s.get("x-kubernetes-list-map-keys") or [] if isinstance(k, str)]
    if len(keys) == 1:
        values = [("unset",) if item is None or keys[0] not in item else item[keys[0]] for item in data]
        return [Problem(f"{path}[{i}]", {} if values[i] == ("unset",) else {keys[0]: values[i]}, "Duplicate value")
                for i in _repeats(values)]
    composite = [{k: item[k] for k in keys if k in item} if isinstance(item, dict) else {} for item in data]
    return [Problem(f"{path}[{i}]", composite[i], "Duplicate value") for i in _repeats(composite)]


def _repeats(values: list) -> list[int]:
    """The index of each value's second occurrence (listtype.validateListSet): scalars compared
    by Go type and value, objects and lists by their JSON text."""
    seen: dict[Any, int] = {}
    out: list[int] = []
    for i, value in enumerate(values):
        k = kind(value) if value != ("unset",) else "unset"
        key = ("json", _json_key(value)) if k in ("map", "slice") else (k, _scalar_key(value))
        times = seen.get(key, 0)
        seen[key] = times + 1
        if times == 1:
            out.append(i)
    return out


def _json_key(value: Any) -> str:
    """Go's json.Marshal text for comparing: sorted keys, and 1.0 written as 1 (as Go writes it)."""
    k = kind(value)
    if k == "map":
        return "{" + ",".join(f"{json.dumps(key)}:{_json_key(value[key])}" for key in sorted(value)) + "}"
    if k == "slice":
        return "[" + ",".join(_json_key(item) for item in value) + "]"
    if k == "float":
        return text_of_number(value)
    return json.dumps(value)


def _scalar_key(value: Any) -> Any:
    return as_float(value) if kind(value) == "float" else value
