"""install --ha leaves the PDB, replicas and anti-affinity live; a
re-install without --ha removes them again (fields dropped, PDB pruned)."""

from __future__ import annotations

from tests.support.cluster import FakeController, prepare_cluster_for_odh
from tests.support.actions import install
from trainerctl.cluster.install import InstallOptions
from trainerctl.render.controller import resolve
from trainerctl.render import RenderOptions, render

NS = "opendatahub"
NAME = "kubeflow-trainer-controller-manager"
DEPLOY = f"/apis/apps/v1/namespaces/{NS}/deployments/{NAME}"
PDB = f"/apis/policy/v1/namespaces/{NS}/poddisruptionbudgets/{NAME}"


def _render(shared, manager=None) -> list[dict]:
    objects = render(RenderOptions(source_path=shared / "upstream" / "opendatahub-trainer" / "odh-3.5.0",
                                   manager=manager, use_lock=False, env={})).objects
    # The rhoai overlay itself lists ImageStreams; the test cluster is not OpenShift.
    return [o for o in objects if o["kind"] != "ImageStream"]


def test_ha_install_then_without(env, shared_dir):  # noqa: F811
    prepare_cluster_for_odh(env.cluster)
    ha, plain = _render(shared_dir, resolve(ha=True)), _render(shared_dir)
    with FakeController(env, ha):
        first = install(ha, cluster=env.cluster, namespace=NS, options=InstallOptions(timeout=60))
        assert not first.failed
        dep = env.get(DEPLOY)
        assert dep["spec"]["replicas"] == 2
        anti = dep["spec"]["template"]["spec"]["affinity"]["podAntiAffinity"]
        term = anti["preferredDuringSchedulingIgnoredDuringExecution"][0]["podAffinityTerm"]
        assert term["topologyKey"] == "kubernetes.io/hostname"
        assert term["labelSelector"]["matchLabels"] == dep["spec"]["selector"]["matchLabels"]
        pdb = env.get(PDB)
        assert pdb["spec"]["minAvailable"] == 1
        assert pdb["spec"]["selector"]["matchLabels"] == dep["spec"]["selector"]["matchLabels"]
        managers = {m["manager"] for m in pdb["metadata"]["managedFields"]}
        assert "trainerctl" in managers

        second = install(plain, cluster=env.cluster, namespace=NS, options=InstallOptions(timeout=60))
    assert not second.failed
    assert [(o.kind, o.name) for o in second.objects if o.action == "pruned"] == [("PodDisruptionBudget", NAME)]
    assert env.get(PDB) is None
    dep = env.get(DEPLOY)
    assert "affinity" not in dep["spec"]["template"]["spec"]
    # replicas is no longer ours: the server's default (1) is back
    assert dep["spec"]["replicas"] == 1
    owners = [m for m in dep["metadata"]["managedFields"] if m["manager"] == "trainerctl"]
    assert owners and all("f:replicas" not in (m.get("fieldsV1") or {}).get("f:spec", {}) for m in owners)
