"""Upgrades prune what the new render dropped, and only that; selector changes recreate."""

from __future__ import annotations

import pytest

from tests.support.cluster import CTR, FakeController, KF_NS, ODH_NS, OWNER, kubeflow_objects, live_objects, odh_objects, prepare_cluster_for_odh, user_trainjob
from tests.support.actions import install
from tests.support.actions import session
from trainerctl.cluster.install import InstallOptions, RunFailed
from trainerctl.errors import EXIT_PREFLIGHT

DEPLOY = f"/apis/apps/v1/namespaces/{ODH_NS}/deployments/kubeflow-trainer-controller-manager"


def with_old_selector(objects: list[dict]) -> list[dict]:
    """Test-only: give the 3.4 controller Deployment a selector the 3.5 one does not have, as
    releases that changed their labels did; the selector is immutable, so only recreation helps."""
    for o in objects:
        if o["kind"] == "Deployment":
            o["spec"]["selector"]["matchLabels"]["app.kubernetes.io/version"] = "odh-3.4"
            o["spec"]["template"]["metadata"]["labels"]["app.kubernetes.io/version"] = "odh-3.4"
    return objects


def configmap(name: str, labels: dict) -> dict:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": ODH_NS, "labels": labels},
            "data": {"k": "v"}}


def test_odh_upgrade_prunes_only_what_it_applied_and_recreates_on_selector_change(env):
    prepare_cluster_for_odh(env.cluster)
    old, new = with_old_selector(odh_objects("odh-3.4.0")), odh_objects("odh-3.5.0")
    with FakeController(env, old + new):
        first = install(old, cluster=env.cluster, namespace=ODH_NS, source={"ref": "odh-3.4.0"},
                        options=InstallOptions(timeout=60))
        old_uid = env.get(DEPLOY)["metadata"]["uid"]
        user_trainjob(env)
        cms = f"/api/v1/namespaces/{ODH_NS}/configmaps"
        env.cluster.request("POST", cms, body=configmap("labelled-by-someone", {OWNER[0]: OWNER[1]}))
        env.cluster.request("POST", cms, body=configmap("unlabelled", {}))
        report = install(new, cluster=env.cluster, namespace=ODH_NS, source={"ref": "odh-3.5.0"},
                         options=InstallOptions(timeout=60))
    pruned = sorted(o.name for o in report.objects if o.action == "pruned")
    assert pruned == sorted(["torch-distributed-cpu-torch291-py312", "torch-distributed-cuda130-torch291-py312",
                             "training-hub-th06-cpu-torch291-py312", "training-hub-th06-cuda130-torch291-py312",
                             "rhoai-config-f25cdkkf5h"])
    recreated = [o for o in report.objects if o.action == "recreated"]
    assert [o.name for o in recreated] == ["kubeflow-trainer-controller-manager"]
    dep = env.get(DEPLOY)
    assert dep["metadata"]["uid"] != old_uid
    assert "app.kubernetes.io/version" not in dep["spec"]["selector"]["matchLabels"]
    for name in pruned[:-1]:
        assert env.get(f"{CTR}/{name}") is None
    # Never in the inventory, not labelled, or a user's: untouched.
    assert env.get(f"{cms}/labelled-by-someone") is not None
    assert env.get(f"{cms}/unlabelled") is not None
    assert env.get(f"/apis/trainer.kubeflow.org/v1alpha1/namespaces/{ODH_NS}/trainjobs/users-job") is not None
    # The result is what a clean install of 3.5.0 has.
    live = live_objects(env, report)
    assert {k for k, v in live.items() if v is not None and not k.endswith(tuple(pruned))} == \
        {k for k in live if not k.endswith(tuple(pruned))}

    inv = session(env.cluster, ODH_NS).resources.read_inventory()
    assert inv.source == {"ref": "odh-3.5.0"} and inv.complete
    assert not any(name in k for k in inv.entries for name in pruned)
    assert {o.name for o in first.objects} - {o.name for o in report.objects if o.action != "pruned"} == set(pruned)


def test_no_recreate_refuses_the_selector_change(env):
    prepare_cluster_for_odh(env.cluster)
    old, new = with_old_selector(odh_objects("odh-3.4.0")), odh_objects("odh-3.5.0")
    with FakeController(env, old + new):
        install(old, cluster=env.cluster, namespace=ODH_NS, options=InstallOptions(timeout=60))
        uid = env.get(DEPLOY)["metadata"]["uid"]
        with pytest.raises(RunFailed, match=r"immutable field, not recreated \(--no-recreate\)"):
            install(new, cluster=env.cluster, namespace=ODH_NS, options=InstallOptions(timeout=60, recreate=False))
    assert env.get(DEPLOY)["metadata"]["uid"] == uid


def test_kubeflow_upgrade_and_the_refused_skip_over_2_3(env):
    old, new = kubeflow_objects("v2.2.0"), kubeflow_objects("v2.3.0")
    with FakeController(env, old + new):
        install(old, cluster=env.cluster, namespace=KF_NS, source={"trainer_version": "v2.2.0"},
                options=InstallOptions(timeout=60))
        # Straight from 2.2 to after 2.3 is refused before anything is written.
        with pytest.raises(RunFailed) as info:
            install(new, cluster=env.cluster, namespace=KF_NS, source={"trainer_version": "v2.4.0"},
                    options=InstallOptions(timeout=60))
        assert info.value.exit_code == EXIT_PREFLIGHT and "upgrade to a 2.3 release first" in str(info.value)
        report = install(new, cluster=env.cluster, namespace=KF_NS, source={"trainer_version": "v2.3.0"},
                         options=InstallOptions(timeout=60))
    assert not report.failed
    assert report.counts().get("configured", 0) > 0
    assert not [o for o in report.objects if o.action == "pruned"]
    live = live_objects(env, report)
    assert all(v is not None for v in live.values())
