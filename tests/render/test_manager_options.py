"""Parsing, layering and validation of the `manager:` options, and the patches they produce."""

from __future__ import annotations

import copy

import pytest

from trainerctl.errors import InputError
from trainerctl.render.controller import (
    NO_OPTIONS,
    apply_manager_options,
    manager_overlay,
    parse_set,
    resolve,
)

SELECTOR = {"app.kubernetes.io/name": "trainer", "app.kubernetes.io/component": "controller"}


def deployment() -> dict:
    return {
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "kubeflow-trainer-controller-manager", "namespace": "opendatahub",
                     "labels": dict(SELECTOR)},
        "spec": {"selector": {"matchLabels": dict(SELECTOR)},
                 "template": {"metadata": {"labels": dict(SELECTOR)},
                              "spec": {"containers": [{"name": "sidecar", "image": "s"},
                                                      {"name": "manager", "image": "m"}]}}},
    }


def objects() -> list[dict]:
    return [{"apiVersion": "v1", "kind": "Service", "metadata": {"name": "svc"}}, deployment(),
            {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingWebhookConfiguration",
             "metadata": {"name": "w"}}]


# --- parsing ---------------------------------------------------------------------------------

def test_parse_set_types_and_escaped_dots():
    block = parse_set([
        "manager.replicas=3",
        "manager.podDisruptionBudget.maxUnavailable=50%",
        r"manager.nodeSelector.kubernetes\.io/os=linux",
        "manager.tolerations=[{key: dedicated, operator: Exists, effect: NoSchedule}]",
        "manager.priorityClassName=system-cluster-critical",
    ])
    assert block == {
        "replicas": 3,
        "podDisruptionBudget": {"maxUnavailable": "50%"},
        "nodeSelector": {"kubernetes.io/os": "linux"},
        "tolerations": [{"key": "dedicated", "operator": "Exists", "effect": "NoSchedule"}],
        "priorityClassName": "system-cluster-critical",
    }


@pytest.mark.parametrize("flag,message", [
    ("replicas=2", "unknown key 'replicas'; supported keys start with 'manager.'"),
    ("manager.replicas", "expected KEY=VALUE"),
    ("image.foo=bar", "unknown key 'image.foo'"),
    ("manager.tolerations=[{", "--set manager.tolerations: not valid YAML"),
])
def test_parse_set_errors(flag, message):
    with pytest.raises(InputError, match=message.replace("[", r"\[").replace("(", r"\(")):
        parse_set([flag])


def test_nothing_set_is_empty():
    assert resolve().empty and resolve({}, []).empty and NO_OPTIONS.empty


# --- validation ------------------------------------------------------------------------------

@pytest.mark.parametrize("block,message", [
    ({"replicas": 0}, "manager.replicas: must be >= 1, got 0"),
    ({"replicas": -1}, "manager.replicas: must be >= 1"),
    ({"replicas": "two"}, "manager.replicas: expected a whole number >= 1"),
    ({"replicas": True}, "manager.replicas: expected a whole number >= 1"),
    ({"podDisruptionBudget": {"minAvailable": 1, "maxUnavailable": 1}}, "set minAvailable or maxUnavailable, not both"),
    ({"podDisruptionBudget": {"minAvailable": "half"}}, "minAvailable: expected a whole number >= 0 or a percentage"),
    ({"podDisruptionBudget": {"maxUnavailable": "150%"}}, "at most 100%"),
    ({"podDisruptionBudget": {"enable": True}}, "podDisruptionBudget: unknown key 'enable'"),
    ({"podDisruptionBudget": {"enabled": "yes"}}, "enabled: expected true or false"),
    ({"replica": 2}, "unknown key 'replica'"),
    ({"priorityClassName": "Not_Valid"}, "priorityClassName: expected the name of an existing PriorityClass"),
    ({"affinity": {"nodeAfinity": {}}}, "affinity: unknown key 'nodeAfinity'"),
    ({"nodeSelector": {"gpu": True}}, "nodeSelector: expected label keys and string values"),
    ({"nodeSelector": ["a"]}, "nodeSelector: expected a mapping, got a list"),
    ({"tolerations": {"key": "a"}}, "tolerations: expected a list"),
    ({"tolerations": [{"key": "a", "operator": "In"}]}, r"tolerations\[0\].operator: expected Equal or Exists"),
    ({"tolerations": [{"key": "a", "effect": "NoRun"}]}, r"tolerations\[0\].effect"),
    ({"tolerations": [{"key": "a", "operator": "Exists", "value": "x"}]}, "must be empty when operator is Exists"),
    ({"topologySpreadConstraints": [{"maxSkew": 0, "topologyKey": "z", "whenUnsatisfiable": "DoNotSchedule"}]},
     r"topologySpreadConstraints\[0\].maxSkew"),
    ({"topologySpreadConstraints": [{"maxSkew": 1, "whenUnsatisfiable": "DoNotSchedule"}]}, "topologyKey"),
    ({"topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "z", "whenUnsatisfiable": "Maybe"}]},
     "whenUnsatisfiable: expected DoNotSchedule or ScheduleAnyway"),
    ({"topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "z", "whenUnsatisfiable": "ScheduleAnyway",
                                     "skew": 1}]}, "unknown key 'skew'"),
    ({"resources": {"requests": {"cpu": "lots"}}}, "resources.requests.cpu: expected a quantity"),
    ({"resources": {"request": {"cpu": "1"}}}, "resources: unknown key 'request'"),
])
def test_bad_values_one_clear_error(block, message):
    with pytest.raises(InputError, match=message):
        resolve(block)


def test_bad_value_from_set_flag():
    with pytest.raises(InputError, match="manager.replicas: must be >= 1, got 0"):
        resolve(None, ["manager.replicas=0"])
    with pytest.raises(InputError, match="not both"):
        resolve(None, ["manager.podDisruptionBudget.minAvailable=1", "manager.podDisruptionBudget.maxUnavailable=1"])


def test_config_block_must_be_mapping():
    with pytest.raises(InputError, match="trainerctl.yaml: manager: expected a mapping, got a list"):
        resolve(["replicas"])


def test_pdb_with_one_replica_warns():
    opts = resolve({"podDisruptionBudget": {"enabled": True}})
    assert opts.pdb.min_available == 1
    assert any("blocks node drains" in w for w in opts.warnings)
    lax = resolve({"podDisruptionBudget": {"maxUnavailable": 1}})
    assert any("all 1 replica(s) be evicted" in w for w in lax.warnings)
    assert resolve({"replicas": 2, "podDisruptionBudget": {"minAvailable": 1}}).warnings == ()
    assert any("blocks node drains" in w for w in resolve({"replicas": 2, "podDisruptionBudget": {"minAvailable": "100%"}}).warnings)


# --- layering: --ha < config file < --set --------------------------------------------------

def test_ha_preset():
    opts = resolve(ha=True)
    assert opts.replicas == 2 and opts.pdb.min_available == 1 and opts.ha_anti_affinity
    assert opts.warnings == ()
    assert resolve({"ha": True}).replicas == 2
    assert resolve(None, ["manager.ha=true"]).replicas == 2


def test_layers_override_preset_and_each_other():
    opts = resolve({"replicas": 3, "podDisruptionBudget": {"minAvailable": 2}},
                   ["manager.podDisruptionBudget.maxUnavailable=1"], ha=True)
    # --set chose maxUnavailable: the file's (and preset's) minAvailable gives way, no conflict
    assert opts.replicas == 3 and opts.pdb.max_unavailable == 1 and opts.pdb.min_available is None
    off = resolve(None, ["manager.podDisruptionBudget.enabled=false"], ha=True)
    assert not off.pdb.enabled and off.replicas == 2
    own = resolve({"affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": []}}}, ha=True)
    assert not own.ha_anti_affinity  # the user's own anti-affinity replaces the preset's


# --- patches ---------------------------------------------------------------------------------

def test_no_options_no_patches_same_objects():
    objs = objects()
    assert manager_overlay(NO_OPTIONS, deployment()) == ([], [])
    assert apply_manager_options(objs, NO_OPTIONS) is objs


def test_each_option_lands_in_the_deployment():
    tsc = [{"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "ScheduleAnyway"}]
    opts = resolve({
        "replicas": 3,
        "topologySpreadConstraints": tsc,
        "priorityClassName": "system-cluster-critical",
        "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": "node-role.kubernetes.io/infra", "operator": "Exists"}]}]}}},
        "nodeSelector": {"kubernetes.io/os": "linux"},
        "tolerations": [{"key": "infra", "operator": "Exists", "effect": "NoSchedule"}],
        "resources": {"requests": {"cpu": "100m", "memory": 256}, "limits": {"memory": "1Gi"}},
    })
    before = objects()
    snapshot = copy.deepcopy(before)
    out = apply_manager_options(before, opts)
    assert before == snapshot  # input untouched
    assert [o["kind"] for o in out] == ["Service", "Deployment", "ValidatingWebhookConfiguration"]
    dep = out[1]
    pod = dep["spec"]["template"]["spec"]
    assert dep["spec"]["replicas"] == 3
    assert pod["priorityClassName"] == "system-cluster-critical"
    assert pod["nodeSelector"] == {"kubernetes.io/os": "linux"}
    assert pod["tolerations"] == [{"key": "infra", "operator": "Exists", "effect": "NoSchedule"}]
    assert pod["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    assert "podAntiAffinity" not in pod["affinity"]
    # a constraint without selector counts the controller's own pods
    assert pod["topologySpreadConstraints"] == [dict(tsc[0], labelSelector={"matchLabels": SELECTOR})]
    assert pod["containers"][1]["resources"] == {"requests": {"cpu": "100m", "memory": "256"},
                                                 "limits": {"memory": "1Gi"}}
    assert "resources" not in pod["containers"][0]
    # everything else is as before
    for key in ("priorityClassName", "nodeSelector", "tolerations", "affinity", "topologySpreadConstraints"):
        pod.pop(key)
    pod["containers"][1].pop("resources")
    dep["spec"].pop("replicas")
    assert out == snapshot


def test_ha_gives_replicas_pdb_and_soft_anti_affinity():
    out = apply_manager_options(objects(), resolve(ha=True))
    assert [o["kind"] for o in out] == ["Service", "Deployment", "PodDisruptionBudget",
                                        "ValidatingWebhookConfiguration"]
    dep, pdb = out[1], out[2]
    assert dep["spec"]["replicas"] == 2
    anti = dep["spec"]["template"]["spec"]["affinity"]["podAntiAffinity"]
    assert "requiredDuringSchedulingIgnoredDuringExecution" not in anti  # soft only
    assert anti["preferredDuringSchedulingIgnoredDuringExecution"] == [{
        "weight": 100,
        "podAffinityTerm": {"labelSelector": {"matchLabels": SELECTOR}, "topologyKey": "kubernetes.io/hostname"},
    }]
    assert pdb == {
        "apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
        "metadata": {"labels": SELECTOR, "name": "kubeflow-trainer-controller-manager", "namespace": "opendatahub"},
        "spec": {"minAvailable": 1, "selector": {"matchLabels": SELECTOR}},
    }


def test_overlay_patch_is_json6902_for_kustomize():
    import jsonpatch
    import yaml

    opts = resolve({"nodeSelector": {"a": "b"}}, ha=True)
    patches, resources = manager_overlay(opts, deployment())
    assert len(patches) == 1 and [r["kind"] for r in resources] == ["PodDisruptionBudget"]
    entry = patches[0]
    assert entry["target"] == {"group": "apps", "version": "v1", "kind": "Deployment",
                               "name": "kubeflow-trainer-controller-manager"}
    ops = yaml.safe_load(entry["patch"])
    assert jsonpatch.apply_patch(deployment(), ops) == apply_manager_options(objects(), opts)[1]


def test_missing_deployment_or_container_is_a_clear_error():
    with pytest.raises(InputError, match="no Deployment named 'kubeflow-trainer-controller-manager'"):
        apply_manager_options([objects()[0]], resolve(ha=True))
    dep = deployment()
    dep["spec"]["template"]["spec"]["containers"] = [{"name": "other"}]
    with pytest.raises(InputError, match="has no container named 'manager'"):
        apply_manager_options([dep], resolve({"resources": {"limits": {"cpu": "1"}}}))


def test_errors_name_their_source():
    with pytest.raises(InputError, match=r"^trainerctl.yaml: manager.replicas: must be >= 1"):
        resolve({"replicas": 0})
    with pytest.raises(InputError, match=r"^ci/trainerctl.yaml: manager: unknown key 'replica'"):
        resolve({"replica": 2}, source="ci/trainerctl.yaml")
    with pytest.raises(InputError, match=r"^--set manager.replicas: must be >= 1"):
        resolve({"replicas": 2}, ["manager.replicas=0"])
    with pytest.raises(InputError, match=r"^--set manager.ha: expected true or false"):
        resolve(None, ["manager.ha=maybe"])
