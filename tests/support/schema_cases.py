"""Hypothesis strategies for the structural-schema property test: a small CRD schema that the API
server accepts, and values near it (valid ones, and ones wrong in each way the API server checks).

Schemas keep the API server's rules for CRDs (structural: every node typed, anyOf/allOf/oneOf/not
carry value checks only, list-type map keys required scalars); a batch the server still refuses
is split and its refused schemas are skipped by the test, so the generator never decides a
verdict itself.
"""

from __future__ import annotations

import string

from hypothesis import strategies as st

from trainerctl.upgrade.schema.goregex import translate

NAMES = st.sampled_from(["a", "b", "c", "name", "x-y", "k_1", "key.dot"])
TEXT = st.text(alphabet="abcxyzAB09-_. \n\té/:", max_size=8)
# Integers around the edges the formats and bounds care about, and beyond int64 (a float64 in Go).
EDGE_INTS = st.sampled_from([0, 1, -1, 2, 3, 5, 10, 97, 2**31 - 1, 2**31, -(2**31), -(2**31) - 1, 2**53, 2**53 + 1,
                             2**63 - 1, -(2**63), 2**63, 10**20])
INTS = st.one_of(st.integers(-20, 20), EDGE_INTS)
FLOATS = st.one_of(st.sampled_from([0.0, 1.0, -1.0, 0.5, 2.5, 3.0, 1e39, 3.4028235e38, 1e21, 2.0**53, 1e-7, -0.0]),
                   st.floats(-100, 100, allow_nan=False, allow_infinity=False))
SCALARS = st.one_of(st.none(), st.booleans(), INTS, FLOATS, TEXT)
# Go regular expressions from a small grammar (every one valid in Go and in the translator).
_ATOMS = st.sampled_from(["a", "b", "x", "0", "[a-c]", "[^x]", r"\d", r"\w", r"\s", ".", r"\.", "[[:alpha:]]",
                          r"\pL", "é", r"\x41", "-", "[-a]", "[a-]"])
_QUANTS = st.sampled_from(["", "", "*", "+", "?", "{2}", "{1,3}", "{2,}", "*?", "+?", "{,2}"])


@st.composite
def go_patterns(draw) -> str:
    def piece() -> str:
        atom = draw(_ATOMS)
        if draw(st.booleans()) and draw(st.booleans()):
            atom = f"({atom}|{draw(_ATOMS)})"
        return atom + draw(_QUANTS)

    body = "".join(piece() for _ in range(draw(st.integers(1, 3))))
    if draw(st.booleans()):
        body = "^" + body
    if draw(st.booleans()):
        body = body + "$"
    if draw(st.integers(0, 5)) == 0:
        body = draw(st.sampled_from(["(?i)", "(?s)", "(?m)", r"\b", "(?U)"])) + body
    return body


STRING_FORMATS = st.sampled_from(["date-time", "date", "uuid", "uuid4", "byte", "k8s-short-name", "k8s-long-name",
                                  "duration", "mac", "hexcolor", "rgbcolor", "ssn", "isbn10", "isbn13",
                                  "creditcard", "bsonobjectid", "password", "unknown-format", "Date-Time"])
FORMAT_VALUES = st.sampled_from([
    "2020-01-01T10:00:00Z", "2020-02-29t23:59:59.5+01:00", "2021-02-29T00:00:00Z", "2020-01-01T24:00:00Z",
    "2020-01-01", "0000-12-31", "2020-1-01", "550e8400-e29b-41d4-a716-446655440000",
    "550E8400E29B41D4A716446655440000", "550e8400-e29b-31d4-a716-446655440000", "aGVsbG8=", "aGVsbG8",
    "my-name", "My-name", "a.b-c", "-a", "1h30m", "1.5h", "3 days", "h", "90000000000000000000s",
    "01:23:45:67:89:ab", "01-23-45-67-89-ab", "0123.4567.89ab", "01:23-45:67:89:ab", "#fff", "fff", "#ffff",
    "rgb(1, 2,255)", "rgb(256,0,0)", "123-45-6789", "123456789", "0306406152", "9780306406157", "9780306406158",
    "4111111111111111", "4111 1111 1111 1111", "507f1f77bcf86cd799439011", "507f1f77bcf86cd79943901", "",
])


def pattern_values(pattern: str):
    """Strings that often match the pattern (under the translation) and strings that do not."""
    return st.one_of(st.from_regex(translate(pattern)).filter(lambda s: len(s) < 40), TEXT)


@st.composite
def int_or_bound(draw):
    return draw(st.one_of(st.integers(-5, 10), st.sampled_from([2.5, 0.5, 1e30, 2**31, -(2**31) - 1, 3.0])))


@st.composite
def leaf(draw) -> dict:
    kind = draw(st.sampled_from(["string", "string", "integer", "integer", "number", "boolean", "int-or-string"]))
    s: dict = {}
    if kind == "int-or-string":
        s["x-kubernetes-int-or-string"] = True
        if draw(st.booleans()):
            s["anyOf"] = [{"type": "integer"}, {"type": "string"}]
        if draw(st.integers(0, 3)) == 0:
            s["enum"] = draw(st.lists(st.one_of(st.integers(-2, 100), TEXT), min_size=1, max_size=3))
    else:
        s["type"] = kind
    if kind == "string":
        if draw(st.booleans()):
            s["maxLength"] = draw(st.integers(0, 4))
        if draw(st.booleans()):
            s["minLength"] = draw(st.integers(0, 3))
        if draw(st.integers(0, 2)) == 0:
            s["pattern"] = draw(go_patterns())
        if draw(st.integers(0, 2)) == 0:
            s["format"] = draw(STRING_FORMATS)
        if draw(st.integers(0, 3)) == 0:
            s["enum"] = draw(st.lists(TEXT, min_size=1, max_size=3))
    if kind in ("integer", "number"):
        if draw(st.booleans()):
            s["format"] = draw(st.sampled_from(["int32", "int64", "float", "double", "byte"]))
        for key, exclusive in (("minimum", "exclusiveMinimum"), ("maximum", "exclusiveMaximum")):
            if draw(st.integers(0, 2)) == 0:
                s[key] = draw(int_or_bound())
                if draw(st.booleans()):
                    s[exclusive] = True
        if draw(st.integers(0, 4)) == 0:
            s["multipleOf"] = draw(st.sampled_from([2, 3, 0.5, 2.5, 0.1]))
        if draw(st.integers(0, 4)) == 0:
            s["enum"] = draw(st.lists(st.one_of(st.integers(-3, 3), st.sampled_from([1.5, 2.0])), min_size=1,
                                      max_size=3))
    if kind == "boolean" and draw(st.integers(0, 3)) == 0:
        s["enum"] = [draw(st.booleans())]
    if kind != "int-or-string" and draw(st.integers(0, 4)) == 0:
        s[draw(st.sampled_from(["anyOf", "allOf", "oneOf"]))] = draw(st.lists(value_checks(kind), min_size=1, max_size=3))
    if kind != "int-or-string" and draw(st.integers(0, 6)) == 0:
        s["not"] = draw(value_checks(kind))
    if draw(st.integers(0, 4)) == 0:
        s["nullable"] = True
    return s


@st.composite
def value_checks(draw, kind: str) -> dict:
    """A schema of value checks only, as anyOf/allOf/oneOf/not may hold in a structural schema."""
    if kind == "string":
        return draw(st.sampled_from([{"maxLength": 2}, {"minLength": 1}, {"pattern": "^a"}, {"enum": ["a", "b"]},
                                     {"format": "uuid"}, {"pattern": "x$"}]))
    if kind in ("integer", "number"):
        return draw(st.sampled_from([{"minimum": 0}, {"maximum": 3}, {"multipleOf": 2}, {"enum": [1, 2]},
                                     {"minimum": 1, "exclusiveMinimum": True}]))
    return {"enum": [True]}


def node(depth: int):
    if depth <= 0:
        return leaf()
    return st.one_of(leaf(), leaf(), obj(depth), array(depth), mapping(depth), preserved(depth), embedded(depth))


@st.composite
def embedded(draw, depth: int) -> dict:
    """An embedded resource: its apiVersion and kind are checked, its metadata kept (a valid one)."""
    s: dict = {"type": "object", "x-kubernetes-embedded-resource": True}
    if draw(st.booleans()):
        s["x-kubernetes-preserve-unknown-fields"] = True
    else:
        s["properties"] = draw(st.dictionaries(st.sampled_from(["spec", "data"]), node(depth - 1), min_size=1,
                                               max_size=2))
    return s


EMBEDDED_API_VERSIONS = st.sampled_from(["v1", "apps/v1", "a/b/c", "", "/", 7])
EMBEDDED_KINDS = st.sampled_from(["Pod", "ConfigMap", "my-kind", "Bad_Kind", "", "9lives", "x" * 64, True])


@st.composite
def obj(draw, depth: int) -> dict:
    props = draw(st.dictionaries(NAMES, node(depth - 1), min_size=1, max_size=3))
    s: dict = {"type": "object", "properties": props}
    required = [k for k in props if draw(st.integers(0, 2)) == 0]
    if required:
        s["required"] = required
    for name, prop in props.items():
        if prop.get("type") == "string" and set(prop) <= {"type", "maxLength"} and draw(st.integers(0, 3)) == 0:
            prop["default"] = "d"[:prop.get("maxLength", 1)]
        if prop.get("type") == "integer" and set(prop) == {"type"} and draw(st.integers(0, 3)) == 0:
            prop["default"] = 7
        elif prop.get("type") in ("string", "integer", "number", "boolean") and "default" not in prop and \
                draw(st.integers(0, 7)) == 0:
            # any value: one the schema refuses makes the API server refuse the CRD, and the case is left out
            prop["default"] = draw(value_for(dict(prop, nullable=False), 3))
    if draw(st.integers(0, 4)) == 0:
        s[draw(st.sampled_from(["minProperties", "maxProperties"]))] = draw(st.integers(0, 2))
    if draw(st.integers(0, 5)) == 0:
        s["nullable"] = True
    return s


@st.composite
def mapping(draw, depth: int) -> dict:
    s = {"type": "object", "additionalProperties": draw(node(depth - 1))}
    if draw(st.integers(0, 4)) == 0:
        s["maxProperties"] = draw(st.integers(0, 2))
    return s


@st.composite
def preserved(draw, depth: int) -> dict:
    s = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
    if draw(st.booleans()):
        s["properties"] = draw(st.dictionaries(NAMES, node(depth - 1), min_size=1, max_size=2))
    return s


@st.composite
def array(draw, depth: int) -> dict:
    list_type = draw(st.sampled_from([None, None, "atomic", "set", "map"]))
    if list_type == "map":
        keys = draw(st.sampled_from([["k"], ["k", "j"]]))
        items = {"type": "object", "properties": {
            **{key: {"type": draw(st.sampled_from(["string", "integer"]))} for key in keys},
            "v": draw(node(depth - 1))}, "required": keys}
        s = {"type": "array", "items": items, "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": keys}
    elif list_type == "set":
        s = {"type": "array", "items": {"type": draw(st.sampled_from(["string", "integer", "number"]))},
             "x-kubernetes-list-type": "set"}
    else:
        s = {"type": "array", "items": draw(node(depth - 1))}
        if list_type:
            s["x-kubernetes-list-type"] = list_type
    if draw(st.integers(0, 3)) == 0:
        s["maxItems"] = draw(st.integers(0, 3))
    if draw(st.integers(0, 3)) == 0:
        s["minItems"] = draw(st.integers(0, 2))
    return s


schemas = node(2)


@st.composite
def value_for(draw, s: dict, depth: int = 0):
    """A value shaped by the schema most of the time, and wrong in one way some of the time."""
    if depth > 4 or draw(st.integers(0, 9)) == 0:
        return draw(SCALARS)
    if s.get("x-kubernetes-int-or-string"):
        return draw(st.one_of(INTS, TEXT, st.sampled_from(["auto", "1"]), st.sampled_from(s.get("enum") or [0])))
    kind = s.get("type")
    if kind == "string":
        options = [TEXT, FORMAT_VALUES]
        if s.get("pattern"):
            options.append(pattern_values(s["pattern"]))
        if s.get("enum"):
            options.append(st.sampled_from(s["enum"]))
        return draw(st.one_of(*options, st.lists(TEXT, max_size=2)))
    if kind in ("integer", "number"):
        return draw(st.one_of(INTS, FLOATS, st.sampled_from(s.get("enum") or [1])))
    if kind == "boolean":
        return draw(st.booleans())
    if kind == "array":
        items = s.get("items") or {}
        values = draw(st.lists(value_for(items, depth + 1), max_size=4))
        if values and draw(st.integers(0, 3)) == 0:
            values.append(values[0])  # a duplicate, for sets and map keys
        return values
    if kind == "object" and s.get("x-kubernetes-embedded-resource"):
        out = {}
        if draw(st.integers(0, 5)):
            out["apiVersion"] = draw(EMBEDDED_API_VERSIONS)
        if draw(st.integers(0, 5)):
            out["kind"] = draw(EMBEDDED_KINDS)
        if draw(st.booleans()):
            out["metadata"] = {"name": "thing", "labels": {"a": "b"}}
        for name, prop in (s.get("properties") or {}).items():
            if draw(st.booleans()):
                out[name] = draw(value_for(prop, depth + 1))
        if draw(st.booleans()):
            out["free"] = draw(SCALARS)
        return out
    if kind == "object":
        out: dict = {}
        props = s.get("properties") or {}
        for name, prop in props.items():
            if draw(st.integers(0, 3)):
                out[name] = draw(value_for(prop, depth + 1))
        extra = s.get("additionalProperties")
        if isinstance(extra, dict):
            for key in draw(st.lists(NAMES, max_size=3, unique=True)):
                out[key] = draw(value_for(extra, depth + 1))
        if draw(st.integers(0, 4)) == 0:
            out["unknown"] = draw(SCALARS)
        return out
    return draw(SCALARS)


def letters(n: int) -> str:
    return string.ascii_lowercase[n % 26] + str(n)
