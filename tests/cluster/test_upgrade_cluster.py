"""upgrade-check against the real kube-apiserver: live CRDs and TrainJobs vs a target render."""

from __future__ import annotations

import json

import pytest

from trainerctl.cluster.client.client import connect
from trainerctl.upgrade import check_cluster
from trainerctl.upgrade.crd_diff import FIELD_REMOVED, STORED_VERSION_UNSERVED, VALIDATION_ADDED
from tests.support.upgrade_cases import REMOVED_NESTED, REMOVED_TOP, TRAINJOBS, fixture_trainjobs, load_crds, target_dropping_stored_version, target_removing_fields
from tests.support.upgrade_cases import oracle, run_cli, write_target
from tests.support.waiting import wait_until

APPLY = "application/apply-patch+yaml"
MANAGER = "trainerctl-upgrade-tests"


def _raw(response) -> dict:
    return json.loads(response.data)


def apply_crds(api_client, crds: list[dict], timeout: float = 60) -> None:
    from kubernetes import client

    ext = client.ApiextensionsV1Api(api_client)
    for crd in crds:
        body = {k: v for k, v in crd.items() if k != "status"}
        ext.patch_custom_resource_definition(crd["metadata"]["name"], body, field_manager=MANAGER,
                                             force=True, _content_type=APPLY, _preload_content=False)
    pending = {c["metadata"]["name"] for c in crds}

    def all_established() -> bool:
        for name in sorted(pending):
            crd = _raw(ext.read_custom_resource_definition(name, _preload_content=False))
            conds = {c["type"]: c["status"] for c in (crd.get("status") or {}).get("conditions") or []}
            if conds.get("Established") == "True" and conds.get("NamesAccepted") == "True":
                pending.discard(name)
        return not pending

    wait_until(all_established, timeout, f"CRDs {sorted(pending)} to be Established")


@pytest.fixture(scope="module")
def odh34(test_cluster, shared_dir):
    """odh-3.4.0 CRDs installed; the CRDs found before are put back afterwards (the cluster is
    shared by the whole session)."""
    from kubernetes import client

    api = test_cluster.api_client()
    ext = client.ApiextensionsV1Api(api)
    crds = load_crds(shared_dir, "opendatahub-trainer/odh-3.4.0")
    before = []
    for c in crds:
        try:
            before.append(_raw(ext.read_custom_resource_definition(c["metadata"]["name"], _preload_content=False)))
        except client.exceptions.ApiException as exc:
            assert exc.status == 404
    apply_crds(api, crds)
    yield crds
    if before:
        restored = [dict(apiVersion="apiextensions.k8s.io/v1", kind="CustomResourceDefinition",
                         metadata={"name": c["metadata"]["name"]}, spec=c["spec"]) for c in before]
        apply_crds(api, restored)


@pytest.fixture(scope="module")
def jobs(test_cluster, odh34):
    """The fixture TrainJobs, created in their own namespace (no webhook is installed, so the
    CRD schema and its CEL rules are the only checks)."""
    import secrets

    from kubernetes import client

    api = test_cluster.api_client()
    ns = f"upg-{secrets.token_hex(3)}"
    client.CoreV1Api(api).create_namespace({"metadata": {"name": ns}})
    custom = client.CustomObjectsApi(api)
    for job in fixture_trainjobs(ns):
        custom.create_namespaced_custom_object("trainer.kubeflow.org", "v1alpha1", ns, "trainjobs", job)
    return ns


def test_report_names_the_removed_field_and_the_trainjob(test_cluster, odh34, jobs):
    report = check_cluster(connect(str(test_cluster.admin_kubeconfig)), target_removing_fields(odh34))
    removed = {f.path for f in report.findings if f.kind == FIELD_REMOVED}
    assert removed == {REMOVED_TOP, REMOVED_NESTED}
    mine = {(u.ref, u.path) for u in report.usages if u.namespace == jobs and u.finding == FIELD_REMOVED}
    assert mine == {(f"{jobs}/overrides", REMOVED_TOP), (f"{jobs}/secret-env", REMOVED_NESTED)}
    assert any(u.ref == f"{jobs}/no-trainer" and u.path == "spec.trainer" for u in report.usages)
    # the live CRDs carry status.storedVersions, read from the server
    assert not any(f.kind == STORED_VERSION_UNSERVED for f in report.findings)
    assert report.blocking


def test_cli_text_and_json(test_cluster, odh34, jobs, tmp_path, capsys):
    target = write_target(tmp_path, target_removing_fields(odh34))
    kube = str(test_cluster.admin_kubeconfig)
    code, out, err = run_cli(capsys, "upgrade-check", "-f", target, "--kubeconfig", kube)
    assert code == 1, err
    assert f"BLOCKING field removed: v1alpha1 {REMOVED_TOP}" in out
    assert f"TrainJob {jobs}/overrides" in out and f"TrainJob {jobs}/secret-env" in out
    assert "immutability rule" in out and "result: BLOCKED" in out
    code, out, _ = run_cli(capsys, "upgrade-check", "-f", target, "--kubeconfig", kube, "-o", "json")
    data = json.loads(out)
    assert code == 1 and data["blocking"] is True
    top = next(f for f in data["findings"] if f.get("path") == REMOVED_TOP)
    assert f"{jobs}/overrides" in top["usedBy"]


def test_unchanged_target_exits_zero(test_cluster, odh34, jobs, tmp_path, capsys):
    target = write_target(tmp_path, odh34)
    code, out, err = run_cli(capsys, "upgrade-check", "-f", target, "--kubeconfig", str(test_cluster.admin_kubeconfig))
    assert code == 0, err + out
    assert "result: nothing blocks the upgrade" in out
    assert f"{TRAINJOBS}: no changes" in out


def test_dropping_a_stored_version_blocks(test_cluster, odh34, jobs, tmp_path, capsys):
    target = write_target(tmp_path, target_dropping_stored_version(odh34))
    code, out, _ = run_cli(capsys, "upgrade-check", "-f", target, "--kubeconfig",
                           str(test_cluster.admin_kubeconfig), "-o", "json")
    assert code == 1
    stored = [f for f in json.loads(out)["findings"] if f["kind"] == STORED_VERSION_UNSERVED]
    assert [(f["crd"], f["version"], f["blocking"]) for f in stored] == [(TRAINJOBS, "v1alpha1", True)]


def test_restricted_user_gets_one_clear_line(test_cluster, odh34, tmp_path, capsys):
    target = write_target(tmp_path, odh34)
    code, out, err = run_cli(capsys, "upgrade-check", "-f", target, "--kubeconfig",
                             str(test_cluster.restricted_kubeconfig))
    assert code != 0 and out == ""
    assert err.startswith("error: forbidden") and "customresourcedefinitions" in err
    assert len(err.strip().splitlines()) == 1


def test_bad_target_file_is_bad_input(test_cluster, tmp_path, capsys):
    bad = tmp_path / "bad.yaml"
    bad.write_text("kind: [unclosed\n")
    code, _, err = run_cli(capsys, "upgrade-check", "-f", str(bad), "--kubeconfig", str(test_cluster.admin_kubeconfig))
    assert code == 2 and err.startswith(f"error: -f {bad}") and "not valid YAML" in err


def test_v22_to_v23_on_the_server_matches_the_file_diff(test_cluster, shared_dir, odh34, tmp_path, capsys):
    """The live side is what the API server returns for the v2.2.0 CRDs (defaults and all); the
    report must still list exactly the differences the two files have."""
    old = load_crds(shared_dir, "kubeflow-trainer/v2.2.0")
    new = load_crds(shared_dir, "kubeflow-trainer/v2.3.0")
    apply_crds(test_cluster.api_client(), old)
    try:
        target = write_target(tmp_path, new)
        code, out, err = run_cli(capsys, "upgrade-check", "-f", target, "--kubeconfig",
                                 str(test_cluster.admin_kubeconfig), "-o", "json")
    finally:
        apply_crds(test_cluster.api_client(), odh34)  # back to what the module's other tests use
    data = json.loads(out)
    news = {c["metadata"]["name"]: c for c in new}
    for live in old:
        name = live["metadata"]["name"]
        removed, added_rules, _, _ = oracle(live, news[name], "v1alpha1")
        mine = [f for f in data["findings"] if f["crd"] == name]
        assert {f["path"] for f in mine if f["kind"] == FIELD_REMOVED} == removed
        assert {(f["path"], f["rule"]) for f in mine if f["kind"] in (VALIDATION_ADDED, "validation-changed")} == added_rules
        for f in mine:
            if f.get("rule") == "self == oldSelf":
                assert f["immutable"] is True
    assert code == (1 if data["blocking"] else 0), err


def test_guard_refuses_unless_allowed_as_a_preflight_refusal(test_cluster, odh34, jobs):
    from trainerctl.cluster.client.client import connect
    from trainerctl.upgrade import UpgradeBlocked, guard

    cluster = connect(str(test_cluster.admin_kubeconfig))
    target = target_removing_fields(odh34)
    with pytest.raises(UpgradeBlocked) as info:
        guard(cluster, target)
    # install's refusal, before anything is applied, exits 3 like every preflight check
    assert info.value.exit_code == 3 and "--allow-breaking" in str(info.value)
    assert info.value.report.blocking
    assert guard(cluster, target, allow_breaking=True).blocking
    assert not guard(cluster, odh34).blocking


def test_runtimes_using_a_removed_field_are_listed(test_cluster, odh34, jobs):
    """Cluster-scoped ClusterTrainingRuntimes and namespaced TrainingRuntimes are found too."""
    import secrets

    from kubernetes import client

    from tests.support.upgrade_cases import REMOVED_RUNTIME, runtime, target_removing_runtime_field

    custom = client.CustomObjectsApi(test_cluster.api_client())
    ctr_name = f"upg-ctr-{secrets.token_hex(3)}"
    custom.create_cluster_custom_object("trainer.kubeflow.org", "v1alpha1", "clustertrainingruntimes",
                                        runtime("ClusterTrainingRuntime", ctr_name, None, 2))
    custom.create_namespaced_custom_object("trainer.kubeflow.org", "v1alpha1", jobs, "trainingruntimes",
                                           runtime("TrainingRuntime", "uses-num-nodes", jobs, 1))
    custom.create_namespaced_custom_object("trainer.kubeflow.org", "v1alpha1", jobs, "trainingruntimes",
                                           runtime("TrainingRuntime", "no-ml-policy", jobs, None))
    try:
        report = check_cluster(connect(str(test_cluster.admin_kubeconfig)), target_removing_runtime_field(odh34))
    finally:
        custom.delete_cluster_custom_object("trainer.kubeflow.org", "v1alpha1", "clustertrainingruntimes", ctr_name)
    found = {(u.kind, u.ref) for u in report.usages if u.path == REMOVED_RUNTIME}
    assert ("ClusterTrainingRuntime", ctr_name) in found
    assert ("TrainingRuntime", f"{jobs}/uses-num-nodes") in found
    assert ("TrainingRuntime", f"{jobs}/no-ml-policy") not in found
    assert report.blocking
