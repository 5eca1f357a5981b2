"""Manager options through the real render pipeline."""

from __future__ import annotations

import pytest

from trainerctl.render.controller import resolve
from trainerctl.render import RenderOptions, render
from trainerctl.render.output import write_stream

from tests.support.kubectl import kustomize

DEPLOYMENT = "kubeflow-trainer-controller-manager"
OWNER = ("platform.opendatahub.io/part-of", "trainer")


def _render(upstream, ref: str, manager=None, mirrors=()):
    repo, _, tag = ref.partition("/")
    return render(RenderOptions(source_path=upstream / repo / tag, manager=manager, use_lock=False,
                                remote_mirrors=list(mirrors), env={})).objects


def _find(objects, kind, name=DEPLOYMENT):
    found = [o for o in objects if o["kind"] == kind and o["metadata"]["name"] == name]
    return found[0] if found else None


@pytest.fixture(scope="module")
def odh_default(upstream):
    return _render(upstream, "opendatahub-trainer/odh-3.5.0")


def test_no_options_is_byte_identical(upstream, odh_default):
    baseline = write_stream(odh_default)
    for manager in (None, {}, resolve(), resolve({}, [])):
        assert write_stream(_render(upstream, "opendatahub-trainer/odh-3.5.0", manager)) == baseline
    assert _find(odh_default, "PodDisruptionBudget") is None
    assert "replicas" not in _find(odh_default, "Deployment")["spec"]


def test_ha_render(upstream, odh_default):
    objects = _render(upstream, "opendatahub-trainer/odh-3.5.0", resolve(ha=True))
    dep = _find(objects, "Deployment")
    selector = dep["spec"]["selector"]["matchLabels"]
    assert dep["spec"]["replicas"] == 2
    assert dep["spec"]["template"]["spec"]["affinity"] == {"podAntiAffinity": {
        "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 100, "podAffinityTerm": {
            "labelSelector": {"matchLabels": selector}, "topologyKey": "kubernetes.io/hostname"}}]}}
    pdb = _find(objects, "PodDisruptionBudget")
    assert pdb["apiVersion"] == "policy/v1"
    assert pdb["metadata"]["namespace"] == "opendatahub"
    assert pdb["metadata"]["labels"][OWNER[0]] == OWNER[1]
    assert pdb["spec"] == {"minAvailable": 1, "selector": {"matchLabels": selector}}
    # the selector is the Deployment's own and is not widened by the ownership label
    assert OWNER[0] not in selector
    # nothing else moved: drop the three changes and the rest is the default render
    dep["spec"].pop("replicas")
    dep["spec"]["template"]["spec"].pop("affinity")
    objects.remove(pdb)
    assert write_stream(objects) == write_stream(odh_default)


def test_each_option_in_the_render(upstream):
    opts = resolve({
        "replicas": 3,
        "podDisruptionBudget": {"maxUnavailable": 1},
        "topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone",
                                       "whenUnsatisfiable": "ScheduleAnyway"}],
        "priorityClassName": "system-cluster-critical",
        "affinity": {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 1, "preference": {"matchExpressions": [{"key": "infra", "operator": "Exists"}]}}]}},
        "nodeSelector": {"kubernetes.io/os": "linux"},
        "tolerations": [{"key": "infra", "operator": "Exists", "effect": "NoSchedule"}],
    }, ["manager.resources.requests.cpu=100m", "manager.resources.limits.memory=1Gi"])
    objects = _render(upstream, "opendatahub-trainer/odh-3.5.0", opts)
    dep = _find(objects, "Deployment")
    pod = dep["spec"]["template"]["spec"]
    selector = dep["spec"]["selector"]["matchLabels"]
    assert dep["spec"]["replicas"] == 3
    assert pod["topologySpreadConstraints"][0]["labelSelector"] == {"matchLabels": selector}
    assert pod["priorityClassName"] == "system-cluster-critical"
    assert list(pod["affinity"]) == ["nodeAffinity"]
    assert pod["nodeSelector"] == {"kubernetes.io/os": "linux"}
    assert pod["tolerations"][0]["key"] == "infra"
    manager = next(c for c in pod["containers"] if c["name"] == "manager")
    assert manager["resources"] == {"requests": {"cpu": "100m"}, "limits": {"memory": "1Gi"}}
    assert _find(objects, "PodDisruptionBudget")["spec"]["maxUnavailable"] == 1
    # trainerctl never creates a PriorityClass
    assert not [o for o in objects if o["kind"] == "PriorityClass"]


def test_kubeflow_overlay_patches_only_the_trainer_deployment(upstream, remotes):  # noqa: F811
    """overlays/manager also ships JobSet's controller Deployment; only Trainer's is patched."""
    base = _render(upstream, "kubeflow-trainer/v2.3.0", None, remotes.mirrors)
    objects = _render(upstream, "kubeflow-trainer/v2.3.0", resolve(ha=True), remotes.mirrors)
    deployments = {o["metadata"]["name"]: o for o in objects if o["kind"] == "Deployment"}
    assert len(deployments) >= 2
    assert deployments[DEPLOYMENT]["spec"]["replicas"] == 2
    for name, dep in deployments.items():
        if name != DEPLOYMENT:
            assert dep == next(o for o in base if o["kind"] == "Deployment" and o["metadata"]["name"] == name)
    assert [o["metadata"]["name"] for o in objects if o["kind"] == "PodDisruptionBudget"] == [DEPLOYMENT]


def _cli(capsys, *args):
    from trainerctl.cli import main

    capsys.readouterr()
    code = main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_cli_flags_and_config_file(upstream, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)  # no stray ./trainerctl.yaml or lock file
    source = str(upstream / "opendatahub-trainer" / "odh-3.5.0")
    code, plain, _ = _cli(capsys, "render", "--source", source, "--no-lock")
    assert code == 0
    code, ha, _ = _cli(capsys, "render", "--source", source, "--no-lock", "--ha")
    assert code == 0 and ha == write_stream(_render(upstream, "opendatahub-trainer/odh-3.5.0", resolve(ha=True)))
    assert ha != plain
    config = tmp_path / "ci-settings.yaml"
    config.write_text("manager:\n  ha: true\n  replicas: 3\n")
    code, out, _ = _cli(capsys, "render", "--source", source, "--no-lock", "--config", str(config),
                        "--set", "manager.replicas=4")
    dep = _find([d for d in __import__("yaml").safe_load_all(out) if d], "Deployment")
    assert code == 0 and dep["spec"]["replicas"] == 4  # --set beats the file, the file beats --ha
    config.write_text("manager:\n  replicas: 0\n")
    code, out, err = _cli(capsys, "render", "--source", source, "--no-lock", "--config", str(config))
    assert code == 2 and out == ""
    assert err.strip() == (f"error: {config}: manager.replicas: must be >= 1, got 0 (zero controller pods means "
                           "every TrainJob and runtime create or update is rejected by the webhooks)")
    code, _, err = _cli(capsys, "render", "--source", source, "--no-lock",
                        "--set", "manager.podDisruptionBudget.minAvailable=1",
                        "--set", "manager.podDisruptionBudget.maxUnavailable=1")
    assert code == 2 and "set minAvailable or maxUnavailable, not both" in err
    code, _, err = _cli(capsys, "render", "--source", source, "--no-lock", "--set", "manager.podDisruptionBudget.enabled=true")
    assert code == 0 and "warning: manager.podDisruptionBudget allows no disruption with 1 replica(s): it blocks node drains" in err


def test_overlay_patches_build_with_kustomize(upstream, odh_default, tmp_path):
    """manager_overlay's patches, used in a kustomization over the rendered Deployment, give what
    apply_manager_options gives (trainerctl's engine and kubectl agree)."""
    import yaml

    from trainerctl.kustomize import build, build_yaml
    from trainerctl.render.controller import apply_manager_options, manager_overlay

    opts = resolve({"nodeSelector": {"kubernetes.io/os": "linux"}, "resources": {"limits": {"memory": "1Gi"}}},
                   ha=True)
    dep = _find(odh_default, "Deployment")
    patches, resources = manager_overlay(opts, dep)
    (tmp_path / "deployment.yaml").write_text(yaml.safe_dump(dep, sort_keys=False))
    (tmp_path / "pdb.yaml").write_text(yaml.safe_dump(resources[0], sort_keys=False))
    (tmp_path / "kustomization.yaml").write_text(yaml.safe_dump({
        "apiVersion": "kustomize.config.k8s.io/v1beta1", "kind": "Kustomization",
        "resources": ["deployment.yaml", "pdb.yaml"], "patches": patches}, sort_keys=False))
    expected = apply_manager_options([dep], opts)
    assert build(str(tmp_path)) == expected
    kubectl = kustomize(tmp_path)
    assert kubectl.returncode == 0, kubectl.stderr
    assert kubectl.stdout == build_yaml(str(tmp_path))
