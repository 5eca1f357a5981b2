"""Uninstall removes what is ours, keeps CRDs, TrainJobs and the namespace."""

from __future__ import annotations

import copy

import pytest

from tests.support.cluster import FakeController, ODH_NS, live_objects, odh_objects, prepare_cluster_for_odh, CRDS, CTR, user_trainjob
from tests.support.actions import install
from trainerctl.cluster.install import InstallOptions
from trainerctl.cluster.trainer.policy import LEGACY_FINALIZER
from tests.support.actions import uninstall
from trainerctl.cluster.uninstall import UninstallOptions
from trainerctl.cluster.client.client import ApiError
from trainerctl.errors import InputError

def test_uninstall_keeps_crds_and_trainjobs_then_delete_crds(env, capsys):
    from trainerctl.cli import main

    prepare_cluster_for_odh(env.cluster)
    objects = odh_objects()
    with FakeController(env, objects):
        report = install(objects, cluster=env.cluster, namespace=ODH_NS, options=InstallOptions(timeout=60))
        user_trainjob(env)
        # A runtime still holding the finalizer older controllers put on runtimes in use.
        env.cluster.request("PATCH", f"{CTR}/torch-distributed", body={"metadata": {"finalizers": [LEGACY_FINALIZER]}},
                            content_type="application/merge-patch+json")
        # --dry-run deletes nothing (the API server ignores a dryRun query when DeleteOptions come in the body).
        dry = uninstall(cluster=env.cluster, namespace=ODH_NS, options=UninstallOptions(dry_run=True, timeout=30))
        assert dry.objects and all(v is not None for v in live_objects(env, report).values())
        result = uninstall(cluster=env.cluster, namespace=ODH_NS, options=UninstallOptions(timeout=30))
    assert not result.failed
    live = live_objects(env, report)
    kept = {k for k, v in live.items() if v is not None}
    assert kept == {f"/Namespace//{ODH_NS}", *(k for k in live if "/CustomResourceDefinition/" in k)}
    assert env.get(f"/apis/trainer.kubeflow.org/v1alpha1/namespaces/{ODH_NS}/trainjobs/users-job") is not None
    assert env.get(f"/api/v1/namespaces/{ODH_NS}/configmaps/trainerctl-inventory") is None
    # Our webhooks went first, then the runtimes (whose finalizer strip they would have judged).
    order = [o.stage for o in result.objects]
    assert order[0] == "webhooks" and order.index("admitted") > order.index("webhooks")

    again = uninstall(cluster=env.cluster, namespace=ODH_NS)
    assert again.objects == [] and not again.failed

    # A user's runtime still holding the legacy finalizer: only a v2.0-v2.2 controller removes it,
    # so --delete-crds must, or the CRD's deletion waits for it until the time-out.
    users_runtime = copy.deepcopy(next(o for o in objects if o["kind"] == "ClusterTrainingRuntime"))
    users_runtime["metadata"] = {"name": "users-runtime", "finalizers": [LEGACY_FINALIZER]}
    env.cluster.request("POST", CTR, body=users_runtime)

    # CRDs only with --yes: without a terminal to ask on, refuse and delete nothing.
    with pytest.raises(InputError, match=r"also deletes 1 ClusterTrainingRuntime, 1 TrainJob; refusing without --yes"):
        uninstall(cluster=env.cluster, namespace=ODH_NS, options=UninstallOptions(delete_crds=True))
    assert env.get(f"{CRDS}/trainjobs.trainer.kubeflow.org") is not None
    assert main(["uninstall", "--kubeconfig", env.kubeconfig, "-n", ODH_NS, "--delete-crds"]) == 2
    assert "refusing without --yes" in capsys.readouterr().err
    assert main(["uninstall", "--kubeconfig", env.kubeconfig, "-n", ODH_NS, "--delete-crds", "--yes"]) == 0
    for name in ("trainjobs", "trainingruntimes", "clustertrainingruntimes"):
        assert env.get(f"{CRDS}/{name}.trainer.kubeflow.org") is None
    assert env.get(f"{CRDS}/jobsets.jobset.x-k8s.io") is not None  # not ours
    assert env.get(f"/api/v1/namespaces/{ODH_NS}") is not None


def test_uninstall_does_not_need_the_webhooks_backend(env):
    """The controller is broken (its webhook server does not answer) and a runtime holds the legacy
    finalizer: stripping it is an UPDATE our validating webhook judges with failurePolicy Fail, so
    uninstall must remove the webhook configurations before it writes anything they admit."""
    prepare_cluster_for_odh(env.cluster)
    objects = odh_objects()
    with FakeController(env, objects):
        report = install(objects, cluster=env.cluster, namespace=ODH_NS, options=InstallOptions(timeout=60))
        env.cluster.request("PATCH", f"{CTR}/torch-distributed", body={"metadata": {"finalizers": [LEGACY_FINALIZER]}},
                            content_type="application/merge-patch+json")
    # The backend is gone now: the API server refuses what the webhook judges.
    with pytest.raises(ApiError, match="failed calling webhook"):
        env.cluster.request("PATCH", f"{CTR}/torch-distributed", body={"metadata": {"labels": {"probe": "x"}}},
                            content_type="application/merge-patch+json")
    result = uninstall(cluster=env.cluster, namespace=ODH_NS, options=UninstallOptions(timeout=60))
    assert not result.failed, [(o.display, o.message) for o in result.objects if o.action == "failed"]
    kept = {k for k, v in live_objects(env, report).items() if v is not None}
    assert kept == {f"/Namespace//{ODH_NS}", *(k for k in kept if "/CustomResourceDefinition/" in k)}
