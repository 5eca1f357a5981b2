"""Handing over from a Helm release, on the real API server: refused until asked, adopted in place,
the release's other objects pruned by the usual rules, its records deleted last, an interrupted
hand-over finished by the next run.

Helm itself is played here (tests/e2e/test_e2e_helm.py has the real one): kubeflow/trainer v2.2.0
`overlays/manager` applied with field manager `helm` and Helm's annotations and label, CRDs as
Helm's crds/ folder installs them (no annotations), the chart's runtime installer (its ConfigMap
and ClusterRole in the manifest, the runtime it applies with kubectl and labels), a chart runtime a
suspended TrainJob uses, and the release record as Helm's storage driver writes it.
"""

from __future__ import annotations

import base64
import copy

import pytest
import yaml

from tests.support.cluster import (CRDS, CTR, KF, KF_NS, FakeController, apply_once_admitted, apply_raw,
                                   build_overlay, kubeflow_objects, wait_established)
from tests.support.helm_records import encode_payload
from trainerctl.cluster.operations import helm_releases
from tests.support.actions import install
from tests.support.actions import session
from trainerctl.cluster.install import InstallOptions, RunFailed
from trainerctl.errors import EXIT_BAD_INPUT, EXIT_INTERRUPTED, EXIT_PREFLIGHT
from trainerctl.ui import Progress

RELEASE = "kubeflow-trainer"
RECORD = f"/api/v1/namespaces/{KF_NS}/secrets/sh.helm.release.v1.{RELEASE}.v1"
INSTALLER = f"{RELEASE}-runtimes-installer"
JOBS = "/apis/trainer.kubeflow.org/v1alpha1/namespaces/{ns}/trainjobs"


def _runtime(name: str, template: dict) -> dict:
    out = copy.deepcopy(template)
    out["metadata"] = {"name": name, "labels": {"trainer.kubeflow.org/webhook-validation": "disabled"}}
    return out


def _marked(obj: dict) -> dict:
    out = copy.deepcopy(obj)
    meta = out["metadata"]
    meta.setdefault("annotations", {}).update({helm_releases.NAME_ANNOTATION: RELEASE, helm_releases.NAMESPACE_ANNOTATION: KF_NS})
    meta.setdefault("labels", {}).update({"app.kubernetes.io/managed-by": "Helm", "helm.sh/chart": "kubeflow-trainer-2.2.0"})
    return out


def users_objects(env) -> list[dict]:
    """Objects a user made, carrying our label but no Helm annotations, that a record names:
    anyone allowed to create a Secret in the namespace can write one that names anything."""
    for ns in ("team-b", KF_NS):
        apply_raw(env.cluster, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}, "user")
    labels = {"platform.opendatahub.io/part-of": "trainer"}
    made = [{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": ns, "labels": labels}}
            for ns, name in (("team-b", "kubeflow-trainer-controller-manager"), (KF_NS, "users-labelled"))]
    made.append({"apiVersion": "batch/v1", "kind": "Job", "metadata": {
        "name": "users-job", "namespace": KF_NS, "labels": labels},
        "spec": {"suspend": True, "template": {"spec": {"restartPolicy": "Never",
                                                        "containers": [{"name": "c", "image": "busybox"}]}}}})
    for obj in made:
        apply_raw(env.cluster, obj, "user")
    return made


def helm_install(env, runtime_template: dict, with_record: bool = True, names: list[dict] = ()) -> dict:
    """What `helm install` of the chart leaves; returns {name: uid} of what it made. `names`: objects
    the record names as its hooks (a Job) or in its manifest (the rest) that Helm did not make."""
    cluster = env.cluster
    crds, manifest = [], []
    for obj in build_overlay(KF, "v2.2.0", "overlays/manager"):
        if obj["kind"] == "CustomResourceDefinition":
            crds.append(obj)  # crds/: installed first, never annotated, not in the manifest
        else:
            manifest.append(_marked(obj))
    installer_runtime = _runtime("chart-installed", runtime_template)
    manifest += [
        _marked({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": INSTALLER, "namespace": KF_NS},
                 "data": {"runtimes.yaml": yaml.safe_dump(installer_runtime)}}),
        _marked({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": INSTALLER},
                 "rules": []}),
        _marked(_runtime("chart-in-use", runtime_template)),
        _marked({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {
            "name": "kept-by-policy", "namespace": KF_NS, "annotations": {"helm.sh/resource-policy": "keep"}}}),
    ]
    for obj in crds:
        apply_raw(cluster, obj, "helm")
    wait_established(cluster, *(crd["metadata"]["name"] for crd in crds))
    for obj in manifest:
        apply_once_admitted(cluster, obj, "helm")
    # The installer Job: kubectl apply --server-side of its ConfigMap's runtimes, then its label.
    installer_runtime["metadata"]["labels"]["trainer.kubeflow.org/managed-by"] = "runtimes-installer"
    apply_once_admitted(cluster, installer_runtime, "kubectl")
    if with_record:
        release = {"name": RELEASE, "namespace": KF_NS, "version": 1, "info": {"status": "deployed"},
                   "chart": {"metadata": {"name": "kubeflow-trainer", "version": "2.2.0"}},
                   "manifest": "---\n".join(yaml.safe_dump(o) for o in [*manifest, *(
                       n for n in names if n["kind"] != "Job")]),
                   "hooks": [{"name": n["metadata"]["name"], "kind": "Job", "events": ["post-install"],
                              "manifest": yaml.safe_dump(n)} for n in names if n["kind"] == "Job"]}
        cluster.request("POST", f"/api/v1/namespaces/{KF_NS}/secrets", body={
            "apiVersion": "v1", "kind": "Secret", "type": helm_releases.RELEASE_TYPE,
            "metadata": {"name": RECORD.rsplit("/", 1)[1], "namespace": KF_NS,
                         "labels": {"owner": "helm", "name": RELEASE, "status": "deployed", "version": "1"}},
            "data": {"release": base64.b64encode(encode_payload(release).encode()).decode()}})
    cluster.request("POST", JOBS.format(ns=KF_NS), body={
        "apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob",
        "metadata": {"name": "pending", "namespace": KF_NS},
        "spec": {"suspend": True, "runtimeRef": {"name": "chart-in-use"}}})
    return {o["metadata"]["name"]: o for o in manifest}


@pytest.fixture
def rendered():
    objects = kubeflow_objects("v2.3.0")
    torch = next(o for o in build_overlay(KF, "v2.3.0", "overlays/runtimes") if o["metadata"]["name"] == "torch-distributed")
    return objects, torch


def _uids(env, objects: list[dict]) -> dict[str, str]:
    from trainerctl.cluster.client.client import object_path
    from trainerctl.cluster.client.discovery import Discovery

    disc, out = Discovery(env.cluster), {}
    for obj in objects:
        res = disc.resolve(obj["apiVersion"], obj["kind"])
        ns = (obj["metadata"].get("namespace") or KF_NS) if res.namespaced else None
        live = env.get(object_path(res.group, res.version, res.resource, ns, obj["metadata"]["name"]))
        if live is not None:
            out[f"{obj['kind']}/{obj['metadata']['name']}"] = live
    return out


def _marks(obj: dict) -> list[str]:
    return helm_releases.ownership_patch(obj["metadata"])


def test_a_helm_release_is_refused_until_handed_over_and_the_flag_is_checked(env, rendered):
    objects, torch = rendered
    with FakeController(env, objects):
        helm_install(env, torch)
        before = {k: v["metadata"]["resourceVersion"] for k, v in _uids(env, objects).items()}
        with pytest.raises(RunFailed) as refused:
            install(objects, cluster=env.cluster, namespace=KF_NS)
        assert refused.value.exit_code == EXIT_PREFLIGHT
        assert str(refused.value) == (
            "Trainer here was installed by Helm (Helm release kubeflow-trainer in namespace kubeflow-system (chart "
            "kubeflow-trainer-2.2.0, revision 1, deployed)): re-run with --take-over-helm to hand it over to "
            "trainerctl (--dry-run shows the plan; see docs/migration-helm-kubectl.md#from-a-helm-release)")
        with pytest.raises(RunFailed) as dry:
            install(objects, cluster=env.cluster, namespace=KF_NS, options=InstallOptions(dry_run=True))
        assert dry.value.exit_code == EXIT_PREFLIGHT and dry.value.report.objects  # the plan, then the line
        with pytest.raises(RunFailed) as elsewhere:
            install(objects, cluster=env.cluster, namespace="other", options=InstallOptions(take_over_helm=True))
        assert elsewhere.value.exit_code == EXIT_BAD_INPUT
        assert "Helm release kubeflow-trainer is in namespace kubeflow-system" in str(elsewhere.value)
        with pytest.raises(RunFailed) as no_prune:
            install(objects, cluster=env.cluster, namespace=KF_NS,
                    options=InstallOptions(take_over_helm=True, prune=False))
        assert no_prune.value.exit_code == EXIT_BAD_INPUT and "--no-prune" in str(no_prune.value)
        assert {k: v["metadata"]["resourceVersion"] for k, v in _uids(env, objects).items()} == before
        assert env.get(RECORD) is not None


class InterruptAtPrune(Progress):
    """Ctrl-C the moment the hand-over starts pruning (after every apply, before the records go)."""

    def stage(self, name: str, count: int) -> None:
        super().stage(name, count)
        if name == "prune" and not getattr(self, "sent", False):
            self.sent = True
            raise KeyboardInterrupt


def test_an_interrupted_hand_over_is_finished_by_the_next_run_and_adopts_in_place(env, rendered):
    objects, torch = rendered
    with FakeController(env, objects):
        users = users_objects(env)
        helm_install(env, torch, names=users)
        shared = _uids(env, objects)
        assert len(shared) == len(objects)  # v2.2.0 and v2.3.0 overlays/manager name the same objects
        opts = InstallOptions(take_over_helm=True, timeout=60)
        with pytest.raises(RunFailed) as stopped:
            install(objects, cluster=env.cluster, namespace=KF_NS, options=opts,
                    progress=InterruptAtPrune(len(objects), enabled=False))
        assert stopped.value.exit_code == EXIT_INTERRUPTED
        assert env.get(RECORD) is not None  # the records go last: the next run still knows the release
        with pytest.raises(RunFailed):
            install(objects, cluster=env.cluster, namespace=KF_NS)  # still refused without the flag

        report = install(objects, cluster=env.cluster, namespace=KF_NS, options=opts)
    results = {(o.kind, o.name): o for o in report.objects}
    assert env.get(RECORD) is None and results[("Secret", RECORD.rsplit("/", 1)[1])].action == "deleted"
    after = _uids(env, objects)
    for key, obj in shared.items():
        assert after[key]["metadata"]["uid"] == obj["metadata"]["uid"], f"{key} was recreated"
        assert not _marks(after[key]), (key, _marks(after[key]))
        assert "helm" not in {e["manager"] for e in after[key]["metadata"].get("managedFields") or []}, key
    # The release's objects the render lacks: pruned, with whose they were; the runtime in use kept.
    assert env.get(f"/api/v1/namespaces/{KF_NS}/configmaps/{INSTALLER}") is None
    assert env.get(f"/apis/rbac.authorization.k8s.io/v1/clusterroles/{INSTALLER}") is None
    assert env.get(f"{CTR}/chart-installed") is None
    assert results[("ClusterTrainingRuntime", "chart-installed")].message == \
        "was Helm release kubeflow-trainer (its runtime installer)'s"
    assert env.get(f"/api/v1/namespaces/{KF_NS}/configmaps/kept-by-policy") is not None  # Helm would keep it too
    # What the record names but the object does not prove the release's: listed, left alone, forgotten.
    for obj, why in zip(users, ("in namespace team-b, outside Helm release kubeflow-trainer's namespace",
                                "annotations do not name Helm release kubeflow-trainer in kubeflow-system",
                                "not marked helm.sh/hook in kubeflow-system")):
        meta = obj["metadata"]
        resource = "jobs" if obj["kind"] == "Job" else "configmaps"
        api = "/apis/batch/v1" if obj["kind"] == "Job" else "/api/v1"
        assert env.get(f"{api}/namespaces/{meta['namespace']}/{resource}/{meta['name']}") is not None, meta
        result = next(o for o in report.objects if (o.kind, o.namespace, o.name) ==
                      (obj["kind"], meta["namespace"], meta["name"]))
        assert result.action == "skipped" and why in result.message, result.message
    recorded = session(env.cluster, KF_NS).resources.read_inventory().entries
    assert not [k for k in recorded if k.endswith(("/users-labelled", "/users-job"))
                or "/team-b/" in k], sorted(recorded)
    assert "helm.sh/resource-policy is keep" in results[("ConfigMap", "kept-by-policy")].message
    kept = env.get(f"{CTR}/chart-in-use")
    assert kept is not None and not _marks(kept) and kept["metadata"]["labels"]["platform.opendatahub.io/part-of"] == "trainer"
    assert "labelled as ours" in results[("ClusterTrainingRuntime", "chart-in-use")].message
    # CRDs (never pruned, and here shared anyway) are adopted from Helm's manager.
    for crd in (o for o in objects if o["kind"] == "CustomResourceDefinition"):
        live = env.get(f"{CRDS}/{crd['metadata']['name']}")
        assert "helm" not in {e["manager"] for e in live["metadata"]["managedFields"]}

    # Once the job is gone, the kept runtime goes like any object of ours; then nothing to do.
    env.cluster.request("DELETE", JOBS.format(ns=KF_NS) + "/pending")
    with FakeController(env, objects):
        again = install(objects, cluster=env.cluster, namespace=KF_NS)
        assert [(o.name, o.action) for o in again.objects if o.action != "unchanged"] == [("chart-in-use", "pruned")]
        assert install(objects, cluster=env.cluster, namespace=KF_NS).changed == 0


def test_helm_marks_without_records_are_a_release_too(env, rendered):
    """`helm` records deleted by hand: the objects still say Helm owns them."""
    objects, torch = rendered
    with FakeController(env, objects):
        helm_install(env, torch, with_record=False)
        with pytest.raises(RunFailed) as refused:
            install(objects, cluster=env.cluster, namespace=KF_NS)
        assert "Helm release kubeflow-trainer in namespace kubeflow-system (chart unknown, revision 0, unknown)" \
            in str(refused.value)
        report = install(objects, cluster=env.cluster, namespace=KF_NS, options=InstallOptions(take_over_helm=True))
    assert report.failed == []
    for key, obj in _uids(env, objects).items():
        assert not _marks(obj), key
    # Without the release's manifest nothing of it is known beyond what the render has: kept.
    assert env.get(f"/api/v1/namespaces/{KF_NS}/configmaps/{INSTALLER}") is not None
    assert not [o for o in report.objects if o.action == "deleted"]
