"""The hand-over from the Go operator on the e2e cluster, judged by the real controllers.

tests/cluster/test_migration.py proves the hand-over on the base test cluster, where a stand-in plays the
deployment controller, the operator's pod and the garbage collector. Here the real
kube-controller-manager (deployment controller, garbage collector), kwok (the operator's pod) and
the real Trainer controller do their parts; only the operator's own reconciler is played
(tests/support/fake_operator.py): the operator cannot be built here, and neither can the
opendatahub-io/trainer controller the `rhoai` overlay names (a fork keeps the upstream module
path, so the module proxy cannot serve it). So the operator's install is kubeflow/trainer v2.2.0
`overlays/manager` plus trainerctl's runtimes and two it no longer renders, applied as the
operator does, and trainerctl takes it over with v2.3.0. The real v2.2.0 controller adds the
legacy finalizer to the runtimes that TrainJobs use, as it did on every cluster the operator ran.
"""

from __future__ import annotations

import json

import pytest

from tests.support import e2e as h
from tests.support.cluster import wait_established
from tests.support.e2e import JOBS_NS, KF_NS, TRAINER
from tests.support.fake_operator import (CR_PATH, DEPLOY_PATH, GROUP, MANAGER, OPERATOR_NS, FakeOperator,
                                         as_operator_applied, labelled, operator_apply, operator_deployment,
                                         trainer_crd)
from tests.testenv.api import ApiError
from trainerctl.cluster.trainer.go_operator import CLEANUP_FINALIZER, TRAINER_CR
from trainerctl.cluster.trainer.policy import LEGACY_FINALIZER

FINISHED = "e2e-operator-finished"  # only a finished TrainJob used it: pruned
PENDING = "e2e-operator-pending"  # a suspended TrainJob references it: kept
CTR = f"{TRAINER}/clustertrainingruntimes"
V23 = "testenv-binary://trainer-controller-manager@v2.3.0"


def _remove_operator(api) -> None:
    """Whatever an earlier failure left of the operator: its Deployment, its CR (without running
    its cleanup), its API and namespace."""
    def gone(request, *args) -> None:
        try:
            request(*args)
        except ApiError as exc:
            if exc.status != 404:
                raise

    gone(api.request, "DELETE", DEPLOY_PATH)
    gone(h.merge_patch, api, CR_PATH, {"metadata": {"finalizers": None}})  # its cleanup must not run
    for path in (CR_PATH, f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/trainers.{GROUP}",
                 f"/api/v1/namespaces/{OPERATOR_NS}"):
        gone(api.request, "DELETE", path)
    h.wait_until(lambda: api.get_or_none(f"/api/v1/namespaces/{OPERATOR_NS}") is None,
                 120, f"namespace {OPERATOR_NS} to be deleted")


@pytest.fixture
def operator_slate(tctl, api):
    _remove_operator(api)
    h.cleanup_trainer(tctl, api)
    yield
    _remove_operator(api)
    h.cleanup_trainer(tctl, api)


def _operator_install(cluster, api, tctl) -> dict:
    """The operator's API, its running Deployment, its CR, and its install of Trainer v2.2.0."""
    from tests.support.cluster import apply_raw

    apply_raw(cluster, trainer_crd(), "olm")
    wait_established(cluster, f"trainers.{GROUP}", timeout=120)
    h.create_namespace(api, OPERATOR_NS)
    apply_raw(cluster, operator_deployment(), "olm")
    h.wait_until(lambda: h.deployment_available(api, OPERATOR_NS, "trainer-operator-controller-manager"),
                 120, "the operator's Deployment (a kwok pod)")
    cr = api.request("POST", f"/apis/{GROUP}/v1alpha1/trainers", {
        "apiVersion": f"{GROUP}/v1alpha1", "kind": "Trainer",
        "metadata": {"name": TRAINER_CR, "finalizers": [CLEANUP_FINALIZER]},
        "spec": {"managementState": "Managed", "appNamespace": KF_NS}})
    # Its ensureNamespace: the app namespace, labelled.
    api.request("POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {
        "name": KF_NS, "labels": {"platform.opendatahub.io/part-of": "trainer"}}})
    objects = tctl.render("v2.2.0") + [h.runtime_copy(tctl, "v2.2.0", FINISHED), h.runtime_copy(tctl, "v2.2.0", PENDING)]
    operator_apply(cluster, KF_NS, as_operator_applied(objects, cr), timeout=h.INSTALL_TIMEOUT)
    return cr


def test_8_hand_over_from_the_operator_keeps_what_trainjobs_need_under_the_real_controllers(operator_slate, tctl, api):
    from trainerctl.cluster.client.client import connect

    cluster = connect(tctl.kubeconfig)
    with FakeOperator(cluster, KF_NS) as operator:
        cr = _operator_install(cluster, api, tctl)
        assert operator.running()
        h.wait_until(lambda: h.deployment_available(api, KF_NS, h.TRAINER_DEPLOYMENT),
                     h.INSTALL_TIMEOUT, "the v2.2.0 Trainer controller")
        h.create_namespace(api, JOBS_NS)
        h.create_trainjob(api, h.trainjob("e2e-op-finished", JOBS_NS, runtime=FINISHED, num_nodes=1))
        h.create_trainjob(api, h.trainjob("e2e-op-pending", JOBS_NS, runtime=PENDING, num_nodes=1, suspend=True))
        h.wait_trainjob_complete(api, JOBS_NS, "e2e-op-finished")
        for name in (FINISHED, PENDING):
            h.wait_until(lambda name=name: LEGACY_FINALIZER in (
                api.request("GET", f"{CTR}/{name}")["metadata"].get("finalizers") or []),
                         120, f"the v2.2.0 controller to add {LEGACY_FINALIZER} to {name}")
        before = labelled(cluster, KF_NS)

        # While the operator can still write, install refuses in one line and writes nothing.
        install = ["install", *tctl.source_args("v2.3.0"), "--timeout", str(h.INSTALL_TIMEOUT)]
        refused = tctl.run(*install, expect=3)
        assert refused.stderr.count("\n") == 1 and "--take-over-operator" in refused.stderr, refused.stderr
        dry = json.loads(tctl.run(*install, "--take-over-operator", "--dry-run", "-o", "json").stdout)
        planned = {(o["kind"], o["name"]): o for o in dry["objects"]}
        assert planned[("ClusterTrainingRuntime", FINISHED)]["action"] == "pruned"
        assert f"{JOBS_NS}/e2e-op-pending" in planned[("ClusterTrainingRuntime", PENDING)]["message"]
        assert {k: m["resourceVersion"] for k, m in labelled(cluster, KF_NS).items()} == \
            {k: m["resourceVersion"] for k, m in before.items()}

        # The hand-over, with the default --wait.
        report = json.loads(tctl.run(*install, "--take-over-operator", "-o", "json").stdout)
        done = {(o["kind"], o["name"]): o for o in report["objects"]}
        assert report["summary"].get("failed", 0) == 0, report["summary"]
        assert done[("ClusterTrainingRuntime", FINISHED)]["action"] == "pruned"
        assert done[("ClusterTrainingRuntime", PENDING)]["action"] == "skipped"
        assert f"{JOBS_NS}/e2e-op-pending" in done[("ClusterTrainingRuntime", PENDING)]["message"]
        assert operator.deleted == [] and operator.raced == [] and operator.errors == [], \
            (operator.deleted, operator.raced, operator.errors)
    assert api.get_or_none(CR_PATH) is None
    assert api.request("GET", DEPLOY_PATH)["spec"]["replicas"] == 0

    # The real garbage collector had the CR's deletion to act on: nothing it owned went with it.
    after = labelled(cluster, KF_NS)
    assert {k for k in before if k not in after} == {f"trainer.kubeflow.org/ClusterTrainingRuntime//{FINISHED}"}
    for key, meta in after.items():
        assert meta["uid"] == before[key]["uid"], f"{key} was deleted and recreated"
        assert not any(r.get("uid") == cr["metadata"]["uid"] for r in meta.get("ownerReferences") or []), key

    # The v2.3.0 controller runs; no kept runtime has the legacy finalizer; the suspended job,
    # resumed, completes on the runtime the hand-over kept for it.
    h.wait_until(lambda: [
        p for p in h.trainer_pods(api)
        if (p["status"].get("containerStatuses") or [{}])[0].get("imageID") == V23 and h.condition(p, "Ready") == "True"],
        120, "the v2.3.0 binary to run the trainer pod")
    for item in api.request("GET", CTR)["items"]:
        assert LEGACY_FINALIZER not in (item["metadata"].get("finalizers") or []), item["metadata"]["name"]
    assert api.get_or_none(f"{TRAINER}/namespaces/{JOBS_NS}/trainjobs/e2e-op-finished") is not None
    h.merge_patch(api, f"{TRAINER}/namespaces/{JOBS_NS}/trainjobs/e2e-op-pending", {"spec": {"suspend": False}})
    h.wait_trainjob_complete(api, JOBS_NS, "e2e-op-pending")

    # What the operator owned is trainerctl's now.
    now = labelled(cluster, KF_NS)
    for key, meta in now.items():
        if key.endswith(f"/{PENDING}"):
            continue  # not rendered: kept as the operator left it until its TrainJob is done
        managers = {e["manager"] for e in meta.get("managedFields") or [] if not e.get("subresource")}
        assert MANAGER not in managers, (key, managers)
    # The kept runtime stayed on record: with its TrainJob finished, the next install prunes it,
    # and the one after that changes nothing.
    again = json.loads(tctl.run(*install, "-o", "json").stdout)
    assert [(o["name"], o["action"]) for o in again["objects"] if o["action"] != "unchanged"] == [(PENDING, "pruned")]
    assert api.get_or_none(f"{CTR}/{PENDING}") is None
    third = json.loads(tctl.run(*install, "-o", "json").stdout)
    assert third["summary"]["changed"] == 0, [o for o in third["objects"] if o["action"] != "unchanged"]
