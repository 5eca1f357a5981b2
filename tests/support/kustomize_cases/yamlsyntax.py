"""YAML as kubectl reads and prints it, case by case: each difference the differential property
test (tests/kustomize/test_kustomize_yaml_differential.py) or its exploration found, kept as a
fixed example of its class. Texts are bytes: written exactly (no dedent), blank lines, tabs and
all."""

from tests.support.kustomize_cases import Case, refuse, same

K = "kustomization.yaml"
HEAD = "apiVersion: example.com/v1\nkind: Thing\nmetadata:\n  name: {name}\n"


def _raw(files: dict) -> dict:
    return {name: text.encode("utf-8") if isinstance(text, str) else text for name, text in files.items()}


def _same(doc: str, name: str = "t") -> Case:
    """One resource file holding `doc` under the usual head."""
    return same(_raw({K: "resources: [r.yaml]\n", "r.yaml": HEAD.format(name=name) + doc}))


def _refused(doc: str, needle: str) -> Case:
    return refuse(_raw({K: "resources: [r.yaml]\n", "r.yaml": HEAD.format(name="t") + doc}), needle)


def _kustomization(text: str, needle: str | None = None) -> Case:
    files = _raw({K: text, "t.yaml": HEAD.format(name="t") + "spec: {a: 1, b: [x]}\n"})
    return same(files) if needle is None else refuse(files, needle)


CASES = {
    # -- block scalars as kyaml writes them back (trainerctl/kustomize/roundtrip.py) ---------
    "folded_more_indented_line_keeps_a_break": _same(
        "data:\n  a: >-\n    one\n    two\n      more\n    three\n\n    four\n"),
    "folded_clip_and_keep_more_indented": _same(
        "data:\n  b: >\n    x\n      y\n    z\n  c: >+\n    p\n      q\n\n  d: x\n"),
    "folded_value_starting_with_a_blank_loses_its_breaks": _same(
        "data:\n  a: >2-\n     lead\n    next\n    last\n"),
    "folded_empty_and_space_only_lines": _same("data:\n  a: >\n    x\n\n   \n    y\n     \n    z\n"),
    "folded_tab_led_line": _same("data:\n  a: >\n    x\n    \ty\n    z\n"),
    "folded_in_sequence_and_flow_alias": _same(
        "spec:\n  l:\n  - &f >\n    a\n      b\n  - *f\n  flow: [*f]\n"),
    "literal_unchanged": _same("data:\n  a: |\n    x\n      y\n\n    z\n"),
    "literal_starting_with_a_tab_fails_kubectl": _refused(
        "data:\n  a: |2\n    \tx\n    y\n", "starts with a tab"),
    "folded_starting_with_a_tab_fails_kubectl": _refused(
        "data:\n  a: >2-\n    \tx\n    y\n", "starts with a tab"),
    "keep_chomped_last_value_before_a_comment": _same("data:\n  a: |+\n    x\n\n# closing comment\n"),
    "keep_chomped_folded_last_before_a_comment": _same(
        "data:\n  a: >+\n    x\n    y\n\n  # closing comment\n"),
    "keep_chomped_not_last": _same("data:\n  a: |+\n    x\n\n# a comment\n  b: y\n"),
    "list_items_from_json_not_written_back": same(_raw({
        K: "resources: [l.yaml]\n",
        "l.yaml": "apiVersion: v1\nkind: ConfigMapList\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n"
                  "  metadata: {name: a}\n  data:\n    k: >\n      x\n        y\n    t: |2\n      \tz\n",
    })),
    "single_list_document_items_written_back": same(_raw({
        K: "resources: [l.yaml]\n",
        "l.yaml": "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n"
                  "  metadata: {name: a}\n  data:\n    k: >\n      x\n        y\n",
    })),
    "annotations_set_again_not_written_back": _same(
        "  annotations:\n    a: >\n      x\n        y\n    b: [1, 2]\n    c: {d: 1}\n"
        "    e: 2001-12-14T21:59:43.10-05:00\n"),
    "multi_line_annotation_starting_with_a_tab_refused": _refused(
        "  annotations:\n    a: \"\\tx\\ny\"\n", "starting with a tab"),
    "common_annotation_starting_with_a_tab_refused": _kustomization(
        "resources: [t.yaml]\ncommonAnnotations: {a: \"\\tx\\ny\"}\n", "starting with a tab"),
    "null_written_as_nothing_copied_into_flow": _same(
        "spec:\n  a: &x\n  b: [*x, [*x]]\n  c: {d: *x}\n  m: &m\n    k:\n  n: [*m]\n  o: *x\n"),
    # -- documents as kyaml's ByteReader splits a file (docsplit.py) ----------------------------
    "separator_with_content_refused": refuse(_raw({
        K: "resources: [r.yaml]\n",
        "r.yaml": HEAD.format(name="a") + "--- {apiVersion: v1, kind: ConfigMap, metadata: {name: b}}\n",
    }), "invalid document separator"),
    "separator_with_comment": same(_raw({
        K: "resources: [r.yaml]\n",
        "r.yaml": HEAD.format(name="a") + "--- # next\n" + HEAD.format(name="b"),
    })),
    "document_end_marker_hides_the_rest": same(_raw({
        K: "resources: [r.yaml]\n",
        "r.yaml": HEAD.format(name="a") + "...\n" + HEAD.format(name="b") + "---\n" + HEAD.format(name="c"),
    })),
    "crlf_line_ends": same(_raw({K: "resources: [r.yaml]\n",
                                 "r.yaml": HEAD.format(name="a").replace("\n", "\r\n") + "data: |\r\n  x\r\n"})),
    # -- go-yaml's scanner where libyaml's differs (goyaml.py) ----------------------------------
    "escaped_apostrophe_read": _same("data:\n  a: \"it\\'s\"\n"),
    "escaped_slash_refused": _refused("data:\n  a: \"a\\/b\"\n", "unknown escape"),
    "question_mark_in_flow_plain_refused": _refused("data:\n  a: [a?b]\n", "'?'"),
    "colon_before_flow_end_read": _same("data:\n  a: [x:, y:]\n  b: {k: v:}\n"),
    "anchor_defined_again": _same("spec:\n  a: &x 1\n  b: *x\n  c: &x [2]\n  d: *x\n"),
    "tab_between_comment_lines": _same("data:\n  a: 1\n# one\n \t\n\t# two\n  b: 2\n"),
    "tab_after_comment_then_content_refused": _refused("data:\n  a: 1\n# one\n \t\n  b: 2\n", "cannot start"),
    # -- keys as kyaml writes them back --------------------------------------------------------
    "root_keys_that_are_not_strings_keep_their_text": _same(
        "True: a\n1.50: b\n2001-12-14: c\n0x1F: d\n"),
    "nested_number_key_refused": _refused("spec:\n  1: a\n", "reads as a number"),
    "nested_boolean_key_refused": _refused("spec:\n  x: {true: a}\n", "reads as a boolean"),
    "null_key_refused": _refused("~: a\n", "reads as null"),
    "timestamp_key_in_flow_mapping_with_colons": _same("spec: {2001-12-14T21:59:43.10-05:00: a}\n"),
    "two_merge_keys_refused": _refused(
        "spec:\n  a: &a {x: 1}\n  b: &b {y: 2}\n  c:\n    <<: *a\n    <<: *b\n", "duplicate merge key"),
    # -- scalars as kyaml writes them back -----------------------------------------------------
    "timestamps_in_flow_collections_keep_their_text": _same(
        "spec:\n  a: 2001-12-14T21:59:43.10-05:00\n  b: [2001-12-14T21:59:43.10-05:00, 2002-1-1]\n"
        "  c: {d: 2001-12-14 21:59:43.10}\n"),
    # -- the output: JSON read by go-yaml v2, then written (yamlemit.py) -----------------------
    "complex_keys_past_128_bytes_and_multi_line": _same(
        "spec:\n  " + "k" * 129 + ": {x: 1}\n  " + "é" * 70 + ": 2\n  \"a\\nb\": 3\n  l:\n  - "
        + "k" * 130 + ": [1]\n    b: 2\n"),
    "next_line_character_folded": _same(
        "spec:\n  a: \"x\\Ny\"\n  b: \"\\N  z\"\n  c: \"p \\N\\Nq\"\n  d: [\"a\\Nb\"]\n"),
    "next_line_character_in_a_key_refused": _refused("spec: {\"k\\Nx\": 1}\n", "U+0085"),
    "line_separators_break_lines": _same(
        "spec:\n  a: \"x\\u2028y\"\n  b: \"x\\u2028   y\"\n  c: \"a\\nb\\u2029\"\n  d: [\"p\\nq\\u2028\", r]\n"),
    "keep_chomped_string_ends_the_document": _same("spec: \"a\\n\\n\"\n"),
    # -- kustomization fields --------------------------------------------------------------------
    "generated_value_folded_before_hashing": _kustomization(
        "resources: [t.yaml]\nconfigMapGenerator:\n- name: g\n  literals: [\"k=a\\Nb\", \"j= \\N\"]\n"),
    "generated_multi_line_value_starting_with_a_tab_refused": _kustomization(
        "resources: [t.yaml]\nconfigMapGenerator:\n- name: g\n  literals: [\"k=\\tx\\ny\"]\n",
        "starting with a tab"),
    "kustomization_timestamp_keeps_its_text": _kustomization(
        "resources: [t.yaml]\ncommonAnnotations: {a: 2001-12-14, b: 2001-12-14T21:59:43.10-05:00}\n"),
    "patch_of_another_node_kind_refused": _kustomization(
        "resources: [t.yaml]\npatches:\n- patch: |-\n    apiVersion: example.com/v1\n    kind: Thing\n"
        "    metadata: {name: t}\n    spec: {b: {c: 1}}\n", "wrong node kind"),
    "renamed_name_with_a_comma_refused": refuse(_raw({
        K: "resources: [t.yaml]\nnamePrefix: p-\n",
        "t.yaml": HEAD.format(name="'a,b'"),
    }), "with ','"),
}
