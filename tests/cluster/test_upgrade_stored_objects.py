"""The Trainer 2.1 -> 2.2 upgrade on a real kube-apiserver: stored TrainJobs checked against the
2.2 schema, the way through (--write-migrated), and the reverse check of a rollback.

The API server itself is the judge twice: it refuses, under the 2.2 CRDs, the very value
upgrade-check names; and it accepts every TrainJob --write-migrated writes.
"""

from __future__ import annotations

import copy
import json

import pytest
import yaml

from tests.support.cluster import apply_raw, wait_established
from tests.support.upgrade_cases import TRAINJOBS, load_crds, run_cli, trainjob, write_target
from trainerctl.cluster.client.client import ApiError
from trainerctl.upgrade import UpgradeBlocked, guard

NS = "bar-s"
JOBS = f"/apis/trainer.kubeflow.org/v1alpha1/namespaces/{NS}/trainjobs"
MANAGER = "test-setup"


def apply_crds(cluster, crds: list[dict]) -> None:
    for crd in crds:
        apply_raw(cluster, {k: v for k, v in crd.items() if k != "status"}, manager=MANAGER)
    wait_established(cluster, *(c["metadata"]["name"] for c in crds))


def the_story_jobs() -> list[dict]:
    return [
        trainjob("tj-auto", NS, {"suspend": True, "trainer": {"numProcPerNode": "auto"}}),
        trainjob("tj-overrides", NS, {"suspend": True, "podTemplateOverrides": [{
            "targetJobs": [{"name": "node"}], "metadata": {"labels": {"team": "a"}},
            "spec": {"nodeSelector": {"pool": "gpu"},
                     "containers": [{"name": "node", "env": [{"name": "X", "value": "1"}]}]}}]}),
        trainjob("tj-clean", NS),
    ]


def test_the_21_to_22_upgrade_blocks_names_the_two_and_offers_the_way_through(env, shared_dir, tmp_path, capsys):
    cluster, kube = env.cluster, env.kubeconfig
    v21, v22 = load_crds(shared_dir, "kubeflow-trainer/v2.1.0"), load_crds(shared_dir, "kubeflow-trainer/v2.2.0")
    apply_crds(cluster, v21)
    cluster.request("POST", "/api/v1/namespaces", body={"metadata": {"name": NS}})
    for job in the_story_jobs():  # no webhook here: the CRD schema and its CEL rules are the only checks
        cluster.request("POST", JOBS, body=job)
    target = write_target(tmp_path, v22, "v22.yaml")

    # upgrade-check names exactly the two, with the field, the value and the fix
    code, out, err = run_cli(capsys, "upgrade-check", "-f", target, "--kubeconfig", kube)
    assert code == 1, err
    assert "BLOCKING stored value rejected by the target: v1alpha1 spec.trainer.numProcPerNode" in out
    assert f"TrainJob {NS}/tj-auto: spec.trainer.numProcPerNode: 'auto': must be of type integer" in out
    assert "BLOCKING field removed: v1alpha1 spec.podTemplateOverrides" in out and f"TrainJob {NS}/tj-overrides" in out
    assert f"TrainJob {NS}/tj-auto: suspended: delete it before the upgrade" in out
    assert "tj-clean" not in out and "result: BLOCKED by 2 change(s)" in out
    assert err.startswith("error: upgrade blocked by 2 change(s)")
    code, out, _ = run_cli(capsys, "upgrade-check", "-f", target, "--kubeconfig", kube, "-o", "json")
    data = json.loads(out)
    assert code == 1 and [(r["name"], r["field"], r["value"]) for r in data["rejected"]] == [
        ("tj-auto", "spec.trainer.numProcPerNode", "'auto'")]
    assert sorted(a["object"] for a in data["advice"]) == [f"{NS}/tj-auto", f"{NS}/tj-overrides"]

    # install's guard refuses before anything is written, as a preflight refusal (exit 3)
    with pytest.raises(UpgradeBlocked) as info:
        guard(cluster, v22)
    assert info.value.exit_code == 3 and f"TrainJob {NS}/tj-auto: spec.trainer.numProcPerNode" in str(info.value)

    # --write-migrated: a refused folder is one line, exit 2, before the cluster is asked
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    code, out, err = run_cli(capsys, "upgrade-check", "-f", target, "--kubeconfig", kube, "--write-migrated",
                             str(blocker / "sub"))
    assert code == 2 and out == "" and err.count("\n") == 1 and "--write-migrated" in err and "is a file" in err
    migrated = tmp_path / "migrated"
    code, _, err = run_cli(capsys, "upgrade-check", "-f", target, "--kubeconfig", kube, "--write-migrated",
                           str(migrated))
    assert code == 1 and "wrote 2 converted TrainJob(s)" in err
    files = sorted(p.relative_to(migrated).as_posix() for p in migrated.rglob("*.yaml"))
    assert files == [f"{NS}/tj-auto.yaml", f"{NS}/tj-overrides.yaml"]

    # the ground truth: under the 2.2 CRDs the API server refuses the value named above...
    apply_crds(cluster, v22)
    again = copy.deepcopy(the_story_jobs()[0])
    again["metadata"]["name"] = "tj-auto-again"
    with pytest.raises(ApiError) as refused:
        cluster.request("POST", JOBS, body=again)
    assert refused.value.status == 422 and "spec.trainer.numProcPerNode" in str(refused.value)
    # ...and accepts what --write-migrated wrote, once the old ones are gone
    for name in ("tj-auto", "tj-overrides"):
        cluster.request("DELETE", f"{JOBS}/{name}")
        doc = yaml.safe_load((migrated / NS / f"{name}.yaml").read_text())
        cluster.request("POST", JOBS, body=doc)
    made = cluster.request("GET", f"{JOBS}/tj-overrides")
    [patch] = made["spec"]["runtimePatches"]
    assert patch["trainingRuntimeSpec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"] == {
        "metadata": {"labels": {"team": "a"}},
        "spec": {"nodeSelector": {"pool": "gpu"}, "containers": [{"name": "node", "env": [{"name": "X", "value": "1"}]}]}}
    assert "numProcPerNode" not in cluster.request("GET", f"{JOBS}/tj-auto")["spec"]["trainer"]
    code, out, err = run_cli(capsys, "upgrade-check", "-f", target, "--kubeconfig", kube)
    assert code == 0 and "result: nothing blocks the upgrade" in out, err + out

    # rolling back to 2.1 is blocked while a TrainJob uses runtimePatches
    code, out, _ = run_cli(capsys, "upgrade-check", "-f", write_target(tmp_path, v21, "v21.yaml"), "--kubeconfig", kube)
    assert code == 1 and "BLOCKING field removed: v1alpha1 spec.runtimePatches" in out
    assert f"TrainJob {NS}/tj-overrides" in out


def test_odh_35_to_stable_reports_the_same(env, shared_dir, tmp_path, capsys):
    """The ODH trees: odh-3.5.0 (Trainer 2.1) to the operator's synced main (Trainer 2.3)."""
    cluster = env.cluster
    apply_crds(cluster, load_crds(shared_dir, "opendatahub-trainer/odh-3.5.0"))
    cluster.request("POST", "/api/v1/namespaces", body={"metadata": {"name": NS}})
    for job in the_story_jobs():
        cluster.request("POST", JOBS, body=job)
    target = write_target(tmp_path, load_crds(shared_dir, "opendatahub-trainer/main-d140e85"), "stable.yaml")
    code, out, _ = run_cli(capsys, "upgrade-check", "-f", target, "--kubeconfig", env.kubeconfig, "-o", "json")
    data = json.loads(out)
    assert code == 1
    assert [(r["name"], r["field"]) for r in data["rejected"]] == [("tj-auto", "spec.trainer.numProcPerNode")]
    removed = next(f for f in data["findings"] if f.get("path") == "spec.podTemplateOverrides")
    assert removed["blocking"] and removed["usedBy"] == [f"{NS}/tj-overrides"]
    assert {f["crd"] for f in data["findings"] if f["blocking"]} == {TRAINJOBS}
