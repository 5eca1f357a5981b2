"""Nulls as kustomize (kyaml) treats them, which depends on how a null is written.

- kyaml's strategic merge walks every map of the patched object (and the elements of lists it
  merges) and sets each field again: a null written as nothing (`key:`, `{key: }`,
  `!!null ''`) is cleared, a spelled one (`null`, `~`, `Null`) is kept; lists that do not merge
  (args, tolerations, any list of a kind without a schema) are taken whole.
- Nulls a patch brings (added or `$patch: replace` maps) are cleared.
- An object is printed through YAML: a null written as nothing inside a flow mapping prints as
  an empty string.
- A JSON 6902 patch takes the object through JSON: afterwards every null is spelled out (a later
  merge keeps it) and every number is a float64 (integers beyond 2**53 lose digits).
- A generator with `behavior: merge` reads the old data and labels as strings of their text: a
  null is "", `1.50` stays "1.50", `2001-12-14` stays as written.
"""

from tests.support.kustomize_cases import same

K = "kustomization.yaml"
DEPLOY = """
apiVersion: apps/v1
kind: Deployment
metadata:
  name: app
  labels:
  annotations:
spec:
  replicas:
  selector:
    matchLabels: {app: a}
  template:
    metadata:
      labels: {app: a}
    spec:
      affinity:
        nodeAffinity:
          preferredDuringSchedulingIgnoredDuringExecution:
          requiredDuringSchedulingIgnoredDuringExecution:
        podAffinity: {a: null, b: ~, c: , d: Null, e: NULL}
      containers:
      - name: c
        image: x
        args:
        - a
        -
        - ~
        env:
        - name: A
          value:
        - name: B
          value: null
      volumes:
      - name: v
        configMap:
      tolerations:
      - key: k
        value:
"""
THING = """
apiVersion: example.com/v1
kind: Thing
metadata: {name: t}
spec:
  a:
  b: null
  list:
  - name: x
    v:
  nested: {p: , q: ~}
"""
SMP_DEPLOY = ("- patch: |-\n    apiVersion: apps/v1\n    kind: Deployment\n    metadata: {name: app}\n"
              "    spec: {minReadySeconds: 2}\n")
SMP_THING = ("- patch: |-\n    apiVersion: example.com/v1\n    kind: Thing\n    metadata: {name: t}\n"
             "    spec: {z: 1}\n")
JSON_DEPLOY = ("- target: {kind: Deployment}\n"
               "  patch: '[{\"op\": \"add\", \"path\": \"/spec/minReadySeconds\", \"value\": 3}]'\n")
JSON_THING = "- target: {kind: Thing}\n  patch: '[{\"op\": \"add\", \"path\": \"/spec/z\", \"value\": 3}]'\n"
BOTH = {"d.yaml": DEPLOY, "t.yaml": THING}
LIST = """
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: ConfigMap
  metadata: {name: a, labels: }
  data: {x: , y: null}
- apiVersion: example.com/v1
  kind: Thing
  metadata:
    name: t
  spec:
    a:
    b: {c: }
"""


def _deployment_meta(extra: str) -> str:
    return ("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: app\n" + extra
            + "spec:\n  selector:\n    matchLabels: {app: a}\n  template:\n    metadata:\n"
              "      labels: {app: a}\n    spec:\n      containers:\n      - {name: c, image: x}\n")


def _merged(field: str, value: str, kind: str = "ConfigMap", generator: str = "configMapGenerator",
            behavior: str = "merge") -> dict:
    return {K: f"resources: [o.yaml]\n{generator}:\n- {{name: o, behavior: {behavior}, "
               f"literals: [b=2]}}\n",
            "o.yaml": f"apiVersion: v1\nkind: {kind}\nmetadata: {{name: o}}\n{field}:\n  a: {value}\n"}


CASES = {
    "printed_without_a_patch": same({K: "resources: [d.yaml, t.yaml]\n", **BOTH}),
    "strategic_merge_clears_nulls_written_as_nothing": same(
        {K: "resources: [d.yaml, t.yaml]\npatches:\n" + SMP_DEPLOY + SMP_THING, **BOTH}),
    "patches_strategic_merge_field_too": same({
        K: "resources: [d.yaml]\npatchesStrategicMerge:\n- p.yaml\n", "d.yaml": DEPLOY,
        "p.yaml": "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: app}\nspec: {minReadySeconds: 2}\n",
    }),
    "json_patch_first_spells_nulls_out": same(
        {K: "resources: [d.yaml, t.yaml]\npatches:\n" + JSON_DEPLOY + JSON_THING + SMP_DEPLOY + SMP_THING,
         **BOTH}),
    "json_patch_after_the_merge": same(
        {K: "resources: [d.yaml, t.yaml]\npatches:\n" + SMP_DEPLOY + SMP_THING + JSON_DEPLOY + JSON_THING,
         **BOTH}),
    "json_patch_alone": same({K: "resources: [d.yaml, t.yaml]\npatches:\n" + JSON_DEPLOY + JSON_THING,
                              **BOTH}),
    "replace_directive_clears_the_patch_nulls": same({
        K: "resources: [d.yaml]\npatches:\n- patch: |-\n    apiVersion: apps/v1\n    kind: Deployment\n"
           "    metadata: {name: app}\n    spec:\n      template:\n        spec:\n          affinity:\n"
           "            $patch: replace\n            nodeAffinity: {x: null, y: , z: 1}\n",
        "d.yaml": DEPLOY,
    }),
    "new_list_element_nulls_cleared": same({
        K: "resources: [d.yaml]\npatches:\n- patch: |-\n    apiVersion: apps/v1\n    kind: Deployment\n"
           "    metadata: {name: app}\n    spec:\n      template:\n        spec:\n          containers:\n"
           "          - name: new\n            image: y\n            args: null\n"
           "            env: [{name: Z, value: null}]\n",
        "d.yaml": DEPLOY,
    }),
    "patch_fills_a_null_written_as_nothing": same({
        K: "resources: [d.yaml]\npatches:\n- patch: |-\n    apiVersion: apps/v1\n    kind: Deployment\n"
           "    metadata: {name: app}\n    spec:\n      template:\n        spec:\n          affinity:\n"
           "            nodeAffinity:\n              preferredDuringSchedulingIgnoredDuringExecution:\n"
           "              - {weight: 1, preference: {}}\n",
        "d.yaml": DEPLOY,
    }),
    "list_items_keep_how_nulls_were_written": same({K: "resources: [l.yaml]\n", "l.yaml": LIST}),
    "list_items_merged": same({K: "resources: [l.yaml]\npatches:\n" + SMP_THING, "l.yaml": LIST}),
    "merged_twice": same({K: "resources: [t.yaml]\npatches:\n" + SMP_THING + SMP_THING, "t.yaml": THING}),
    "merged_from_an_overlay": same({"base/" + K: "resources: [t.yaml]\n", "base/t.yaml": THING,
                                    K: "resources: [base]\npatches:\n" + SMP_THING}),
    "flow_mappings_in_lists": same({
        K: "resources: [t.yaml]\n",
        "t.yaml": "apiVersion: example.com/v1\nkind: Thing\nmetadata: {name: t}\nspec:\n"
                  "  l: [{a: }, {b: 1}]\n  m: {n: {o: }}\n",
    }),
    "top_level_field_cleared": same({
        K: "resources: [t.yaml]\npatches:\n" + SMP_THING,
        "t.yaml": "apiVersion: example.com/v1\nkind: Thing\nmetadata: {name: t}\nspec: {z: 0}\nstatus:\n",
    }),
    "explicit_null_tags": same({
        K: "resources: [t.yaml]\npatches:\n" + SMP_THING,
        "t.yaml": "apiVersion: example.com/v1\nkind: Thing\nmetadata: {name: t}\nspec:\n"
                  "  a: !!null\n  b: !!null null\n  c: !!null ''\n",
    }),
    "anchors_and_aliases": same({
        K: "resources: [t.yaml]\npatches:\n" + SMP_THING,
        "t.yaml": "apiVersion: example.com/v1\nkind: Thing\nmetadata: {name: t}\nspec:\n"
                  "  a: &x\n  b: *x\n  m: &m {p: }\n  n: *m\n",
    }),
    "merge_keys": same({
        K: "resources: [t.yaml]\npatches:\n" + SMP_THING,
        "t.yaml": "apiVersion: example.com/v1\nkind: Thing\nmetadata: {name: t}\nspec:\n"
                  "  base: &b {p: , q: 1}\n  derived:\n    <<: *b\n    r:\n",
    }),
    **{f"transformers_over_{name}_nulls_{t}": same({K: "resources: [d.yaml]\n" + field,
                                                    "d.yaml": _deployment_meta(meta)})
       for name, meta in (("bare", "  labels:\n  annotations:\n  namespace:\n"),
                          ("spelled", "  labels: null\n  annotations: null\n  namespace: null\n"),
                          ("flow", "  labels: {a: }\n  annotations: {b: }\n"))
       for t, field in (("labels", "commonLabels: {team: x}\n"), ("annotations", "commonAnnotations: {note: x}\n"),
                        ("namespace", "namespace: prod\n"), ("prefix", "namePrefix: p-\n"))},
    "replicas_over_a_bare_null": same({
        K: "resources: [d.yaml]\nreplicas:\n- {name: app, count: 3}\n",
        "d.yaml": _deployment_meta("").replace("spec:\n  selector", "spec:\n  replicas:\n  selector"),
    }),
    "images_over_null_images": same({
        K: "resources: [d.yaml]\nimages:\n- {name: x, newTag: '2'}\n",
        "d.yaml": _deployment_meta("").replace("      - {name: c, image: x}\n",
                                               "      - {name: c, image: x}\n      - {name: d, image: }\n"
                                               "      - {name: e, image: null}\n"),
    }),
    **{f"generator_merge_reads_{kind}_{name}_as_text": same(_merged(field, value, kind, generator))
       for name, value in (("spelled_null", "null"), ("tilde", "~"), ("bare_null", ""), ("int", "1"),
                           ("bool", "true"), ("float", "1.50"), ("date", "2001-12-14"), ("hex", "0x1F"))
       for kind, generator, field in (("ConfigMap", "configMapGenerator", "data"),
                                      ("Secret", "secretGenerator", "data"))},
    "generator_merge_reads_binary_data_as_text": same(_merged("binaryData", "1")),
    "generator_replace_keeps_nothing_of_the_old_data": same(_merged("data", "1.50", behavior="replace")),
    "generator_merge_reads_old_labels_as_text": same({
        K: "resources: [o.yaml]\nconfigMapGenerator:\n- {name: o, behavior: merge, literals: [b=2]}\n",
        "o.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: o\n  labels: {v: 1, w: 2.50, n: , s: x}\n"
                  "data: {a: x}\n",
    }),
}
