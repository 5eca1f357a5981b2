"""Existing objects checked against the target's schema, on the real Trainer 2.1 -> 2.2 CRDs
(pure: plain dicts in, report out), and the TrainJobs converted to the 2.2 API."""

from __future__ import annotations

import copy
import json

import pytest

from tests.support.upgrade_cases import TRAINJOBS, load_crds, trainjob
from trainerctl.owner_label import DEFAULT_OWNER_LABEL
from trainerctl.upgrade import UpgradeBlocked, check
from trainerctl.upgrade.crd_diff import FIELD_REMOVED, NOT_CHECKED, OBJECT_REJECTED, TYPE_CHANGED
from trainerctl.upgrade.schema.validate import validate
from trainerctl.upgrade.trainer_migration import LABELS_MANAGER, OVERRIDE_MANAGER, convert, state_of

COMPLETE = {"conditions": [{"type": "Complete", "status": "True", "reason": "JobsCompleted", "message": "",
                            "lastTransitionTime": "2026-08-21T09:40:12Z"}]}


def crds(shared_dir, ref: str) -> list[dict]:
    out = load_crds(shared_dir, ref)
    for c in out:
        c["status"] = {"storedVersions": ["v1alpha1"]}
    return out


def the_story(ns: str = "bar-s") -> list[dict]:
    """The issue's three TrainJobs: numProcPerNode auto (suspended), podTemplateOverrides, a clean one."""
    auto = trainjob("tj-auto", ns, {"suspend": True, "trainer": {"numProcPerNode": "auto"}})
    overrides = trainjob("tj-overrides", ns, {"podTemplateOverrides": [{
        "targetJobs": [{"name": "node"}], "metadata": {"labels": {"team": "a"}},
        "spec": {"nodeSelector": {"pool": "gpu"}, "containers": [{"name": "node", "env": [{"name": "X", "value": "1"}]}]},
    }]})
    overrides["status"] = COMPLETE
    return [auto, overrides, trainjob("tj-clean", ns)]


@pytest.fixture(scope="module")
def v21_to_v22(shared_dir):
    return crds(shared_dir, "kubeflow-trainer/v2.1.0"), crds(shared_dir, "kubeflow-trainer/v2.2.0")


def test_the_story_blocks_on_exactly_the_two_naming_field_value_and_fix(v21_to_v22):
    old, new = v21_to_v22
    report = check(old, new, {TRAINJOBS: the_story()})
    assert report.blocking
    [rejected] = report.rejections
    assert (rejected.ref, rejected.field, rejected.value) == ("bar-s/tj-auto", "spec.trainer.numProcPerNode", "auto")
    assert rejected.reason == 'must be of type integer: "string"'
    removed = next(f for f in report.findings if f.kind == FIELD_REMOVED and f.path == "spec.podTemplateOverrides")
    assert report.is_blocking(removed) and [u.ref for u in report.usages_of(removed)] == ["bar-s/tj-overrides"]
    assert {f.kind for f in report.blocking_findings} == {OBJECT_REJECTED, FIELD_REMOVED}
    assert any(f.kind == TYPE_CHANGED and f.detail == "type changed from int-or-string to integer"
               for f in report.findings)
    assert [(a.ref, a.state) for a in report.advice] == [("bar-s/tj-auto", "suspended"),
                                                           ("bar-s/tj-overrides", "finished (Complete)")]
    text = report.text()
    assert "BLOCKING stored value rejected by the target: v1alpha1 spec.trainer.numProcPerNode" in text
    assert "TrainJob bar-s/tj-auto: spec.trainer.numProcPerNode: 'auto': must be of type integer" in text
    assert "TrainJob bar-s/tj-auto: suspended: delete it before the upgrade, and after it re-create it converted" in text
    assert "tj-clean" not in text
    data = json.loads(report.to_json())
    assert data["rejected"][0]["field"] == "spec.trainer.numProcPerNode" and data["rejected"][0]["value"] == "'auto'"
    assert [a["object"] for a in data["advice"]] == ["bar-s/tj-auto", "bar-s/tj-overrides"]
    assert "TrainJob bar-s/tj-auto: spec.trainer.numProcPerNode" in str(UpgradeBlocked(report))


def test_the_reverse_upgrade_blocks_on_runtime_patches(v21_to_v22):
    old, new = v21_to_v22
    migrated = check(old, new, {TRAINJOBS: the_story()}).migrated
    patched = next(m.obj for m in migrated if m.name == "tj-overrides")
    report = check(new, old, {TRAINJOBS: [patched]})
    removed = next(f for f in report.findings if f.kind == FIELD_REMOVED and f.path == "spec.runtimePatches")
    assert report.is_blocking(removed) and report.advice[0].ref == "bar-s/tj-overrides"
    assert str(UpgradeBlocked(report)).startswith(
        "upgrade blocked by 1 change(s), first: TrainJob bar-s/tj-overrides sets spec.runtimePatches, which the "
        "target's trainjobs.trainer.kubeflow.org v1alpha1 no longer has (its value would be pruned)")


def test_objects_the_install_applies_itself_do_not_block(v21_to_v22):
    old, new = v21_to_v22
    job = trainjob("shipped", "kubeflow-system", {"trainer": {"numProcPerNode": "auto"},
                                                  "podTemplateOverrides": [{"targetJobs": [{"name": "node"}]}]})
    target = [*new, copy.deepcopy(job)]
    report = check(old, target, {TRAINJOBS: [job]})
    assert not report.blocking and not report.rejections and not report.advice
    assert all(u.replaced for u in report.usages) and "(the install replaces or prunes it)" in report.text()
    # one it installed before (ownership label) and the render no longer has: pruned, no block either
    job["metadata"]["labels"] = {"platform.opendatahub.io/part-of": "trainer"}
    assert check(old, new, {TRAINJOBS: [job]}).blocking
    assert not check(old, new, {TRAINJOBS: [job]}, owner_label=DEFAULT_OWNER_LABEL).blocking
    # the label as a session holds it (KEY=VALUE) is the same label; another value is not ours
    assert not check(old, new, {TRAINJOBS: [job]}, owner_label=str(DEFAULT_OWNER_LABEL)).blocking
    assert check(old, new, {TRAINJOBS: [job]}, owner_label=f"{DEFAULT_OWNER_LABEL.key}=other").blocking


def test_only_new_cel_rules_that_objects_reach_are_listed_as_not_checked(v21_to_v22):
    old, new = v21_to_v22
    new = copy.deepcopy(new)
    image = _v22_schema(new)["properties"]["spec"]["properties"]["trainer"]["properties"]["image"]
    image["x-kubernetes-validations"] = [{"rule": "self.startsWith('quay.io/')", "message": "quay only"}]
    job = trainjob("uses-image", "ns", {"trainer": {"image": "docker.io/x"}})
    job["status"] = {"trainerStatus": {"progressPercentage": 5}}  # a subresource: not re-created, not judged
    report = check(old, new, {TRAINJOBS: [job, trainjob("no-image", "ns")]})
    unchecked = [f for f in report.findings if f.kind == NOT_CHECKED]
    assert [(f.path, f.rule, f.message) for f in unchecked] == [
        ("spec.trainer.image", "self.startsWith('quay.io/')", "quay only")]
    assert "1 existing object(s) hold a value there" in unchecked[0].detail
    assert not report.is_blocking(unchecked[0]) and not report.blocking


def test_states(v21_to_v22):
    running = trainjob("r", "ns", {})
    assert state_of(running) == "running"
    assert state_of(trainjob("s", "ns", {"suspend": True})) == "suspended"
    failed = dict(running, status={"conditions": [dict(COMPLETE["conditions"][0], type="Failed")]})
    assert state_of(failed) == "finished (Failed)"
    assert state_of(dict(running, status={"conditions": "not a list"})) == "unknown"


def _v22_schema(new: list[dict]) -> dict:
    crd = next(c for c in new if c["metadata"]["name"] == TRAINJOBS)
    return crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]


def test_conversion_maps_every_removed_field_and_the_target_accepts_it(v21_to_v22):
    _, new = v21_to_v22
    schema = _v22_schema(new)
    job = trainjob("everything", "ns", {
        "labels": {"kueue.x-k8s.io/queue-name": "q"}, "annotations": {"note": "x"},
        "trainer": {"numProcPerNode": "4"},
        "podTemplateOverrides": [
            {"targetJobs": [{"name": "node"}, {"name": "launcher"}], "metadata": {"name": "ignored", "labels": {"a": "1"}},
             "spec": {"serviceAccountName": "sa", "volumes": [{"name": "data", "emptyDir": {}}]}},
            {"targetJobs": [{"name": "node"}], "metadata": {"labels": {"kueue.x-k8s.io/podset": "node"}},
             "spec": {"nodeSelector": {"flavor": "old"}}},
            {"targetJobs": [{"name": "node"}], "spec": {"tolerations": [{"key": "gpu", "operator": "Exists"}]}},
        ]})
    job["metadata"]["annotations"] = {"kubectl.kubernetes.io/last-applied-configuration": "{}", "keep": "me"}
    job["status"] = COMPLETE
    out, notes = convert(job, schema)
    assert validate(out, schema).valid
    assert out["metadata"] == {"name": "everything", "namespace": "ns", "annotations": {"keep": "me"}}
    assert "status" not in out and "podTemplateOverrides" not in out["spec"] and "labels" not in out["spec"]
    assert out["spec"]["trainer"] == {"numNodes": 1, "env": [{"name": "PLAIN", "value": "1"}], "numProcPerNode": 4}
    patches = out["spec"]["runtimePatches"]
    assert [p["manager"] for p in patches] == [LABELS_MANAGER, OVERRIDE_MANAGER.format(0), OVERRIDE_MANAGER.format(2)]
    assert patches[0]["trainingRuntimeSpec"]["template"]["metadata"] == {
        "labels": {"kueue.x-k8s.io/queue-name": "q"}, "annotations": {"note": "x"}}
    jobs = patches[1]["trainingRuntimeSpec"]["template"]["spec"]["replicatedJobs"]
    assert [j["name"] for j in jobs] == ["node", "launcher"]
    assert jobs[0]["template"]["spec"]["template"] == {
        "metadata": {"labels": {"a": "1"}}, "spec": {"serviceAccountName": "sa", "volumes": [{"name": "data", "emptyDir": {}}]}}
    assert any("written by Kueue" in n for n in notes) and any("'4' -> 4" in n for n in notes)


@pytest.mark.parametrize("value,kept", [("auto", None), ("gpu", None), ("cpu", None), ("8", 8), (3, 3)])
def test_num_proc_per_node(v21_to_v22, value, kept):
    _, new = v21_to_v22
    out, notes = convert(trainjob("j", "ns", {"trainer": {"numProcPerNode": value}}), _v22_schema(new))
    assert out["spec"]["trainer"].get("numProcPerNode") == kept
    assert bool(notes) == isinstance(value, str)


class _Pages:
    """A stand-in API server answering every list with `items` and, if `endless`, a continue token
    (a new one each page, or, `repeated`, the same one), listed through the client's own paging."""

    from trainerctl.cluster.client.client import Cluster

    pages = Cluster.pages
    server = "the stand-in"

    def __init__(self, items: int, endless: bool = False, repeated: bool = False):
        self.items, self.endless, self.repeated, self.calls = items, endless, repeated, 0

    def call(self, method, path, query=None, **_):
        self.calls += 1
        size = min(self.items, int(query["limit"]))
        token = ("more" if self.repeated else f"more-{self.calls}") if self.endless else None
        return 200, {"items": [{"metadata": {"name": f"o{self.calls}-{i}"}} for i in range(size)],
                     "metadata": {"continue": token}}


@pytest.mark.parametrize("items,endless", [(3, True), (600, False)])
def test_the_listing_is_bounded_by_what_the_user_allows_not_by_the_server(monkeypatch, v21_to_v22, items, endless):
    from trainerctl.upgrade.crd_diff import OBJECTS_UNREAD
    from trainerctl.upgrade.live import list_custom_objects

    monkeypatch.setenv("TRAINERCTL_MAX_UPGRADE_OBJECTS", "10")
    old, _ = v21_to_v22
    server = _Pages(items, endless)
    objects, unread = list_custom_objects(server, old, {TRAINJOBS: {"v1alpha1"}})
    assert server.calls <= 4 and len(objects.get(TRAINJOBS, [])) <= 10
    assert [(f.kind, f.blocking) for f in unread] == [(OBJECTS_UNREAD, True)]
    assert "TRAINERCTL_MAX_UPGRADE_OBJECTS" in unread[0].detail


@pytest.mark.parametrize("repeated", [True, False])
def test_a_list_that_never_ends_is_one_line_not_a_loop(monkeypatch, v21_to_v22, repeated):
    from trainerctl.errors import TrainerctlError
    from trainerctl.upgrade.live import list_custom_objects

    old, _ = v21_to_v22
    server = _Pages(0, endless=True, repeated=repeated)
    with pytest.raises(TrainerctlError, match="never end|did not end"):
        list_custom_objects(server, old, {TRAINJOBS: {"v1alpha1"}})
    assert server.calls <= (2 if repeated else 1000)


def test_an_object_whose_name_cannot_be_a_name_blocks_and_is_never_a_file(v21_to_v22, tmp_path):
    from trainerctl.upgrade import migrated_dir
    from trainerctl.upgrade.crd_diff import OBJECTS_UNREAD

    old, new = v21_to_v22
    hostile = trainjob("../../escape", "bar-s", {"trainer": {"numProcPerNode": "auto"}})
    report = check(old, new, {TRAINJOBS: [hostile]})
    [finding] = [f for f in report.findings if f.kind == OBJECTS_UNREAD]
    assert report.is_blocking(finding) and "metadata.name" in finding.detail and not report.rejections
    written, skipped = migrated_dir.write(tmp_path / "out", report.migrated, "")
    assert written == [] and not (tmp_path / "escape.yaml").exists()


def test_a_huge_value_is_shown_short(v21_to_v22):
    old, new = v21_to_v22
    report = check(old, new, {TRAINJOBS: [trainjob("big", "ns", {"trainer": {"numProcPerNode": "x" * 100_000}})]})
    line = report.rejections[0].line()
    assert len(line) < 200 and line.startswith("TrainJob ns/big: spec.trainer.numProcPerNode: 'xxx")


def test_write_migrated_never_writes_through_a_symlink(v21_to_v22, tmp_path):
    from trainerctl.errors import InputError
    from trainerctl.upgrade import migrated_dir

    old, new = v21_to_v22
    migrated = check(old, new, {TRAINJOBS: the_story()}).migrated
    outside = tmp_path / "outside"
    outside.mkdir()
    folder = tmp_path / "out"
    folder.mkdir()
    (folder / "bar-s").symlink_to(outside)
    with pytest.raises(InputError, match="bar-s is a symlink"):
        migrated_dir.write(folder, migrated, "")
    assert not any(outside.iterdir())
    (folder / "bar-s").unlink()
    (folder / "bar-s").mkdir()
    (folder / "bar-s" / "tj-auto.yaml").symlink_to(outside / "target.yaml")
    written, _ = migrated_dir.write(folder, migrated, "# header\n")
    assert sorted(p.name for p in written) == ["tj-auto.yaml", "tj-overrides.yaml"]
    assert not (outside / "target.yaml").exists() and not (folder / "bar-s" / "tj-auto.yaml").is_symlink()
    assert (folder / "bar-s" / "tj-auto.yaml").read_text().startswith("# header\n# was: suspended\n# changes:\n")
    with pytest.raises(InputError, match="is a file, not a directory"):
        migrated_dir.check_dir(str(folder / "bar-s" / "tj-auto.yaml" / "x"))


def test_a_version_new_in_the_target_is_not_checked_never_passed(v21_to_v22):
    old, new = v21_to_v22
    new = copy.deepcopy(new)
    crd = next(c for c in new if c["metadata"]["name"] == TRAINJOBS)
    beta = dict(copy.deepcopy(crd["spec"]["versions"][0]), name="v1beta1", storage=False)
    crd["spec"]["versions"].append(beta)
    report = check(old, new, {TRAINJOBS: [trainjob("j", "ns")]})
    assert [(f.kind, f.version) for f in report.findings if f.kind == NOT_CHECKED] == [(NOT_CHECKED, "v1beta1")]
