"""status: the installed source, each object present/missing/drifted, Deployments, and the Go
operator's conditions (Ready, ProvisioningSucceeded, DeploymentsAvailable, DependenciesAvailable,
Degraded) with its reasons; exit 0 only when Ready; --wait; `-o json` against its JSON Schema."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.support import json_schema
from tests.support.cluster import FakeController, ODH_NS, odh_objects, prepare_cluster_for_odh
from trainerctl.cluster.trainer import dependencies
from trainerctl.cluster.trainer import conditions
from trainerctl.cluster.manager import inventory_configmap
from tests.support.actions import install
from tests.support.actions import session
from trainerctl.cluster.install import InstallOptions
from trainerctl.cluster.status import status, status_text

SCHEMA = json.loads((Path(__file__).resolve().parents[2] / "trainerctl" / "data" / "status.schema.json").read_text())
DEPLOY = "kubeflow-trainer-controller-manager"


def schema_errors(doc: dict) -> list[str]:
    return json_schema.errors(doc, SCHEMA)


def _status_doc(**over) -> dict:
    deps = dependencies.DependencyState(dependencies.AVAILABLE, "all required dependencies are available", "cluster")
    objects = [{"kind": "ConfigMap", "group": "", "namespace": "ns", "name": "c", "state": "present"}]
    deployments = [{"namespace": "ns", "name": DEPLOY, "available": True}]
    conds = conditions.conditions(deps, conditions.provisioning(True, True, "ns", objects), conditions.deployments(deployments))
    doc = {"namespace": "ns", "installed": True, "ready": conditions.is_ready(conds),
           "source": {"path": "/src/trainer/manifests", "digest": "sha256:0", "overlay": "rhoai",
                      "trainer_version": "2.1.0", "releases": [{"name": "Kubeflow Trainer", "version": "2.1.0"}]},
           "trainerVersion": "2.1.0", "channel": "", "releases": [{"name": "Kubeflow Trainer", "version": "2.1.0"}],
           "conditions": conds, "objects": objects, "deployments": deployments, "summary": {"present": 1}}
    doc.update(over)
    return doc


def test_schema_accepts_what_status_builds_and_rejects_what_it_never_prints():
    doc = _status_doc()
    assert schema_errors(doc) == [] and doc["ready"]
    assert schema_errors({**doc, "ready": "yes"}) == ["$.ready: expected boolean, got str"]
    assert schema_errors({**doc, "extra": 1}) == ["$.extra: not allowed"]
    bad = dict(doc["conditions"][0], reason="Whatever")
    assert schema_errors({**doc, "conditions": [bad, *doc["conditions"][1:]]})
    with pytest.raises(ValueError, match="does not implement"):
        json_schema.errors({}, {"type": "object", "patternProperties": {}})


def test_every_reason_the_code_can_give_is_in_the_schema():
    reasons = set(SCHEMA["$defs"]["condition"]["properties"]["reason"]["enum"])
    assert set(dependencies.REASONS) <= reasons
    objects = [{"kind": "K", "group": "", "namespace": "", "name": n, "state": s}
               for n, s in (("a", "missing"), ("b", "drifted"), ("c", "error"))]
    given = {conditions.provisioning(False, True, "ns", [])["reason"], conditions.provisioning(True, False, "ns", [])["reason"],
             conditions.provisioning(True, True, "ns", [])["reason"], conditions.deployments([])["reason"],
             conditions.deployments([{"namespace": "n", "name": "d", "available": True}])["reason"]}
    for i in range(3):
        given.add(conditions.provisioning(True, True, "ns", objects[i:])["reason"])
    assert given <= reasons


def test_ready_follows_the_first_unhealthy_dependent_like_the_operator():
    missing = dependencies.DependencyState(dependencies.OPERATOR_DEGRADED, "JobSetOperator cluster is degraded: x")
    deployments = [{"namespace": "ns", "name": DEPLOY, "available": False, "reason": "Available=False (x)"}]
    conds = conditions.conditions(missing, conditions.provisioning(True, True, "ns", []), conditions.deployments(deployments))
    by_type = {c["type"]: c for c in conds}
    assert [c["type"] for c in conds] == ["Ready", "DependenciesAvailable", "DeploymentsAvailable",
                                          "ProvisioningSucceeded", "Degraded"]
    assert by_type["Ready"] == {"type": "Ready", "status": "False", "reason": "JobSetOperatorDegraded",
                                "message": "JobSetOperator cluster is degraded: x"}
    assert by_type["Degraded"]["status"] == "True" and by_type["Degraded"]["reason"] == "JobSetOperatorDegraded"
    assert by_type["DeploymentsAvailable"]["message"] == f"0/1 deployments ready: ns/{DEPLOY} (Available=False (x))"


def test_status_text_names_a_local_source_by_its_path():
    text = status_text(_status_doc())
    assert text.splitlines()[0] == "source: /src/trainer/manifests (local checkout, overlay rhoai) digest sha256:0"
    assert "?" not in text.splitlines()[0]
    assert "trainer version: 2.1.0 (Kubeflow Trainer 2.1.0)" in text
    assert "Ready: True (Ready)" in text


def test_the_field_digest_is_of_our_apply_only():
    ours = {"manager": "trainerctl", "operation": "Apply", "fieldsV1": {"f:data": {"f:a": {}}}}
    meta = {"managedFields": [
        {"manager": "trainerctl", "operation": "Update", "fieldsV1": {"f:x": {}}},
        {"manager": "trainerctl", "operation": "Apply", "subresource": "status", "fieldsV1": {"f:status": {}}},
        {"manager": "kubectl-edit", "operation": "Update", "fieldsV1": {"f:data": {"f:b": {}}}}, ours]}
    digest = inventory_configmap.fields_digest(meta, "trainerctl")
    assert digest and digest == inventory_configmap.fields_digest({"managedFields": [ours]}, "trainerctl")
    assert digest != inventory_configmap.fields_digest({"managedFields": [dict(ours, fieldsV1={"f:data": {}})]}, "trainerctl")
    assert inventory_configmap.fields_digest(meta, "other") == "" == inventory_configmap.fields_digest(None, "trainerctl")


def _cli(capsys, *args: str) -> tuple[int, str, str]:
    from trainerctl.cli import main

    code = main(list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_status_reports_source_presence_drift_availability_and_gates_on_ready(env, tmp_path, capsys):
    from tests.testenv import readiness

    base = ["status", "--kubeconfig", env.kubeconfig, "-n", ODH_NS]
    code, out, err = _cli(capsys, *base)
    assert code == 1 and "not installed by trainerctl" in out
    assert err == f"error: Trainer in namespace {ODH_NS} is not Ready (NotInstalled): no trainerctl inventory in " \
                  f"namespace {ODH_NS}: run trainerctl install\n"
    prepare_cluster_for_odh(env.cluster)
    objects = odh_objects()
    source = {"url": "https://github.com/opendatahub-io/trainer.git", "ref": "odh-3.5.0",
              "commit": "d063877c480bbd9a35512691ded96c97d8937b44", "trainer_version": "2.1.0",
              "releases": [{"name": "Kubeflow Trainer", "version": "2.1.0", "repoUrl": "https://github.com/kubeflow/trainer"}]}
    with FakeController(env, objects):
        install(objects, cluster=env.cluster, namespace=ODH_NS, source=source, options=InstallOptions(timeout=60))
        # An inventory from before field digests were recorded gets them on the next (no-op) install.
        recorded = session(env.cluster, ODH_NS).resources.read_inventory()
        assert all(e.fields for e in recorded.entries.values())
        session(env.cluster, ODH_NS, field_manager="trainerctl").resources.write_inventory(dataclasses.replace(
            recorded, entries={k: dataclasses.replace(e, fields="") for k, e in recorded.entries.items()}))
        again = install(objects, cluster=env.cluster, namespace=ODH_NS, source=source, options=InstallOptions(timeout=60))
        filled = session(env.cluster, ODH_NS).resources.read_inventory().entries
        assert again.changed == 0 and {k: e.fields for k, e in filled.items()} == \
            {k: e.fields for k, e in recorded.entries.items()}
    st = status(session(env.cluster, ODH_NS))
    assert st["installed"] and st["source"] == source and st["trainerVersion"] == "2.1.0"
    assert st["releases"] == source["releases"] and st["ready"]
    assert st["summary"] == {"present": len(objects) + 1}
    assert st["deployments"] == [{"namespace": ODH_NS, "name": DEPLOY, "available": True}]
    code, out, err = _cli(capsys, *base, "-o", "json")
    assert code == 0, err
    doc = json.loads(out)
    assert schema_errors(doc) == []
    assert {c["type"]: c["status"] for c in doc["conditions"]} == {
        "Ready": "True", "DependenciesAvailable": "True", "DeploymentsAvailable": "True",
        "ProvisioningSucceeded": "True", "Degraded": "False"}

    # A Deployment that is not available: exit 1, and --wait waits for it.
    dep_path = ODH_NS, DEPLOY
    readiness.mark_deployment_failed(Path(env.kubeconfig), *dep_path)
    code, out, err = _cli(capsys, *base, "-o", "json")
    doc = json.loads(out)
    assert code == 1 and schema_errors(doc) == [] and not doc["ready"]
    assert "is not Ready (DeploymentsNotReady): 0/1 deployments ready" in err
    code, out, err = _cli(capsys, *base, "--wait", "--timeout", "1")
    assert code == 4 and err.splitlines()[-1].startswith("error: timed out after 1s: Trainer in namespace")
    # The Deployment becomes available only once the command says it waits for it.
    proc = subprocess.Popen([sys.executable, "-m", "trainerctl", *base, "--wait", "--timeout", "60"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL,
                            env={**os.environ, "NO_COLOR": "1"})
    said = []
    for line in proc.stderr:
        said.append(line)
        if "waiting for Ready: DeploymentsNotReady" in line:
            readiness.mark_deployment_available(Path(env.kubeconfig), *dep_path)
            break
    out, rest = proc.communicate(timeout=120)
    err = "".join(said) + rest
    assert proc.returncode == 0, err
    assert "waiting for Ready: DeploymentsNotReady" in err
    assert "Ready: True (Ready)" in out

    # Drift without the render: another manager took a field we applied; re-installing (forcing the
    # conflict that edit made) takes it back.
    svc = f"/api/v1/namespaces/{ODH_NS}/services/{DEPLOY}"
    env.cluster.request("PATCH", svc, body={"metadata": {"labels": {"app.kubernetes.io/name": "edited"}}},
                        content_type="application/merge-patch+json", query={"fieldManager": "kubectl-edit"})
    code, out, err = _cli(capsys, *base, "-o", "json")
    doc = json.loads(out)
    assert code == 1 and schema_errors(doc) == []
    assert [(o["kind"], o["name"]) for o in doc["objects"] if o["state"] != "present"] == [("Service", DEPLOY)]
    assert f"(ObjectsDrifted): 1 object(s) drifted: Service {ODH_NS}/{DEPLOY}" in err
    with FakeController(env, objects):
        install(objects, cluster=env.cluster, namespace=ODH_NS, source=source,
                options=InstallOptions(timeout=60, force_conflicts=True))
    code, out, err = _cli(capsys, *base)
    assert code == 0, err

    # Missing and drifted objects: exit 1, naming them.
    env.cluster.request("DELETE", f"/api/v1/namespaces/{ODH_NS}/configmaps/kubeflow-trainer-config")
    env.cluster.request("PATCH", f"/api/v1/namespaces/{ODH_NS}/services/{DEPLOY}",
                        body={"metadata": {"labels": {"app.kubernetes.io/name": "edited"}}},
                        content_type="application/merge-patch+json", query={"fieldManager": "kubectl-edit"})
    rendered = tmp_path / "render.yaml"
    rendered.write_text(yaml.safe_dump_all(objects))
    code, out, err = _cli(capsys, *base, "-f", str(rendered), "-o", "json")
    assert code == 1
    st = json.loads(out)
    assert schema_errors(st) == []
    states = {o["name"]: o["state"] for o in st["objects"]}
    assert states["kubeflow-trainer-config"] == "missing"
    assert states[DEPLOY] in ("drifted", "present")
    assert [o["kind"] for o in st["objects"] if o["state"] == "drifted"] == ["Service"]
    assert "(ObjectsMissing): 1 object(s) missing: ConfigMap opendatahub/kubeflow-trainer-config" in err
    code, out, err = _cli(capsys, *base)
    assert code == 1
    assert "ref odh-3.5.0 commit d063877c480bbd9a35512691ded96c97d8937b44" in out
    assert "ConfigMap opendatahub/kubeflow-trainer-config: missing" in out
    # Without the render too: the edited label left our apply's fields.
    assert f"Service {ODH_NS}/{DEPLOY}: drifted" in out
    assert "  ProvisioningSucceeded: False (ObjectsMissing)" in out
