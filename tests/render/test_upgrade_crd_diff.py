"""CRD diff on the real upstream CRDs: the expected differences are computed here from the two
files by a deliberately different method (flattening every key path of the YAML), then compared
with what trainerctl.upgrade reports."""

from __future__ import annotations

import copy

import pytest

from tests.support.upgrade_cases import load_crds, oracle
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
    text = report.text()
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
