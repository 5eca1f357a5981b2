"""The consumers' floors (trainerctl/data/consumers.yaml) as the preflight reads them: which floor a
Kueue version has, which Trainer a render is, and the `consumers` check's verdict. On a real API
server: tests/cluster/test_consumers.py."""

from __future__ import annotations

import pytest
from hypothesis import given, strategies as st

from tests.support.properties import PROPERTY
from trainerctl.cluster.trainer import consumers
from trainerctl.cluster.trainer.consumers import Consumer, Found, floor_for, render_version, verdict
from trainerctl.cluster.trainer.floors import parse_version
from trainerctl.cluster.trainer.preflight import FAIL, OK, WARN

KUEUE_10127 = "https://github.com/kubernetes-sigs/kueue/pull/10127"
KUEUE_14504 = "https://github.com/kubernetes-sigs/kueue/pull/14504"


@pytest.mark.parametrize("kueue,trainer,thread", [
    ("v0.13.9", None, None),
    ("v0.14.0", "v2.1.0", "https://github.com/kubernetes-sigs/kueue/pull/7755"),
    ("v0.16.4", "v2.1.0", "https://github.com/kubernetes-sigs/kueue/pull/7755"),
    ("v0.17.0", "v2.2.0", KUEUE_10127),
    ("v0.17.3", "v2.2.0", KUEUE_10127),
    ("v0.19.2", "v2.2.0", KUEUE_10127),
    ("v0.20.0", "v2.3.0", KUEUE_14504),
    ("v1.0.0", "v2.3.0", KUEUE_14504),
])
def test_each_kueue_version_has_the_floor_of_its_newest_thread(kueue, trainer, thread):
    floor = floor_for(kueue)
    assert (floor.trainer if floor else None, floor.threads[0] if floor else None) == (trainer, thread)


def test_every_floor_cites_a_thread_and_the_unreleased_one_says_so():
    floors = consumers.kueue_floors()
    assert [parse_version(f.since) for f in floors] == sorted(parse_version(f.since) for f in floors)
    assert all(f.threads and all(t.startswith("https://github.com/") for t in f.threads) for f in floors)
    last = floor_for("v0.20.0")
    assert "first Kueue release that can carry it" in last.cited() and "no release with it is known" in last.cited()
    assert floor_for("v0.17.3").cited() == KUEUE_10127


@given(st.tuples(*[st.integers(0, 30)] * 3), st.tuples(*[st.integers(0, 30)] * 3))
@PROPERTY
def test_a_floor_never_goes_down_as_kueue_goes_up(a, b):
    low, high = sorted([a, b])
    floors = [floor_for("v%d.%d.%d" % v) for v in (low, high)]
    trainers = [parse_version(f.trainer) if f else (0, 0, 0) for f in floors]
    assert trainers[0] <= trainers[1]


def _kueue(version: str) -> Consumer:
    return Consumer("Kueue", version, "Deployment kueue-system/kueue-controller-manager", floor_for(version))


def test_a_target_below_an_installed_kueue_is_refused_naming_both_versions_and_the_thread():
    finding = verdict(Found((_kueue("v0.17.3"),)), "v2.1.0", allow_breaking=False)
    assert finding.status == FAIL and finding.exit_code == 3
    assert finding.message.startswith(
        f"Kueue v0.17.3 (Deployment kueue-system/kueue-controller-manager) needs Trainer v2.2.0 or later, and this "
        f"install is Trainer v2.1.0 ({KUEUE_10127}): ")
    assert "--allow-breaking" in finding.message


def test_allow_breaking_turns_the_refusal_into_a_warning():
    finding = verdict(Found((_kueue("v0.17.3"),)), "v2.1.0", allow_breaking=True)
    assert finding.status == WARN and "(--allow-breaking: installing it anyway)" in finding.message


@pytest.mark.parametrize("found,target,status", [
    (Found(), "v2.1.0", OK),  # no Kueue
    (Found((_kueue("v0.17.3"),)), "2.2.0", OK),  # component_metadata's form, no "v"
    (Found((_kueue("v0.13.0"),)), "v2.0.0", OK),  # a Kueue older than every floor
    (Found((_kueue(""),)), "v2.0.0", OK),  # its image has no version tag: not judged, said so
    (Found((_kueue("v0.17.3"),)), "", WARN),  # the render does not say which Trainer it is
    (Found(unreadable="cannot look"), "v2.1.0", OK),  # may not list Deployments everywhere: not judged, said
    (Found((_kueue("v0.14.1"), _kueue("v0.20.1"))), "v2.2.1", FAIL),  # one of two needs more
])
def test_the_verdict(found, target, status):
    finding = verdict(found, target, allow_breaking=False)
    assert finding.status == status, finding
    if found.consumers and not found.consumers[0].version:
        assert "not judged (its image has no version tag)" in finding.details[0]


def test_a_target_at_or_above_every_floor_looks_for_nothing():
    class NoCluster:
        def items(self, *args, **kwargs):
            raise AssertionError("listed")

    assert consumers.installed(NoCluster(), "2.3.0") == Found(looked=False)
    assert consumers.installed(NoCluster(), "v2.4.1") == Found(looked=False)
    assert consumers.worth_a_look("2.2.1") and consumers.worth_a_look("")
    finding = verdict(Found(looked=False), "2.3.0", allow_breaking=False)
    assert (finding.status, finding.message) == (OK, "Trainer 2.3.0 meets every consumer's floor (the highest: Kueue "
                                                     "v0.20.0 needs Trainer v2.3.0), so none was looked for")


def test_render_version_prefers_the_source_then_the_configmap_then_the_controller_image():
    image = {"kind": "Deployment", "spec": {"template": {"spec": {"containers": [
        {"name": "manager", "image": "ghcr.io/kubeflow/trainer/trainer-controller-manager:v2.1.0"}]}}}}
    configmap = {"kind": "ConfigMap", "metadata": {"name": "kubeflow-trainer-public"},
                 "data": {"kubeflow_trainer_version": "v2.2.0"}}
    assert render_version("2.3.0", [configmap, image]) == "2.3.0"
    assert render_version("odh-stable", [configmap, image]) == "v2.2.0"
    assert render_version(None, [image]) == "v2.1.0"
    dev = {**configmap, "data": {"kubeflow_trainer_version": "dev"}}  # main's overlays say "dev"
    odh = {"kind": "Deployment", "spec": {"template": {"spec": {"containers": [
        {"name": "manager", "image": "quay.io/opendatahub/trainer:odh-stable"}]}}}}
    assert render_version(None, [dev, odh]) == ""


def test_render_version_of_the_shared_trees():
    """Every pinned tree says which Trainer it is, from its source or its objects."""
    from tests.support.cluster import kubeflow_objects

    assert render_version(None, kubeflow_objects("v2.1.0")) == "v2.1.0"  # the controller image's tag
    assert render_version(None, kubeflow_objects("v2.2.0")) == "v2.2.0"  # the public ConfigMap
