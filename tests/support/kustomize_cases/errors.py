"""Bad input that kubectl kustomize refuses too: trainerctl refuses with one line naming the
file. test_kustomize_errors also runs each through the CLI (a non-zero exit, nothing on stdout,
no traceback)."""

from tests.support.kustomize_cases import refuse

K = "kustomization.yaml"
OK_CM = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm}\n"

CASES = {
    "missing_resource_file": refuse({K: "resources: [nope.yaml]\n"}, "nope.yaml"),
    "yaml_syntax_error_in_resource": refuse(
        {K: "resources: [bad.yaml]\n",
         "bad.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: [oops\n"},
        "bad.yaml"),
    "yaml_syntax_error_in_kustomization": refuse(
        {K: "resources:\n- a.yaml\n  - b: [\n"}, K),
    "unknown_kustomization_field": refuse(
        {K: "resources: []\nnotAField: 1\n"}, "notAField"),
    "resource_outside_root_via_dotdot": refuse(
        {"sub/kustomization.yaml": "resources: [../outside.yaml]\n", "outside.yaml": OK_CM},
        "outside.yaml", target="sub"),
    "resource_outside_root_via_symlink": refuse(
        {"sub/kustomization.yaml": "resources: [link.yaml]\n", "outside.yaml": OK_CM},
        "link.yaml", target="sub",
        links={"sub/link.yaml": "@ROOT@/outside.yaml"}),
    "cycle_between_bases": refuse(
        {K: "resources: [a]\n", "a/kustomization.yaml": "resources: [..]\n"},
        "cycle"),
    "duplicate_resource_ids": refuse(
        {K: "resources: [a.yaml, b.yaml]\n", "a.yaml": OK_CM, "b.yaml": OK_CM},
        "already registered"),
    "patch_target_absent": refuse(
        {K: "resources: [a.yaml]\npatches:\n- path: p.yaml\n", "a.yaml": OK_CM,
         "p.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: other}\ndata: {a: b}\n"},
        "p.yaml"),
    "replacement_source_absent": refuse(
        {K: "resources: [a.yaml]\nreplacements:\n- source: {kind: Secret, name: s}\n"
                               "  targets: [{select: {kind: ConfigMap}, fieldPaths: [data.x]}]\n",
         "a.yaml": OK_CM},
        "nothing selected"),
    "replacement_target_field_absent": refuse(
        {K: "resources: [a.yaml]\nreplacements:\n- source: {kind: ConfigMap, name: cm}\n"
                               "  targets: [{select: {kind: ConfigMap}, fieldPaths: [data.missing]}]\n",
         "a.yaml": OK_CM},
        "data.missing"),
    "bad_json6902_op": refuse(
        {K: "resources: [a.yaml]\npatches:\n- target: {kind: ConfigMap}\n"
                               "  path: ops.yaml\n", "a.yaml": OK_CM,
         "ops.yaml": "- {op: frobnicate, path: /data}\n"},
        "ops.yaml"),
    "json6902_remove_missing_path": refuse(
        {K: "resources: [a.yaml]\npatches:\n- target: {kind: ConfigMap}\n"
                               "  path: ops.yaml\n", "a.yaml": OK_CM,
         "ops.yaml": "- {op: remove, path: /data/nothing}\n"},
        "ops.yaml"),
    "unreachable_remote_file": refuse(
        {K: "resources: [http://127.0.0.1:@PORT@/manifests.yaml]\n"},
        "127.0.0.1"),
    "git_ref_that_does_not_exist": refuse(
        {K: "resources:\n- file://@REPO@//base?ref=no-such-ref\n"}, "no-such-ref"),
    "no_kustomization_in_base": refuse(
        {K: "resources: [empty]\n", "empty/readme.txt": "x\n"}, "empty"),
    "literal_without_equals": refuse(
        {K: "configMapGenerator:\n- {name: c, literals: [novalue]}\n"}, "novalue"),
    "generator_duplicate_key": refuse(
        {K: "configMapGenerator:\n- {name: c, literals: [a=1, a=2]}\n"}, "configMapGenerator"),
    "merge_without_base_object": refuse(
        {K: "configMapGenerator:\n- {name: c, behavior: merge, literals: [a=1]}\n"},
        K),
    "resource_without_name": refuse(
        {K: "resources: [a.yaml]\n", "a.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {}\n"},
        "a.yaml"),
    "resources_not_a_list": refuse({K: "resources: a.yaml\n"}, "resources"),
    "patch_file_missing": refuse(
        {K: "resources: [a.yaml]\npatches:\n- path: gone.yaml\n", "a.yaml": OK_CM},
        "gone.yaml"),
    "env_file_missing": refuse(
        {K: "configMapGenerator:\n- {name: c, envs: [gone.env]}\n"}, "gone.env"),
    "literal_with_empty_key": refuse(
        {K: "configMapGenerator:\n- name: c\n  literals: ['=1']\n"}, "configMapGenerator"),
    "duplicate_mapping_key": refuse(
        {K: "resources: [a.yaml]\n",
         "a.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm}\ndata: {a: 1}\ndata: {b: 2}\n"},
        "a.yaml"),
    "helm_charts_unsupported": refuse(
        {K: "helmCharts:\n- {name: x, repo: https://example.invalid}\n"}, "helmCharts"),
    "json6902_without_target": refuse(
        {K: "resources: [a.yaml]\npatches:\n- patch: '[{\"op\": \"add\", \"path\": \"/data\", \"value\": {}}]'\n",
         "a.yaml": OK_CM},
        "target"),
    "two_kustomization_files": refuse(
        {K: "resources: []\n", "kustomization.yml": "resources: []\n"}, "multiple"),
    "bad_sort_order": refuse({K: "sortOptions: {order: random}\n"}, "sortOptions"),
    "missing_directory": refuse({}, "nowhere", target="nowhere"),
}
