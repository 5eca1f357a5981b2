"""Differential fuzzer of patch sequences: a generated resource and a sequence of strategic merge
and JSON 6902 patches over it (tests/kustomize/patch_sequences.py), built by `kubectl kustomize`
and by trainerctl, compared byte for byte; where kubectl refuses, trainerctl refuses with one
line.

Each hypothesis example is a batch of BATCH such examples, one kustomization directory each,
built together by one kubectl process (a root kustomization listing them). An example trainerctl
refuses is left out of the batch and given to kubectl alone, which must refuse it too; when the
batch differs, each example is built alone to name the one that does.

Fixed seed (derandomize). TRAINERCTL_HYPOTHESIS_EXAMPLES examples (default 400, what CI runs);
run longer with e.g. `TRAINERCTL_HYPOTHESIS_EXAMPLES=20000 pytest tests/kustomize/test_kustomize_patch_differential.py`.

Every difference the fuzzer found is a named case in NAMED below, built by both as well.
"""

from __future__ import annotations

import difflib
import os
import shutil
import tempfile
import textwrap
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from tests.kustomize import patch_sequences as ps
from tests.kustomize.test_kustomize_yaml_differential import _kubectl, _ours
from tests.support.kustomize_cases import write_tree

BATCH = 10
EXAMPLES = int(os.environ.get("TRAINERCTL_HYPOTHESIS_EXAMPLES", "400"))
# No shrinking: each step would run kubectl again; a failure names its one example (of BATCH).
FUZZ = settings(max_examples=max(1, EXAMPLES // BATCH), derandomize=True, deadline=None,
                database=None, suppress_health_check=list(HealthCheck),
                phases=[Phase.explicit, Phase.generate])


def _write(root: Path, tree: dict[str, str]) -> Path:
    shutil.rmtree(root, ignore_errors=True)
    return write_tree(root, tree)


def _show(tree: dict[str, str]) -> str:
    return "\n".join(f"--- {name}\n{text}" for name, text in sorted(tree.items()))


def assert_same(root: Path, tree: dict[str, str]) -> None:
    """kubectl and trainerctl build `tree` (written at `root`) to the same bytes, or both refuse
    (trainerctl with one line)."""
    _write(root, tree)
    ref, (code, out) = _kubectl(root), _ours(root)
    if ref.returncode == 0:
        assert code == 0, f"trainerctl refused what kubectl builds: {out}\n{_show(tree)}"
        if out != ref.stdout:
            diff = "".join(difflib.unified_diff(ref.stdout.splitlines(True), out.splitlines(True),
                                                "kubectl", "trainerctl"))
            pytest.fail(f"trainerctl printed other bytes:\n{diff}\n{_show(tree)}")
    else:
        assert code == 2 and "\n" not in out.strip(), \
            f"kubectl refused ({ref.stderr.strip()[-300:]}), trainerctl: {out[:2000]}\n{_show(tree)}"


def check_batch(examples) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        trees = [ps.files(ex, f"e{i}") for i, ex in enumerate(examples)]
        batched = []
        for i, tree in enumerate(trees):
            code, out = _ours(_write(root / f"e{i}", tree))
            if code:
                assert_same(root / "alone", tree)  # kubectl must refuse it too
            else:
                batched.append(i)
        if not batched:
            return
        top = "resources:\n" + "".join(f"- e{i}\n" for i in batched)
        (root / "kustomization.yaml").write_text(top)
        ref, (code, out) = _kubectl(root), _ours(root)
        if ref.returncode == 0 and code == 0 and out == ref.stdout:
            return
        for i in batched:
            assert_same(root / "alone", trees[i])
        pytest.fail(f"the batch differs but no example alone does:\nkubectl: {ref.stderr[-600:]}\n"
                    f"trainerctl: {out[:600]}")


@FUZZ
@given(st.lists(ps.example(), min_size=BATCH, max_size=BATCH))
def test_patch_sequences_apply_as_kubectl_applies_them(examples):
    check_batch(examples)


# -- what the fuzzer found ----------------------------------------------------------------------

def _tree(kustomization: str, **files: str) -> dict[str, str]:
    return {"kustomization.yaml": kustomization,
            **{name.replace("_yaml", ".yaml"): text for name, text in files.items()}}


def _deployment(pod_spec: str, name: str = "m") -> str:
    """A Deployment (or a patch of one) with `pod_spec` (YAML at column 0) as its pod's spec."""
    return (f"apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: {name}}}\n"
            "spec:\n  template:\n    spec:\n" + textwrap.indent(textwrap.dedent(pod_spec), " " * 6))


BY_ID = "resources: [r.yaml]\npatches:\n- path: p.yaml\n"
TARGETED = "resources: [r.yaml]\npatches:\n- path: p.yaml\n  target: {name: c}\n"
CM_NULLS = """
    apiVersion: v1
    kind: ConfigMap
    metadata:
      name: c
      annotations: {cert-manager.io/inject-ca-from: ns/cert, keep: x, a: null, b: ~, c: }
    """
CM_NULL_PATCH = """
    apiVersion: v1
    kind: ConfigMap
    metadata:
      name: c
      annotations:
        cert-manager.io/inject-ca-from: null
        keep: ~
        new:
    """

NAMED = {
    # The first seed: a null in a patch deletes the annotation (it printed "null").
    "null_in_patch_deletes_an_annotation": _tree(BY_ID, r_yaml=CM_NULLS, p_yaml=CM_NULL_PATCH),
    # Through a target (or patchesStrategicMerge) kustomize first sets the patch's annotations
    # again from their text: there the null is the string "null".
    "null_in_targeted_patch_is_its_text": _tree(TARGETED, r_yaml=CM_NULLS, p_yaml=CM_NULL_PATCH),
    "null_in_legacy_patch_is_its_text": _tree(
        "resources: [r.yaml]\npatchesStrategicMerge: [p.yaml]\n", r_yaml=CM_NULLS,
        p_yaml=CM_NULL_PATCH),
    # The second seed: env entries a JSON patch appends again collapse into one per
    # name (the last's value, the first's place) when a later merge walks the container.
    "duplicates_appended_by_json_collapse_in_a_merge": _tree(
        "resources: [r.yaml]\npatches:\n- path: add.yaml\n  target: {kind: Deployment}\n"
        "- path: p.yaml\n",
        r_yaml=_deployment("""
            containers:
            - name: manager
              image: img:1
              env: [{name: METRICS_ADDR, value: ":8080"}, {name: ENABLE_LEADER_ELECTION, value: "true"}]
            """),
        add_yaml="""
            - {op: add, path: /spec/template/spec/containers/0/env/-, value: {name: METRICS_ADDR, value: ":9090"}}
            - {op: add, path: /spec/template/spec/containers/0/env/-, value: {name: ENABLE_LEADER_ELECTION, value: "false"}}
            """,
        p_yaml=_deployment("containers: [{name: manager, env: [{name: OTHER, value: '1'}]}]")),
    # A merge walks the whole target: duplicates collapse where the patch does not reach too.
    "duplicates_collapse_where_the_patch_does_not_reach": _tree(
        BY_ID,
        r_yaml=_deployment("""
            containers:
            - {name: a, image: "1", env: [{name: A, value: "1"}, {name: B}, {name: A, value: "2"}]}
            - {name: a, image: "2"}
            """),
        p_yaml="apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: m, labels: {l: x}}\n"),
    # An element without the merge key takes every keyed element of the target with it.
    "element_without_key_wipes_the_keyed_ones": _tree(
        BY_ID, r_yaml=_deployment("containers: [{name: a, image: '1'}, {image: '2'}, {name: b}]"),
        p_yaml=_deployment("containers: [{name: a, image: '9'}]")),
    # A key written as nothing matches an empty key value.
    "key_written_as_nothing": _tree(
        BY_ID,
        r_yaml="apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n"
               "  ownerReferences: [{uid: u1, name: a}]\n",
        p_yaml="apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  ownerReferences:\n"
               "  - {}\n  - name: b\n    uid:\n  - {name: c, uid: u2, kind: }\n"),
    # Ports merge by containerPort and protocol; one without its protocol meets one with it.
    "ports_with_and_without_protocol": _tree(
        BY_ID,
        r_yaml=_deployment("""
            containers:
            - name: a
              ports: [{containerPort: 80, protocol: TCP, name: a}, {containerPort: 81, protocol: TCP, name: b},
                      {containerPort: 82, name: c}]
            """),
        p_yaml=_deployment("""
            containers:
            - name: a
              ports: [{containerPort: 81, protocol: TCP, name: bb}, {containerPort: 90, protocol: UDP},
                      {containerPort: 82, name: cc}, {containerPort: 80}]
            """)),
    # A key written twice: kyaml reads nodes, the first is the field. Annotations are set
    # again from the last before the object is written; anywhere else go-yaml refuses it then.
    "keys_written_twice": _tree(
        "resources: [r.yaml]\npatches:\n- path: p.yaml\n- path: q.yaml\n",
        r_yaml="apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  annotations:\n"
               "    a: first\n    b: x\n    a: last\n    c: one\n    c: two\ndata: {k: v}\n",
        p_yaml="apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  annotations:\n"
               "    a: patched\n    c: null\n    d: p1\n    d: p2\ndata:\n  k: first\n  k: second\n",
        q_yaml="apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, labels: {a: b}}\n"),
    "key_written_twice_left_in_data": _tree(
        BY_ID, r_yaml="apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {k: v}\n",
        p_yaml="apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\nbinaryData:\n"
               "  k: djE=\n  k: djI=\n"),
    # kyaml merges into the target's nodes; `$patch: replace` at the top leaves them alone.
    "replace_at_the_top_changes_nothing": _tree(
        BY_ID, r_yaml="apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {a: b}\n",
        p_yaml="apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, labels: {x: y}}\n"
               "data: {c: d}\n$patch: replace\n"),
    # A value replacing a quoted one takes its style: it reads back as a string (quoted without
    # need too); a string set where a plain value was is plain, and what replaces it next keeps
    # its type.
    "value_replacing_a_quoted_one_is_a_string": _tree(
        "resources: [r.yaml]\npatches:\n- path: p.yaml\n- path: q.yaml\n",
        r_yaml=_deployment("""
            containers:
            - {name: a, env: [{name: A, value: "true"}, {name: B, value: plain}, {name: C, value: "8080"},
                              {name: D, value: "web"}, {name: E, value: false}]}
            """),
        p_yaml=_deployment("""
            containers:
            - {name: a, env: [{name: A, value: false}, {name: B, value: 1}, {name: C, value: 9090},
                              {name: D, value: 5}, {name: E, value: "true"}]}
            """),
        q_yaml=_deployment("containers: [{name: a, env: [{name: E, value: 7}]}]")),
    # A JSON patch takes the object through JSON: null annotations are "null" after it, and
    # the patch sees kustomize's own annotations (the previous ids it stores first).
    "json_patch_spells_null_annotations": _tree(
        "resources: [r.yaml]\npatches:\n- path: p.yaml\n  target: {kind: ConfigMap}\n",
        r_yaml=CM_NULLS,
        p_yaml='[{"op": "copy", "from": "/metadata/annotations", "path": "/data"}]\n'),
    # json-patch crashes comparing arrays that hold a null: refused by both.
    "json_test_of_an_array_with_a_null": _tree(
        "resources: [r.yaml]\npatches:\n- path: p.yaml\n  target: {kind: ConfigMap}\n",
        r_yaml="apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {a: [x, null]}\n",
        p_yaml='[{"op": "test", "path": "/data/a", "value": ["x", null]}]\n'),
    # A null an operation's value puts there is a node to json-patch, unlike one it read:
    # testing the object that holds it against a null there fails (refused by both).
    "json_test_after_a_null_was_added": _tree(
        "resources: [r.yaml]\npatches:\n- path: p.yaml\n  target: {kind: ConfigMap}\n",
        r_yaml="apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {a: null}\n",
        p_yaml='[{"op": "test", "path": "/data", "value": {"a": null}},'
               ' {"op": "add", "path": "/data/b", "value": null},'
               ' {"op": "test", "path": "/data", "value": {"a": null, "b": null}}]\n'),
    # After a JSON patch kustomize holds the previous ids in the annotations, where a later
    # merge meets them: an unknown `$patch` there is refused by both.
    "merge_meets_the_annotations_kustomize_keeps": _tree(
        "resources: [r.yaml]\npatches:\n- path: j.yaml\n  target: {kind: ConfigMap}\n"
        "- path: p.yaml\n",
        r_yaml="apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n",
        j_yaml='[{"op": "add", "path": "/data", "value": {"a": "b"}}]\n',
        p_yaml="apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n"
               "  annotations: {$patch: bogus}\n"),
    # An object a JSON patch leaves without a name: refused by both.
    "json_patch_removing_the_name": _tree(
        "resources: [r.yaml]\npatches:\n- path: p.yaml\n  target: {kind: ConfigMap}\n",
        r_yaml="apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n",
        p_yaml='[{"op": "remove", "path": "/metadata/name"}]\n'),
    # Annotations that are not a map, as kyaml reads them: a scalar is none, a list is pairs.
    "annotations_that_are_not_a_map": _tree(
        "resources: [r.yaml]\n",
        r_yaml="apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, annotations: x}\n---\n"
               "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: d, annotations: [a, 1, b, {x: 1}]}\n"),
}


@pytest.mark.parametrize("name", sorted(NAMED))
def test_named_example(name, tmp_path):
    assert_same(tmp_path / "k", NAMED[name])
