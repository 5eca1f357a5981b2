"""Migration from a cluster the Go operator manages.

The operator's install is simulated as tests/support/fake_operator.py describes: its field
manager, labels, instance annotations and controller ownerReferences on every object, its CR
with the cleanup finalizer, its running Deployment, and the cleanup and garbage collection that
deleting that CR would set off. Plus what the operator leaves behind on an older Trainer: two
runtimes trainerctl does not render (one referenced by a suspended TrainJob) and the legacy
`trainer.kubeflow.org/resource-in-use` finalizer on runtimes.
"""

from __future__ import annotations

import json

import pytest
import yaml

from tests.support.cluster import FakeController, apply_raw, prepare_cluster_for_odh, require_shared, wait_established
from tests.support.fake_operator import (CR_PATH, DEPLOY_PATH, GROUP, MANAGER, OPERATOR_NS, FakeOperator,
                                         as_operator_applied, labelled, operator_apply, operator_deployment,
                                         trainer_crd)
from tests.support.waiting import wait_until
from trainerctl.cluster.trainer.go_operator import CLEANUP_FINALIZER, TRAINER_CR
from trainerctl.cluster.trainer.policy import LEGACY_FINALIZER

ODH_NS = "opendatahub"
IN_USE = "torch-distributed-cuda128-torch29-py312-legacy"  # a suspended TrainJob still references it
STALE = "training-hub-th05-cuda128-torch29-py312-legacy"  # nothing references it
CTR = "/apis/trainer.kubeflow.org/v1alpha1/clustertrainingruntimes"
JOB_NS = "team-a"


def our_render() -> list[dict]:
    from trainerctl.render import RenderOptions, render

    checkout = require_shared() / "upstream" / "opendatahub-trainer" / "odh-3.5.0"
    return render(RenderOptions(source_path=checkout, env={})).objects


def legacy_runtime(name: str) -> dict:
    return {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "ClusterTrainingRuntime",
            "metadata": {"name": name, "labels": {"trainer.kubeflow.org/framework": "torch"}},
            "spec": {"mlPolicy": {"numNodes": 1, "torch": {}},
                     "template": {"spec": {"replicatedJobs": [{"name": "node", "template": {"spec": {"template": {
                         "spec": {"containers": [{"name": "node", "image": "quay.io/opendatahub/old:3.4"}]}}}}}]}}}}


def add_legacy_finalizer(env, name: str) -> None:
    env.cluster.request("PATCH", f"{CTR}/{name}", content_type="application/merge-patch+json",
                        body={"metadata": {"finalizers": [LEGACY_FINALIZER]}})


@pytest.fixture
def operator_cluster(env):
    """A cluster the operator manages (running), with a user's suspended TrainJob on an old runtime."""
    prepare_cluster_for_odh(env.cluster)
    apply_raw(env.cluster, trainer_crd(), "olm")
    wait_established(env.cluster, f"trainers.{GROUP}")
    for ns in (OPERATOR_NS, JOB_NS):
        env.cluster.request("POST", "/api/v1/namespaces", body={"metadata": {"name": ns}})
    # What the service account controller would add: pods need it.
    env.cluster.request("POST", f"/api/v1/namespaces/{OPERATOR_NS}/serviceaccounts", body={"metadata": {"name": "default"}})
    # The operator's ensureNamespace creates the app namespace, labelled.
    env.cluster.request("POST", "/api/v1/namespaces", body={"metadata": {
        "name": ODH_NS, "labels": {"platform.opendatahub.io/part-of": "trainer"}}})
    apply_raw(env.cluster, operator_deployment(), "olm")
    cr = env.cluster.request("POST", f"/apis/{GROUP}/v1alpha1/trainers", body={
        "apiVersion": f"{GROUP}/v1alpha1", "kind": "Trainer",
        "metadata": {"name": TRAINER_CR, "finalizers": [CLEANUP_FINALIZER]},
        "spec": {"managementState": "Managed", "appNamespace": ODH_NS}})
    ours = our_render()
    with FakeController(env, ours) as controller, FakeOperator(env.cluster, ODH_NS, plays_controllers_with=env.kubeconfig) as operator:
        wait_until(operator.running, 60, "the operator's pod", interval=0.1)
        operator_apply(env.cluster, ODH_NS, as_operator_applied([*ours, legacy_runtime(IN_USE), legacy_runtime(STALE)], cr))
        for name in ("torch-distributed", IN_USE):  # what Trainer 2.0-2.2 controllers left on runtimes
            add_legacy_finalizer(env, name)
        env.cluster.request("POST", f"/apis/trainer.kubeflow.org/v1alpha1/namespaces/{JOB_NS}/trainjobs", body={
            "apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob",
            "metadata": {"name": "finetune", "namespace": JOB_NS},
            "spec": {"runtimeRef": {"name": IN_USE}, "suspend": True}})
        yield env, ours, operator, controller


def _cli(capsys, *args: str) -> tuple[int, str, str]:
    from trainerctl.cli import main

    code = main(list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_hand_over_from_a_running_operator(operator_cluster, tmp_path, capsys):
    env, ours, operator, _ = operator_cluster
    rendered = tmp_path / "trainer.yaml"
    rendered.write_text(yaml.safe_dump_all(ours))
    base = ["install", "-f", str(rendered), "--kubeconfig", env.kubeconfig, "-n", ODH_NS, "--timeout", "60"]
    # Labelled, but not provably the operator's: in another namespace, or never written by it.
    not_its = {JOB_NS: MANAGER, ODH_NS: "user"}
    for ns, manager in not_its.items():
        apply_raw(env.cluster, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {
            "name": "users-labelled", "namespace": ns, "labels": {"platform.opendatahub.io/part-of": "trainer"}}},
            manager)
    before = labelled(env.cluster, ODH_NS)
    assert len(before) > len(ours)  # ours, the two old runtimes, the namespace
    code, out, err = _cli(capsys, "status", "--kubeconfig", env.kubeconfig, "-n", ODH_NS)
    assert code == 1 and "the Go trainer-operator manages Trainer here" in err and "--take-over-operator" in err

    # While the operator can still write: refuse, write nothing.
    code, out, err = _cli(capsys, *base)
    assert code == 3, err
    assert err.count("\n") == 1 and "--take-over-operator" in err and f"Trainer {TRAINER_CR} exists" in err
    assert f"Deployment {OPERATOR_NS}/trainer-operator-controller-manager has 1 ready replica(s)" in err
    code, out, err = _cli(capsys, *base, "--dry-run")
    assert code == 3 and "--take-over-operator" in err.splitlines()[-1]
    assert f"ClusterTrainingRuntime.trainer.kubeflow.org {STALE} would be pruned" in out
    assert {k: m["resourceVersion"] for k, m in labelled(env.cluster, ODH_NS).items()} == \
        {k: m["resourceVersion"] for k, m in before.items()}
    assert env.get(f"/api/v1/namespaces/{ODH_NS}/configmaps/trainerctl-inventory") is None

    # The dry-run of the hand-over says every step and writes nothing.
    code, out, err = _cli(capsys, *base, "--dry-run", "--take-over-operator", "-o", "json")
    assert code == 0, err
    report = {(o["kind"], o["name"]): o for o in json.loads(out)["objects"]}
    assert report[("Deployment", "trainer-operator-controller-manager")]["message"] == \
        "the operator, scaled from 1 to 0 replicas"
    assert report[("Trainer", TRAINER_CR)]["action"] == "deleted"
    assert report[("ClusterTrainingRuntime", STALE)]["action"] == "pruned"
    assert report[("ClusterTrainingRuntime", IN_USE)]["message"] == \
        f"kept: referenced by unfinished TrainJob {JOB_NS}/finetune; legacy finalizer would be removed"
    assert report[("ConfigMap", "kubeflow-trainer-config")]["message"].endswith(f"would take over fields from {MANAGER}")
    assert operator.running() and env.get(CR_PATH) is not None
    assert {k: m["resourceVersion"] for k, m in labelled(env.cluster, ODH_NS).items()} == \
        {k: m["resourceVersion"] for k, m in before.items()}

    # The hand-over.
    code, out, err = _cli(capsys, *base, "--take-over-operator", "-o", "json")
    assert code == 0, err
    summary = json.loads(out)
    report = {(o["kind"], o["name"]): o for o in summary["objects"]}
    assert report[("ClusterTrainingRuntime", STALE)]["action"] == "pruned"
    assert report[("ClusterTrainingRuntime", IN_USE)]["action"] == "skipped"
    assert f"{JOB_NS}/finetune" in report[("ClusterTrainingRuntime", IN_USE)]["message"]
    assert operator.deleted == [], operator.deleted  # neither its cleanup nor the garbage collector ran
    assert operator.raced == [], operator.raced  # its pod was gone before its CR was touched
    assert operator.errors == [], operator.errors
    assert env.get(CR_PATH) is None and not operator.running()
    assert env.get(DEPLOY_PATH)["spec"]["replicas"] == 0
    after = labelled(env.cluster, ODH_NS)
    gone = {k for k in before if k not in after}
    assert gone == {f"trainer.kubeflow.org/ClusterTrainingRuntime//{STALE}"}
    for key, meta in after.items():
        assert meta["uid"] == before[key]["uid"], f"{key} was deleted and recreated"
    for ns in not_its:
        assert env.get(f"/api/v1/namespaces/{ns}/configmaps/users-labelled") is not None, ns
    for key in after:
        live = env.get(_path(env, key))
        assert not live["metadata"].get("ownerReferences"), key  # nothing left for a garbage collector
        if key.endswith((f"/{IN_USE}", "/users-labelled")):
            continue  # not ours to render: kept as the operator (or the user) left it
        managers = {e["manager"] for e in live["metadata"].get("managedFields") or []}
        assert MANAGER not in managers and "trainerctl" in managers, (key, managers)
        # Field by field: what the operator owned is ours now, except what only its deploy action
        # adds (the instance annotations and the owner reference to its CR), which goes with it.
        theirs = {f for f in owned_fields(before[key], MANAGER) if not _operator_only(f)}
        missing = theirs - owned_fields(live["metadata"], "trainerctl")
        assert not missing, (key, sorted(missing)[:5])
        assert not any(a.startswith("platform.opendatahub.io/instance")
                       for a in live["metadata"].get("annotations") or {}), key
    # No kept runtime has the legacy finalizer any more.
    for item in env.cluster.request("GET", CTR)["items"]:
        assert LEGACY_FINALIZER not in (item["metadata"].get("finalizers") or []), item["metadata"]["name"]
    assert env.get(f"/apis/trainer.kubeflow.org/v1alpha1/namespaces/{JOB_NS}/trainjobs/finetune") is not None

    # A second install changes nothing.
    code, out, err = _cli(capsys, *base, "-o", "json")
    assert code == 0, err
    again = json.loads(out)
    assert again["summary"]["changed"] == 0, [o for o in again["objects"] if o["action"] != "unchanged"]
    assert operator.deleted == []


def owned_fields(meta: dict, manager: str) -> set[tuple[str, ...]]:
    """The leaf field paths (fieldsV1, flattened) that `manager` owns on an object."""
    out: set[tuple[str, ...]] = set()

    def walk(node: dict, path: tuple[str, ...]) -> None:
        for k, sub in node.items():
            if k != "." and not {s for s in (sub or {}) if s != "."}:
                out.add(path + (k,))
            elif k != ".":
                walk(sub, path + (k,))

    for entry in meta.get("managedFields") or []:
        if entry.get("manager") == manager and not entry.get("subresource"):
            walk(entry.get("fieldsV1") or {}, ())
    return out


def _operator_only(field: tuple[str, ...]) -> bool:
    return field[:2] == ("f:metadata", "f:ownerReferences") or (
        field[:2] == ("f:metadata", "f:annotations") and len(field) > 2 and field[2].startswith("f:platform.opendatahub.io/"))


def _path(env, key: str) -> str:
    from trainerctl.cluster.client.client import object_path
    from trainerctl.cluster.client.discovery import Discovery
    from trainerctl.cluster.manager.objects import Ref

    ref = Ref.from_key(key)
    res = Discovery(env.cluster).preferred(ref.group, ref.kind)
    return object_path(res.group, res.version, res.resource, ref.namespace or None, ref.name)


def test_take_over_installs_into_the_namespace_the_operator_used(env, capsys, monkeypatch, tmp_path):
    """No -n: the CR's spec.appNamespace; a different -n is refused before anything is written."""
    prepare_cluster_for_odh(env.cluster)
    apply_raw(env.cluster, trainer_crd(), "olm")
    wait_established(env.cluster, f"trainers.{GROUP}")
    env.cluster.request("POST", f"/apis/{GROUP}/v1alpha1/trainers", body={
        "apiVersion": f"{GROUP}/v1alpha1", "kind": "Trainer",
        "metadata": {"name": TRAINER_CR, "finalizers": [CLEANUP_FINALIZER]}, "spec": {"appNamespace": "ml-trainer"}})
    monkeypatch.chdir(tmp_path)
    checkout = str(require_shared() / "upstream" / "opendatahub-trainer" / "odh-3.5.0")
    base = ["install", "--source", checkout, "--kubeconfig", env.kubeconfig, "--take-over-operator", "--dry-run"]
    code, out, err = _cli(capsys, *base, "-o", "json")
    assert code == 0, err
    report = json.loads(out)
    assert report["namespace"] == "ml-trainer"
    assert {o["namespace"] for o in report["objects"] if o["kind"] == "Deployment"} == {"ml-trainer"}
    code, out, err = _cli(capsys, *base, "-n", ODH_NS)
    assert code == 2
    assert err.strip().splitlines()[-1] == (
        f"error: -n {ODH_NS}: the operator installed Trainer into ml-trainer (Trainer {TRAINER_CR} "
        "spec.appNamespace); install into the same namespace to take it over: -n ml-trainer")
    assert env.get(CR_PATH)["metadata"]["finalizers"] == [CLEANUP_FINALIZER]


def test_every_install_strips_the_legacy_finalizer_from_the_runtimes_it_keeps(env):
    """Trainer 2.0-2.2 controllers add it to runtimes in use; an install strips it, not only a prune."""
    from tests.support.cluster import odh_objects
    from tests.support.actions import install
    from trainerctl.cluster.install import InstallOptions

    prepare_cluster_for_odh(env.cluster)
    objects = odh_objects()
    with FakeController(env, objects):
        install(objects, cluster=env.cluster, namespace=ODH_NS, options=InstallOptions(timeout=60))
        for name in ("torch-distributed", "training-hub-cpu"):
            add_legacy_finalizer(env, name)
        report = install(objects, cluster=env.cluster, namespace=ODH_NS, options=InstallOptions(timeout=60))
        again = install(objects, cluster=env.cluster, namespace=ODH_NS, options=InstallOptions(timeout=60))
    notes = {o.name: o.message for o in report.objects if "legacy finalizer" in o.message}
    assert set(notes) == {"torch-distributed", "training-hub-cpu"}
    assert all(m.endswith(f"legacy finalizer {LEGACY_FINALIZER} removed") for m in notes.values())
    for item in env.cluster.request("GET", CTR)["items"]:
        assert LEGACY_FINALIZER not in (item["metadata"].get("finalizers") or []), item["metadata"]["name"]
    assert again.changed == 0 and set(again.counts()) == {"unchanged"}


# -- without a cluster: the refusals and rules the cluster tests do not reach ---------------
def _state(**kw):
    from trainerctl.cluster.trainer.go_operator import OperatorDeployment, OperatorState

    deps = [OperatorDeployment("openshift-operators", "trainer-operator-controller-manager", 1, 1,
                               kw.pop("olm", ""))]
    return OperatorState(cr=kw.pop("cr", None), deployments=deps)


def test_hand_over_refuses_what_would_undo_it_before_writing():
    from trainerctl.cluster.trainer.go_operator import check_hand_over
    from trainerctl.errors import PreflightError

    with pytest.raises(PreflightError, match=r"installed by OLM \(ClusterServiceVersion trainer-operator.v1 in "
                                             r"openshift-operators\), which would scale it back up"):
        check_hand_over(_state(olm="ClusterServiceVersion trainer-operator.v1 in openshift-operators"))
    owned = {"metadata": {"name": TRAINER_CR, "ownerReferences": [
        {"kind": "DataScienceCluster", "name": "default-dsc", "controller": True}]}}
    with pytest.raises(PreflightError, match="managed by DataScienceCluster default-dsc, which would recreate it"):
        check_hand_over(_state(cr=owned))
    # Already being deleted (its owner let go, the stopped operator cannot clean up): proceed.
    owned["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    check_hand_over(_state(cr=owned))


def test_unfinished_trainjobs_protect_their_runtime_only():
    from trainerctl.cluster.trainer.in_use import referenced_by, runtime_key
    from trainerctl.cluster.trainer.verify.views import TrainJob
    from trainerctl.cluster.manager.objects import Ref

    def is_finished(job: dict) -> bool:
        return TrainJob.read({"metadata": {"name": "j", "namespace": "team-a"}, **job}).finished

    done = {"status": {"conditions": [{"type": "Complete", "status": "True"}]}}
    failed = {"status": {"conditions": [{"type": "Failed", "status": "True"}]}}
    suspended = {"spec": {"suspend": True}, "status": {"conditions": [{"type": "Suspended", "status": "True"}]}}
    assert is_finished(done) and is_finished(failed) and not is_finished(suspended) and not is_finished({})
    refs = {runtime_key("ClusterTrainingRuntime", "team-a", "a"): ["team-a/j1"],
            runtime_key("TrainingRuntime", "team-b", "b"): ["team-b/j2"]}
    assert referenced_by(refs, Ref("trainer.kubeflow.org", "ClusterTrainingRuntime", "", "a")) == ["team-a/j1"]
    assert referenced_by(refs, Ref("trainer.kubeflow.org", "TrainingRuntime", "team-b", "b")) == ["team-b/j2"]
    assert referenced_by(refs, Ref("trainer.kubeflow.org", "TrainingRuntime", "team-c", "b")) == []
    assert referenced_by(refs, Ref("", "ConfigMap", "", "a")) == []


def test_only_what_the_operator_applied_seeds_the_prune_set():
    from trainerctl.cluster.client.discovery import Resource
    from trainerctl.cluster.trainer.operator_inventory import seed
    from trainerctl.cluster.manager.objects import Ref
    from trainerctl.cluster.manager.listing import Found

    def found(group, version, kind, resource, namespaced, name, manager, ns=ODH_NS):
        res = Resource(group, version, kind, resource, namespaced)
        meta = {"name": name, "managedFields": [{"manager": manager, "operation": "Apply"}]}
        return Found(Ref(group, kind, ns if namespaced else "", name), res, meta)

    inv = seed([found("trainer.kubeflow.org", "v1alpha1", "ClusterTrainingRuntime", "clustertrainingruntimes", False,
                      "old", MANAGER),
                found("", "v1", "ConfigMap", "configmaps", True, "mine", "someone-else"),
                found("", "v1", "ConfigMap", "configmaps", True, "elsewhere", MANAGER, ns="team-b"),
                found("", "v1", "Namespace", "namespaces", False, ODH_NS, MANAGER),
                found("apiextensions.k8s.io", "v1", "CustomResourceDefinition", "customresourcedefinitions", False,
                      "x.example.com", "platform.opendatahub.io")], ODH_NS, [])
    assert list(inv.entries) == ["trainer.kubeflow.org/ClusterTrainingRuntime//old"]
    assert inv.entries["trainer.kubeflow.org/ClusterTrainingRuntime//old"].stage == "admitted"
    assert seed([], ODH_NS, []) is None


def test_the_operator_can_write_while_its_cr_exists_or_its_pods_are_ready():
    from trainerctl.cluster.trainer.go_operator import OperatorDeployment, OperatorState

    cr = {"metadata": {"name": TRAINER_CR}, "spec": {}}
    stopped = OperatorDeployment(OPERATOR_NS, "trainer-operator-controller-manager", 0, 0)
    running = OperatorDeployment(OPERATOR_NS, "trainer-operator-controller-manager", 1, 1)
    assert not OperatorState().can_write and not OperatorState(deployments=[stopped]).can_write
    only_cr = OperatorState(cr=cr, deployments=[stopped])
    assert only_cr.can_write and only_cr.app_namespace == "opendatahub"  # the operator's default
    assert only_cr.refusal() == (f"the Go trainer-operator can still write to this cluster (its Trainer {TRAINER_CR} "
                                 "exists): re-run with --take-over-operator to stop it and hand over safely "
                                 "(see docs/migration-operator.md#migrating-from-the-go-trainer-operator)")
    assert "has 1 ready replica(s)" in OperatorState(deployments=[running]).refusal()
