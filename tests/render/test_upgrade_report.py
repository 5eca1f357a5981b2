"""Usage scan and report on a hand-edited target CRD (pure: no cluster)."""

from __future__ import annotations

import json

from trainerctl.upgrade import check
from trainerctl.upgrade.crd_diff import FIELD_REMOVED, FIELD_REQUIRED, STORED_VERSION_UNSERVED, VALIDATION_ADDED
from trainerctl.upgrade.usage import has_path, split_path
from tests.support.upgrade_cases import REMOVED_NESTED, REMOVED_TOP, TRAINJOBS, fixture_trainjobs, load_crds, target_dropping_stored_version, target_removing_fields


def live_crds(shared_dir):
    crds = load_crds(shared_dir, "opendatahub-trainer/odh-3.4.0")
    for c in crds:  # what the API server records once objects are written
        c["status"] = {"storedVersions": ["v1alpha1"]}
    return crds


def test_split_and_match_paths():
    assert split_path("spec.trainer.env[*].valueFrom") == ["spec", "trainer", "env", "[*]", "valueFrom"]
    assert split_path("spec.labels.*") == ["spec", "labels", "*"]
    obj = {"spec": {"trainer": {"env": [{"name": "a"}, {"name": "b", "valueFrom": {}}]}, "labels": {"x": "y"}}}
    assert has_path(obj, split_path("spec.trainer.env[*].valueFrom"))
    assert not has_path(obj, split_path("spec.trainer.env[*].value"))
    assert has_path(obj, split_path("spec.labels.*"))
    assert not has_path({"spec": {"labels": {}}}, split_path("spec.labels.*"))


def test_removed_field_in_use_blocks_and_names_objects(shared_dir):
    live = live_crds(shared_dir)
    report = check(live, target_removing_fields(live), {TRAINJOBS: fixture_trainjobs("team-a")})
    removed = {f.path for f in report.findings if f.kind == FIELD_REMOVED}
    assert removed == {REMOVED_TOP, REMOVED_NESTED}
    assert {(u.ref, u.path, u.finding) for u in report.usages} == {
        ("team-a/overrides", REMOVED_TOP, FIELD_REMOVED), ("team-a/secret-env", REMOVED_NESTED, FIELD_REMOVED),
        ("team-a/no-trainer", "spec.trainer", FIELD_REQUIRED)}
    assert [f.path for f in report.findings if f.kind == FIELD_REQUIRED] == ["spec.trainer"]
    rule = next(f for f in report.findings if f.kind == VALIDATION_ADDED)
    assert rule.path == "spec.trainer.image" and rule.immutable and rule.message == "image is immutable"
    # data in a removed field is pruned: used removed fields block
    assert report.blocking and report.exit_code == 1
    text = report.text()
    assert f"BLOCKING field removed: v1alpha1 {REMOVED_TOP}" in text
    assert "TrainJob team-a/overrides" in text and "TrainJob team-a/secret-env" in text
    assert "immutability rule" in text
    assert "missing in 1 object(s); their next update is rejected" in text
    data = json.loads(report.to_json())
    assert data["blocking"] is True
    top = next(f for f in data["findings"] if f.get("path") == REMOVED_TOP)
    assert top["usedBy"] == ["team-a/overrides"] and top["blocking"] is True
    required = next(f for f in data["findings"] if f["kind"] == FIELD_REQUIRED)
    assert required["lackedBy"] == ["team-a/no-trainer"] and required["blocking"] is False


def test_removed_field_unused_does_not_block(shared_dir):
    live = live_crds(shared_dir)
    report = check(live, target_removing_fields(live), {TRAINJOBS: fixture_trainjobs("team-a")[:1]})
    assert any(f.kind == FIELD_REMOVED for f in report.findings)
    assert report.usages == [] and not report.blocking and report.exit_code == 0
    assert "used by no existing object" in report.text()


def test_dropping_stored_version_blocks(shared_dir):
    live = live_crds(shared_dir)
    report = check(live, target_dropping_stored_version(live), {})
    stored = [f for f in report.findings if f.kind == STORED_VERSION_UNSERVED]
    assert [(f.crd, f.version) for f in stored] == [(TRAINJOBS, "v1alpha1")]
    assert report.blocking and report.exit_code == 1
    assert json.loads(report.to_json())["blocking"] is True


def test_crd_dropped_from_target_is_reported_not_blocking(shared_dir):
    live = live_crds(shared_dir)
    target = [c for c in live if c["metadata"]["name"] != TRAINJOBS]
    report = check(live, target, {})
    assert [(f.crd, f.kind) for f in report.findings] == [(TRAINJOBS, "crd-removed")]
    assert not report.blocking


def test_fresh_install_has_nothing_to_compare(shared_dir):
    report = check([], load_crds(shared_dir, "opendatahub-trainer/odh-3.5.0"), {})
    assert not report.findings and not report.blocking
    assert "fresh install" in report.text()
