"""Golden values of kustomize's behaviour, over the trees of tests/support/kustomize_cases/behaviour.py
(each of which test_kustomize_fixtures also compares with the real kubectl kustomize)."""

from __future__ import annotations

from tests.support.kustomize_cases import behaviour, openapi
from trainerctl.kustomize import build, build_yaml

CASES = behaviour.CASES


def _built(tmp_path, name: str) -> list[dict]:
    root = tmp_path / name
    CASES[name].write(root)
    return build(str(root))


def _by_name(objs):
    return {(o["kind"], o["metadata"]["name"]): o for o in objs}


def test_golden_generator_hashes(tmp_path):
    # Values printed by kustomize v5.8.1 for these inputs.
    assert [o["metadata"]["name"] for o in _built(tmp_path, "golden_generator_hash")] == ["cm-b5g875c65k"]


def test_yaml11_words_are_quoted(tmp_path):
    root = tmp_path / "q"
    CASES["yaml11_words_are_quoted"].write(root)
    out = build_yaml(str(root))
    for line in ['a: "yes"', 'b: "on"', 'c: "0400"', 'd: "01234"', 'e: "y"', 'f: "true"', 'g: "1e3"']:
        assert f"  {line}\n" in out


def test_nulls_kept_from_resources_and_deleted_by_patches(tmp_path):
    (obj,) = _built(tmp_path, "nulls_kept_from_resources_and_deleted_by_patches")
    assert obj["spec"] == {"a": None, "b": 1}


def test_replacement_index_and_name_selector_paths(tmp_path):
    objs = _by_name(_built(tmp_path, "replacements_paths_options"))
    rt = objs[("ClusterTrainingRuntime", "rt")]
    jobs = rt["spec"]["template"]["spec"]["replicatedJobs"]
    assert jobs[0]["template"]["spec"]["containers"][0]["image"] == "keep"
    assert [c["image"] for c in jobs[1]["template"]["spec"]["containers"]] == ["keep", "quay.io/org/img:v1"]
    dep = objs[("Deployment", "app")]
    assert dep["spec"]["template"]["spec"]["containers"][0]["image"] == "quay.io/org/img:v9"
    assert dep["metadata"]["annotations"]["registry"] == "quay.io"


def test_strategic_merge_list_order(tmp_path):
    dep = _by_name(_built(tmp_path, "strategic_merge_lists_and_directives"))[("Deployment", "app")]
    spec = dep["spec"]["template"]["spec"]
    assert [c["name"] for c in spec["containers"]] == ["sidecar", "main"]
    main = spec["containers"][1]
    assert main["args"] == ["c"]  # no merge strategy: replaced
    assert [e["name"] for e in main["env"]] == ["B", "FROM_CM"]
    assert [p["containerPort"] for p in main["ports"]] == [9090, 80]
    assert main["securityContext"] == {"runAsNonRoot": True}
    assert [v["name"] for v in spec["volumes"]] == ["conf"]
    assert "serviceAccountName" not in spec
    assert dep["metadata"]["finalizers"] == ["f1"]


def test_custom_schema_does_not_outlive_its_build(tmp_path):
    """kustomize keeps the `openapi` schema in process-wide state; trainerctl's lasts one build."""
    custom = tmp_path / "custom"
    openapi.CASES["scope_from_schema_paths"].write(custom)
    gadget = next(o for o in build(str(custom)) if o["kind"] == "Gadget")
    assert "namespace" not in gadget["metadata"]  # cluster-scoped by the schema's paths
    (gadget,) = _built(tmp_path, "custom_kind_is_namespaced_without_a_schema")
    assert gadget["metadata"]["namespace"] == "prod"
