"""JSON 6902 patches as kustomize applies them: evanphx/json-patch v4.13.0 with its defaults
(trainerctl/kustomize/jsonpatch.py says which rule each case shows), on the object's JSON form.

replace of a missing key adds it; remove of a missing key, add under a missing parent and
indices out of range fail; negative indices count from the end (add at -1 appends); `copy`
from a missing key copies a null; a path's first segment is not read; `test` compares scalars
by their JSON text; numbers come back as float64."""

from tests.support.kustomize_cases import bounded, refuse, same

K = "kustomization.yaml"
THING = """
apiVersion: example.com/v1
kind: Thing
metadata: {name: t}
spec:
  list: [a, b, c]
  obj: {k: v, n: null}
  num: 12345678901234567890
  big: 9007199254740993
  f: 1.0
  f2: 1.5e3
  i: 7
  s: "x<y&z"
  u: "é"
  date: 2001-12-14
  o8: 0o17
  oct: 0400
"""


def _yaml(ops: str, resource: str = THING) -> dict:
    return {K: "resources: [t.yaml]\npatches:\n- target: {kind: Thing}\n  path: ops.yaml\n",
            "t.yaml": resource, "ops.yaml": ops}


def _json(ops: str) -> dict:
    return {K: "resources: [t.yaml]\npatches:\n- target: {kind: Thing}\n  path: ops.json\n",
            "t.yaml": THING, "ops.json": ops}


def _then_add(op: str) -> str:
    return f"- {op}\n- {{op: add, path: /spec/x, value: 1}}\n"


def _json_then_add(op: str) -> str:
    return f'[{op}, {{"op": "add", "path": "/spec/x", "value": 1}}]'


CASES = {
    "numbers_come_back_as_float64": same(_yaml("- {op: add, path: /spec/x, value: 1}\n")),
    "replace_of_a_missing_key_adds_it": same(_yaml("- {op: replace, path: /spec/obj/missing, value: 1}\n")),
    "replace_of_a_null": same(_yaml("- {op: replace, path: /spec/obj/n, value: 1}\n")),
    "replace_under_a_missing_parent": refuse(
        _yaml("- {op: replace, path: /spec/nope/missing, value: 1}\n"), "doc is missing path"),
    "replace_without_value_sets_null": same(_yaml("- {op: replace, path: /spec/i}\n")),
    "replace_the_whole_object": same(_yaml(
        "- op: replace\n  path: ''\n  value: {apiVersion: v1, kind: ConfigMap, metadata: {name: t}}\n")),
    "remove_of_a_missing_key": refuse(_yaml("- {op: remove, path: /spec/obj/missing}\n"),
                                      "Unable to remove nonexistent key"),
    "remove_of_a_null": same(_yaml("- {op: remove, path: /spec/obj/n}\n")),
    "add_under_a_missing_parent": refuse(_yaml("- {op: add, path: /spec/nope/x, value: 1}\n"),
                                         "doc is missing path"),
    "add_through_a_scalar": refuse(_yaml("- {op: add, path: /spec/i/x, value: 1}\n"), "doc is missing path"),
    "add_without_value_adds_null": same(_yaml("- {op: add, path: /spec/x}\n")),
    "add_at_minus_one_appends": same(_yaml("- {op: add, path: /spec/list/-1, value: z}\n")),
    "add_at_minus_length_plus_one_prepends": same(_yaml("- {op: add, path: /spec/list/-4, value: z}\n")),
    "add_before_the_start": refuse(_yaml("- {op: add, path: /spec/list/-5, value: z}\n"), "invalid index"),
    "add_at_the_end_index": same(_yaml("- {op: add, path: /spec/list/3, value: z}\n")),
    "add_past_the_end": refuse(_yaml("- {op: add, path: /spec/list/4, value: z}\n"), "invalid index"),
    "add_at_dash_appends": same(_yaml("- {op: add, path: /spec/list/-, value: z}\n")),
    "index_with_a_plus_sign": same(_yaml("- {op: add, path: /spec/list/+1, value: z}\n")),
    "index_with_a_leading_zero": same(_yaml("- {op: add, path: /spec/list/01, value: z}\n")),
    "replace_at_minus_one": same(_yaml("- {op: replace, path: /spec/list/-1, value: z}\n")),
    "replace_past_the_end": refuse(_yaml("- {op: replace, path: /spec/list/3, value: z}\n"),
                                   "doc is missing key"),
    "remove_at_minus_one": same(_yaml("- {op: remove, path: /spec/list/-1}\n")),
    "remove_at_minus_length": same(_yaml("- {op: remove, path: /spec/list/-3}\n")),
    "remove_before_the_start": refuse(_yaml("- {op: remove, path: /spec/list/-4}\n"), "invalid index"),
    "negative_index_inside_a_path": refuse(_yaml("- {op: add, path: /spec/list/-1/x, value: 1}\n"),
                                           "doc is missing path"),
    "copy_of_a_missing_key_copies_null": same(_yaml("- {op: copy, from: /spec/obj/missing, path: /spec/c}\n")),
    "copy_of_an_object": same(_yaml("- {op: copy, from: /spec/obj, path: /spec/c}\n")),
    "copy_into_a_list": same(_yaml("- {op: copy, from: /spec/i, path: /spec/list/0}\n")),
    "copies_are_bounded": bounded(_yaml(
        "- {op: add, path: /spec/l, value: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]}\n"
        + "".join("- {op: copy, from: /spec/l, path: /spec/l/-}\n" for _ in range(22))),
        "copy operations add more than"),
    "move_of_a_missing_key": refuse(_yaml("- {op: move, from: /spec/obj/missing, path: /spec/m}\n"),
                                    "Unable to remove nonexistent key"),
    "move_of_a_null": same(_yaml("- {op: move, from: /spec/obj/n, path: /spec/m}\n")),
    "move_within_a_list": same(_yaml("- {op: move, from: /spec/list/0, path: /spec/list/-1}\n")),
    "path_without_a_leading_slash": same(_yaml("- {op: add, path: spec/x, value: 1}\n")),
    "first_segment_is_never_read": same(_yaml("- {op: add, path: a/b, value: 1}\n")),
    "path_slash_is_the_empty_key": same(_yaml("- {op: add, path: /, value: 1}\n")),
    "add_to_the_empty_path": refuse(_yaml("- {op: add, path: '', value: {a: 1}}\n"), "doc is missing path"),
    "escapes": same(_yaml("- {op: add, path: /spec/a~1b~0c, value: 1}\n")),
    "other_tildes_are_literal": same(_yaml("- {op: add, path: /spec/a~2b, value: 1}\n")),
    "unknown_op": refuse(_yaml("- {op: frob, path: /spec/x}\n"), "Unexpected kind: frob"),
    "missing_op": refuse(_yaml("- {path: /spec/x, value: 1}\n"), "Unexpected kind: unknown"),
    "bad_ops_are_read_only_when_a_target_is_selected": same({
        K: "resources: [t.yaml]\npatches:\n- target: {kind: Nothing}\n  path: ops.yaml\n",
        "t.yaml": THING, "ops.yaml": "- {op: frob, path: /spec/x}\n",
    }),
    "test_passes": same(_yaml(_then_add("{op: test, path: /spec/i, value: 7}"))),
    "test_fails": refuse(_yaml("- {op: test, path: /spec/i, value: 8}\n"), "test failed"),
    "test_yaml_float_is_go_json": same(_yaml(_then_add("{op: test, path: /spec/f, value: 1.0}"))),
    "test_json_float_is_its_text": refuse(
        _json(_json_then_add('{"op": "test", "path": "/spec/f", "value": 1.0}')), "test failed"),
    "test_json_integer_text": same(_json(_json_then_add('{"op": "test", "path": "/spec/f", "value": 1}'))),
    "test_json_html_characters": refuse(
        _json(_json_then_add('{"op": "test", "path": "/spec/s", "value": "x<y&z"}')), "test failed"),
    "test_json_escaped_html_characters": same(
        _json(_json_then_add('{"op": "test", "path": "/spec/s", "value": "x\\u003cy\\u0026z"}'))),
    "test_yaml_html_characters": same(_yaml(_then_add("{op: test, path: /spec/s, value: 'x<y&z'}"))),
    "test_json_unicode_escape": refuse(
        _json(_json_then_add('{"op": "test", "path": "/spec/u", "value": "\\u00e9"}')), "test failed"),
    "test_missing_against_null": same(_yaml(_then_add("{op: test, path: /spec/obj/missing, value: null}"))),
    "test_null_against_null": same(_yaml(_then_add("{op: test, path: /spec/obj/n, value: null}"))),
    "test_missing_without_value": same(_yaml(_then_add("{op: test, path: /spec/obj/missing}"))),
    "test_object": same(_yaml(_then_add("{op: test, path: /spec/obj, value: {'n': null, k: v}}"))),
    "yaml_1_1_key_n_is_false": refuse(_yaml("- {op: test, path: /spec/obj, value: {n: null, k: v}}\n"),
                                      "test failed"),
    "yaml_1_1_keys_become_strings": same(_yaml("- {op: add, path: /spec/x, value: {yes: 1, 2: b, 1.5: c}}\n")),
    "test_object_with_a_missing_key": refuse(_yaml("- {op: test, path: /spec/obj, value: {k: v}}\n"),
                                             "test failed"),
    "test_list": same(_yaml(_then_add("{op: test, path: /spec/list, value: [a, b, c]}"))),
    "test_big_integer_as_written": same(
        _json(_json_then_add('{"op": "test", "path": "/spec/num", "value": 12345678901234567890}'))),
}
