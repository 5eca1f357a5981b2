"""CRD diff on the real upstream CRDs: the expected differences are computed here from the two
files by a deliberately different method (flattening every key path of the YAML), then compared
with what trainerctl.upgrade reports."""

from __future__ import annotations

import copy
import re
from pathlib import Path

import pytest
import yaml

from trainerctl.upgrade import check
from trainerctl.upgrade.crd_diff import (
    FIELD_REMOVED,
    FIELD_REQUIRED,
    SERVED_VERSION_REMOVED,
    STORED_VERSION_UNSERVED,
    VALIDATION_ADDED,
    VALIDATION_CHANGED,
    VALIDATION_REMOVED,
    diff_crd,
    is_immutability_rule,
)

PAIRS = [
    ("kubeflow-trainer/v2.2.0", "kubeflow-trainer/v2.3.0"),
    ("kubeflow-trainer/v2.0.0", "kubeflow-trainer/v2.3.0"),
    ("opendatahub-trainer/odh-3.4.0", "opendatahub-trainer/odh-3.5.0"),
    ("opendatahub-trainer/odh-3.5.0", "opendatahub-trainer/main-d140e85"),
]


def load_crds(shared: Path, ref: str) -> list[dict]:
    out = []
    for f in sorted((shared / "upstream" / ref / "manifests" / "base" / "crds").glob("*.yaml")):
        if f.name == "kustomization.yaml":
            continue
        out += [d for d in yaml.load_all(f.read_text(), Loader=yaml.CSafeLoader) if d]
    return out


# --- the independent oracle ------------------------------------------------------------------

def flatten(node, pointer=()):
    """Every (key path, value) pair of a YAML document, lists indexed by position."""
    yield pointer, node
    if isinstance(node, dict):
        for k, v in node.items():
            yield from flatten(v, pointer + (k,))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from flatten(v, pointer + (i,))


def field_path(pointer: tuple) -> str | None:
    """Key path below openAPIV3Schema -> field path, or None when the path is not a schema node
    reached only through properties/<name>, items and additionalProperties."""
    out, i = "", 0
    while i < len(pointer):
        step = pointer[i]
        if step == "properties" and i + 1 < len(pointer):
            out = f"{out}.{pointer[i + 1]}" if out else str(pointer[i + 1])
            i += 2
        elif step == "items":
            out += "[*]"
            i += 1
        elif step == "additionalProperties":
            out = f"{out}.*" if out else "*"
            i += 1
        else:
            return None
    return out


def schema_of(crd: dict, version: str) -> dict:
    v = next(v for v in crd["spec"]["versions"] if v["name"] == version)
    return v["schema"]["openAPIV3Schema"]


def oracle(live: dict, target: dict, version: str):
    def index(schema):
        fields, rules, required = set(), set(), set()
        for pointer, value in flatten(schema):
            if pointer and pointer[-1] == "x-kubernetes-validations":
                path = field_path(pointer[:-1])
                if path is not None:
                    rules |= {(path or "<root>", r["rule"]) for r in value}
            elif len(pointer) >= 1 and pointer[-1] == "required" and isinstance(value, list):
                path = field_path(pointer[:-1])
                if path is not None:
                    required |= {f"{path}.{n}" if path else n for n in value}
            elif isinstance(value, dict):
                path = field_path(pointer)
                if path:
                    fields.add(path)
        return fields, rules, required

    lf, lr, lq = index(schema_of(live, version))
    tf, tr, tq = index(schema_of(target, version))
    gone = lf - tf
    # report only the top of each removed subtree
    removed = {p for p in gone if not any(p.startswith(q + ".") or p.startswith(q + "[") for q in gone if q != p)}
    # a newly required field under a parent that did not exist before binds nobody
    newly_required = {p for p in tq - lq if re.sub(r"(\.[^.\[]+|\[\*\])$", "", p) in lf | {""}}
    # rules of a removed field go with it (the field-removed finding covers them)
    dropped_rules = {(p, r) for p, r in lr - tr if p not in gone}
    return removed, tr - lr, dropped_rules, newly_required


@pytest.mark.parametrize("old_ref,new_ref", PAIRS)
def test_real_crd_diff_matches_oracle(shared_dir, old_ref, new_ref):
    live_crds = {c["metadata"]["name"]: c for c in load_crds(shared_dir, old_ref)}
    target_crds = {c["metadata"]["name"]: c for c in load_crds(shared_dir, new_ref)}
    assert live_crds.keys() <= target_crds.keys()
    for name, live in live_crds.items():
        target = target_crds[name]
        findings = diff_crd(live, target)
        removed, added_rules, removed_rules, required = oracle(live, target, "v1alpha1")
        got_removed = {f.path for f in findings if f.kind == FIELD_REMOVED}
        got_added = {(f.path, f.rule) for f in findings if f.kind in (VALIDATION_ADDED, VALIDATION_CHANGED)}
        got_dropped = {(f.path, f.rule) for f in findings if f.kind == VALIDATION_REMOVED} | {
            (f.path, f.old_rule) for f in findings if f.kind == VALIDATION_CHANGED}
        got_required = {f.path for f in findings if f.kind == FIELD_REQUIRED}
        assert got_removed == removed, name
        assert got_added == added_rules, name
        assert got_dropped == removed_rules, name
        assert got_required == required, name
        for f in findings:
            if f.rule:
                assert f.immutable == ("self == oldSelf" in f.rule or "oldSelf == self" in f.rule)
        assert not any(f.blocking for f in findings)


def test_v22_to_v23_known_changes(shared_dir):
    """Spot-check the differences a reader of the v2.3.0 release can confirm by eye."""
    report = check(load_crds(shared_dir, "kubeflow-trainer/v2.2.0"),
                   load_crds(shared_dir, "kubeflow-trainer/v2.3.0"), {})
    by = {(f.crd.split(".")[0], f.kind, f.path): f for f in report.findings}
    grace = by[("trainjobs", VALIDATION_ADDED,
                "spec.runtimePatches[*].trainingRuntimeSpec.template.spec.replicatedJobs[*]"
                ".template.spec.template.spec.terminationGracePeriodSeconds")]
    assert grace.immutable and grace.rule == "self == oldSelf"
    assert ("trainjobs", VALIDATION_ADDED, "spec.initializer.dataset.storageUri") in by
    assert ("trainingruntimes", FIELD_REMOVED,
            "spec.template.spec.replicatedJobs[*].template.spec.template.spec.workloadRef") in by
    assert not report.blocking  # nothing installed uses the removed field
    text = report.to_text()
    assert "immutability rule" in text and "self == oldSelf" in text
    assert "result: nothing blocks the upgrade" in text


def test_identical_crds_report_nothing(shared_dir):
    crds = load_crds(shared_dir, "opendatahub-trainer/odh-3.4.0")
    report = check(crds, copy.deepcopy(crds), {})
    assert report.findings == [] and not report.blocking
    assert len(report.compared) == 3


def test_immutability_detection():
    assert is_immutability_rule("self == oldSelf")
    assert is_immutability_rule("oldSelf == self")
    assert is_immutability_rule("!has(oldSelf.x) || self == oldSelf")
    assert not is_immutability_rule("self.size() <= oldSelf.size()")
    assert not is_immutability_rule("self == 'x'")


def test_served_and_stored_versions():
    def crd(*versions, stored=()):
        return {
            "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "things.example.io"},
            "spec": {"group": "example.io", "versions": [
                {"name": n, "served": s, "storage": st, "schema": {"openAPIV3Schema": {"type": "object"}}}
                for n, s, st in versions]},
            "status": {"storedVersions": list(stored)},
        }

    live = crd(("v1alpha1", True, False), ("v1", True, True), stored=["v1alpha1", "v1"])
    # v1alpha1 kept but not served: blocking (stored objects), and a served version removed
    f1 = diff_crd(live, crd(("v1alpha1", False, False), ("v1", True, True)))
    kinds = {(f.kind, f.version, f.blocking) for f in f1}
    assert (STORED_VERSION_UNSERVED, "v1alpha1", True) in kinds
    assert (SERVED_VERSION_REMOVED, "v1alpha1", False) in kinds
    # dropped from spec.versions entirely: the API server would reject the update
    f2 = diff_crd(live, crd(("v1", True, True)))
    stored = [f for f in f2 if f.kind == STORED_VERSION_UNSERVED]
    assert stored and "rejects the CRD update" in stored[0].detail
    # a served version that was never stored: not blocking
    live2 = crd(("v1alpha1", True, False), ("v1", True, True), stored=["v1"])
    assert not any(f.blocking for f in diff_crd(live2, crd(("v1", True, True))))
