"""The structural-schema validator's parts, each on the API server behaviour it reproduces.

The verdicts themselves are judged by a real kube-apiserver in
tests/cluster/test_schema_validation_property.py; these pin the behaviours that decide them
(each was seen on kube-apiserver v1.37 first), so a regression names its cause.
"""

from __future__ import annotations

import re

import pytest

from trainerctl.upgrade.schema import formats
from trainerctl.upgrade.schema.coerce import coerce
from trainerctl.upgrade.schema.gonum import enum_matches, format_float, is_json_integer, kind, parses_as
from trainerctl.upgrade.schema.goregex import Untranslatable, compile_go, translate
from trainerctl.upgrade.schema.validate import validate


def matches(pattern: str, text: str) -> bool:
    return compile_go(pattern).search(text) is not None


@pytest.mark.parametrize("pattern,text,expected", [
    ("^a$", "a", True),
    ("^a$", "a\n", False),  # Go's $ is the end of the text; Python's also matches before a final newline
    ("(?m)^a$", "b\na\nc", True),
    (r"^\d+$", "12", True),
    (r"^\d+$", "١٢", False),  # Go's \d is ASCII
    (r"^\w+$", "é", False),
    (r"^\s$", "\v", False),  # Go's \s has no vertical tab
    ("^x{,3}$", "x{,3}", True),  # not a repetition in Go: literal text
    ("^x{2,3}$", "xxx", True),
    ("^[[:alpha:]]+$", "abZ", True),
    ("^[[:^digit:]]$", "5", False),
    (r"^\pL+$", "éa", True),
    (r"^\PL$", "a", False),
    ("(?i)^abc$", "ABC", True),
    ("^a(?i)b$", "aB", True),
    ("^a(?i:b)c$", "aBC", False),
    (r"\bfoo\b", "a foo b", True),
    (r"\bfoo\b", "éfooé", True),  # é is no word character for Go
    (r"^\Qa.b\E$", "a.b", True),
    (r"^\Qa.b\E$", "axb", False),
    (r"a\z", "a\n", False),
    ("^[]a]+$", "]a", True),
    ("^[a-]$", "-", True),
    (r"^\x41\x{42}$", "AB", True),
    ("(?U)^a+", "aaa", True),
    ("^(?s).$", "\n", True),
    ("^.$", "\n", False),
])
def test_go_regular_expressions(pattern, text, expected):
    assert matches(pattern, text) is expected


@pytest.mark.parametrize("pattern", [r"\p{Greek}", r"(a)\1", "(?=a)", "a**", "[z-a]"])
def test_what_has_no_faithful_translation_is_refused(pattern):
    with pytest.raises(Untranslatable):
        translate(pattern)


def test_numbers_as_go_decodes_them():
    assert kind(True) == "bool" and kind(1) == "int" and kind(2**63) == "float" and kind(1.0) == "float"
    assert format_float(1.0) == "1" and format_float(1e21) == "1000000000000000000000" and format_float(-0.0) == "-0"
    assert is_json_integer(3.0) and not is_json_integer(2.0**53 + 2) and not is_json_integer(0.5)
    assert parses_as("2147483647", "int32") and not parses_as("2147483648", "int32") and not parses_as("1.5", "int64")
    assert parses_as("3.4e38".replace("e38", "0" * 38).replace(".", "", 1)[:39], "float32")
    assert not parses_as("1" + "0" * 39, "float32")


def test_enum_values_compare_as_go_converts_them():
    assert enum_matches(97, "a")  # an int64 converts to a string as a code point
    assert enum_matches(1.5, 1)  # a float64 converts to an int64 by truncation
    assert enum_matches(1, 1.0)
    assert not enum_matches(True, 1) and not enum_matches("1", 1) and not enum_matches(None, None)


@pytest.mark.parametrize("text,expected", [
    ("2020-01-01T10:00:00Z", True), ("2020-02-29t23:59:59.5+01:00", True), ("2021-02-29T00:00:00Z", False),
    ("2020-01-01T24:00:00Z", False), ("2020-01-01 10:00:00Z", False), ("2020-01-01T10:00:00", False),
])
def test_date_time(text, expected):
    assert formats.is_date_time(text) is expected


@pytest.mark.parametrize("text,expected", [
    ("1h30m", True), ("1.5h", True), ("-0", True), ("3 days", True), ("90000000000000000000s", False), ("h", False),
    ("", False), ("5 parsecs", False),
])
def test_duration(text, expected):
    assert formats.is_duration(text) is expected


def test_formats_the_api_server_drops_are_dropped():
    assert formats.kept_format("string", False, "date-time") == "date-time"
    assert formats.kept_format("string", False, "Date-Time") == ""  # names compare case-sensitively
    assert formats.kept_format("integer", False, "int32") == "int32"
    assert formats.kept_format("number", False, "int32") == ""
    assert formats.kept_format(None, True, "int32") == ""  # int-or-string keeps string formats only


def test_coerce_prunes_drops_nulls_and_defaults():
    schema = {"type": "object", "properties": {"spec": {"type": "object", "properties": {
        "a": {"type": "string", "default": "x"}, "b": {"type": "string"}, "c": {"type": "string", "nullable": True},
        "keep": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}}}}
    obj = {"apiVersion": "g/v1", "kind": "K", "metadata": {"name": "n", "anything": 1}, "other": 1,
           "spec": {"a": None, "b": None, "c": None, "gone": 1, "keep": {"free": {"x": 1}}}}
    assert coerce(obj, schema) == {"apiVersion": "g/v1", "kind": "K", "metadata": {"name": "n", "anything": 1},
                                   "spec": {"a": "x", "c": None, "keep": {"free": {"x": 1}}}}


def _spec(schema: dict) -> dict:
    return {"type": "object", "properties": {"spec": {"type": "object", "properties": {"v": schema}}}}


def _obj(value) -> dict:
    return {"apiVersion": "g/v1", "kind": "K", "metadata": {"name": "n"}, "spec": {"v": value}}


@pytest.mark.parametrize("schema,value,valid", [
    ({"type": "integer"}, 1.0, True),
    ({"type": "integer", "format": "int32"}, 3000000000, False),
    ({"type": "integer", "maximum": 2.5}, 2, False),  # a bound an integer field cannot hold refuses every value
    ({"type": "integer", "multipleOf": 2.5}, 5, False),
    ({"type": "number", "format": "float"}, 1e39, False),
    ({"x-kubernetes-int-or-string": True, "enum": ["a"]}, 97, True),
    ({"type": "string", "format": "date-time"}, ["x"], True),  # a list passes a string format's type check
    ({"type": "string", "pattern": "^a$"}, "a\n", False),
    ({"type": "string", "maxLength": 2}, "éé", True),  # characters, not bytes
    ({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]}, {"a": None}, False),
    ({"type": "object", "properties": {"a": {"type": "string", "nullable": True}}, "required": ["a"]}, {"a": None},
     True),
    ({"type": "object", "properties": {"a": {"type": "string", "default": "x"}}, "required": ["a"]}, {}, True),
    ({"type": "array", "items": {"type": "string"}, "x-kubernetes-list-type": "set"}, ["a", "a"], False),
    ({"type": "array", "items": {"type": "number"}, "x-kubernetes-list-type": "set"}, [1, 1.0], True),
    ({"type": "object", "x-kubernetes-preserve-unknown-fields": True, "properties": {"a": {"type": "integer"}}},
     {"a": "x", "b": 1}, False),
])
def test_verdicts_seen_on_the_api_server(schema, value, valid):
    assert validate(_obj(value), _spec(schema)).valid is valid


def test_a_rejection_names_the_field_the_value_and_why():
    verdict = validate(_obj({"n": "auto"}), _spec({"type": "object", "properties": {
        "n": {"type": "integer", "format": "int32"}}}))
    [problem] = verdict.problems
    assert (problem.path, problem.value, problem.schema_path) == ("spec.v.n", "auto", "spec.v.n")
    assert problem.reason == 'must be of type integer: "string"'


def test_cel_rules_are_not_checked_never_passed():
    schema = _spec({"type": "string", "x-kubernetes-validations": [
        {"rule": "self != 'x'", "message": "no x"}, {"rule": "self == oldSelf", "message": "immutable"}]})
    verdict = validate(_obj("x"), schema)
    assert verdict.valid  # nothing evaluated here rejects...
    assert [(u.what, u.detail, u.transition) for u in verdict.unchecked] == [  # ...and each rule says so
        ("rule", "self != 'x'", False), ("rule", "self == oldSelf", True)]
    assert not validate(_obj(None), schema).unchecked  # no value there, no rule to run


def test_an_untranslatable_pattern_is_not_checked():
    verdict = validate(_obj("α"), _spec({"type": "string", "pattern": r"^\p{Greek}$"}))
    assert verdict.valid and [(u.what, u.detail) for u in verdict.unchecked] == [("pattern", r"^\p{Greek}$")]
    assert re.search("Greek", verdict.unchecked[0].detail)
