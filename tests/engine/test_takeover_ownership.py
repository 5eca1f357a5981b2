"""A Helm hand-over deletes only what the release provably owned (helm_handover.ReleaseObjects.claim).

A release record is a Secret anyone allowed to create one in the namespace can write, so the
objects its manifest, hooks and installer ConfigMap name are only candidates: the proof is on the
live object. The property: over generated records' entries and live metadata, an object is claimed
only when its own marks name the release (and for a namespaced object, only in the release's
namespace), our ownership label never changes the verdict, and another release's annotations
always win. tests/cluster/test_helm_handover.py proves the same on the real API server.
"""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from tests.support.properties import PROPERTY
from trainerctl.cluster.manager.inventory_configmap import Entry
from trainerctl.cluster.manager.objects import Ref
from trainerctl.cluster.operations import helm_releases
from trainerctl.cluster.trainer.helm_handover import INSTALLER_LABEL, ReleaseObjects

RELEASE = helm_releases.Release("kubeflow-trainer", "kubeflow-system")
OUR_LABEL = ("platform.opendatahub.io/part-of", "trainer")
NAMES = st.sampled_from(["kubeflow-trainer", "other", "", "kubeflow-trainer ", "Kubeflow-Trainer"])
NAMESPACES = st.sampled_from(["kubeflow-system", "team-b", "default", "", "kubeflow-system2"])


def _objects(how: str, ref: Ref) -> ReleaseObjects:
    out = ReleaseObjects()
    out.entries[ref.key] = Entry("v1", "things", bool(ref.namespace), "admitted")
    out.release_of[ref.key] = RELEASE
    out.how[ref.key] = how
    return out


@st.composite
def live_meta(draw) -> dict:
    annotations, labels = {}, {}
    if draw(st.booleans()):
        annotations[helm_releases.NAME_ANNOTATION] = draw(NAMES)
    if draw(st.booleans()):
        annotations[helm_releases.NAMESPACE_ANNOTATION] = draw(NAMESPACES)
    if draw(st.booleans()):
        annotations[helm_releases.HOOK_ANNOTATION] = draw(st.sampled_from(["post-install", "pre-delete", ""]))
    if draw(st.booleans()):
        labels[INSTALLER_LABEL[0]] = draw(st.sampled_from([INSTALLER_LABEL[1], "someone-else"]))
    if draw(st.booleans()):
        labels[OUR_LABEL[0]] = OUR_LABEL[1]
    annotations.update(draw(st.dictionaries(st.text(max_size=8), st.text(max_size=8), max_size=2)))
    return {"annotations": annotations, "labels": labels}


@PROPERTY
@given(how=st.sampled_from(["manifest", "hook", "installer"]), namespace=NAMESPACES, meta=live_meta())
def test_only_what_the_live_object_proves_the_releases_is_claimed(how, namespace, meta):
    ref = Ref("apps", "Deployment", namespace, "kubeflow-trainer-controller-manager")
    objects = _objects(how, ref)
    claim = objects.claim(ref, meta)
    assert claim is not None and bool(claim.owner) != bool(claim.refused)
    annotations, labels = meta["annotations"], meta["labels"]
    names_release = (annotations.get(helm_releases.NAME_ANNOTATION) == RELEASE.name
                     and annotations.get(helm_releases.NAMESPACE_ANNOTATION) == RELEASE.namespace)
    other_release = helm_releases.NAME_ANNOTATION in annotations and annotations[helm_releases.NAME_ANNOTATION] \
        and not names_release
    if claim.owner:
        assert namespace in ("", RELEASE.namespace)
        assert not other_release
        if how == "manifest":
            assert names_release
        elif how == "hook":
            assert namespace == RELEASE.namespace and helm_releases.HOOK_ANNOTATION in annotations
        else:
            assert labels.get(INSTALLER_LABEL[0]) == INSTALLER_LABEL[1]
    elif how == "manifest" and namespace in ("", RELEASE.namespace):
        assert not names_release  # what does prove it is never refused
    # Our label proves nothing about a previous owner's object: with or without it, the same verdict.
    toggled = dict(labels)
    if OUR_LABEL[0] in toggled:
        del toggled[OUR_LABEL[0]]
    else:
        toggled[OUR_LABEL[0]] = OUR_LABEL[1]
    assert objects.claim(ref, {**meta, "labels": toggled}) == claim


def test_the_issue_example_a_labelled_object_in_another_namespace_is_refused():
    ref = Ref("apps", "Deployment", "team-b", "kubeflow-trainer-controller-manager")
    claim = _objects("manifest", ref).claim(ref, {"labels": dict([OUR_LABEL])})
    assert claim.refused == "in namespace team-b, outside Helm release kubeflow-trainer's namespace kubeflow-system"
    marked = {"annotations": {helm_releases.NAME_ANNOTATION: RELEASE.name, helm_releases.NAMESPACE_ANNOTATION: RELEASE.namespace}}
    assert _objects("manifest", ref).claim(ref, marked).refused  # even with the annotations: not its namespace


def test_what_the_release_does_not_name_is_not_its_to_judge():
    ref = Ref("", "ConfigMap", "kubeflow-system", "x")
    assert ReleaseObjects().claim(ref, {}) is None
