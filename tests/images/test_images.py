"""`trainerctl images` without a registry: every image of every upstream ref's render, with its
uses and settings; the outputs (plain, JSON, oc-mirror); overrides that pin each image, checked by
rendering again; --require-digests."""

from __future__ import annotations

import hashlib
import json

import pytest
import yaml

from tests.support.render import all_refs
from trainerctl.errors import InputError, TrainerctlError
from trainerctl.images.image_uses import list_images
from trainerctl.images.output import OC_MIRROR_API_VERSION, render_output
from trainerctl.images.overrides import Unpinnable, overrides_for, verify
from trainerctl.images.pipeline import ImagesRequest, Rendered, images, render_for_images
from trainerctl.render import RenderOptions
from trainerctl.render.image_refs import check_digests, image_fields, parse_image
from trainerctl.render.overrides_file import read_overrides, write_overrides

ODH = ("opendatahub-trainer", "odh-3.5.0")


def _rendered(upstream, remotes, repo, ref, **over) -> Rendered:
    return render_for_images(RenderOptions(source_path=upstream / repo / ref, platform="openshift", env={},
                                           remote_mirrors=list(remotes.mirrors), use_lock=False, **over))


def _fake_pin(listed) -> None:
    """A digest per image, as a registry would give (the registry tests use real ones)."""
    for item in listed:
        item.digest = item.digest or "sha256:" + hashlib.sha256(item.image.encode()).hexdigest()


@pytest.mark.parametrize("repo, ref", all_refs())
def test_every_image_of_every_ref_is_listed_with_its_uses_and_can_be_pinned(upstream, remotes, repo, ref):
    """The whole class: every upstream tree's render. Every container and ImageStream tag is one
    use of one listed image; an image set by a params.env key names it (and its RELATED_IMAGE_*);
    pinning every image with the written overrides renders exactly the pinned images."""
    rendered = _rendered(upstream, remotes, repo, ref)
    listed = list_images(rendered.objects, origins=rendered.origins, image_keys=rendered.image_keys,
                         components=rendered.components)
    uses = sorted((u.kind, u.namespace or "", u.name, u.field, i.image) for i in listed for u in i.uses)
    fields = sorted((o["kind"], (o.get("metadata") or {}).get("namespace") or "", o["metadata"]["name"], f.path, f.image)
                    for o in rendered.objects for f in image_fields(o))
    assert uses == fields and [i.image for i in listed] == sorted({f[4] for f in fields})
    for item in listed:
        assert item.origin and all(u.component in ("manifests", "runtimes", "imagestreams") for u in item.uses)
        assert item.location.registry and item.location.repository
        if item.keys and item.origin.startswith("params.env "):
            assert item.origin.split()[1] in item.keys
    _fake_pin(listed)
    overrides = overrides_for(listed)
    verify(listed, overrides, rendered.rerender)
    objects, _ = rendered.rerender(overrides)
    check_digests(objects)
    with pytest.raises(TrainerctlError, match="--require-digests: .* given by tag alone") if any(
            not i.location.digest for i in listed) else _nothing():
        check_digests(rendered.objects)


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def test_the_jobset_of_kubeflows_overlay_is_listed_by_image_name(upstream, remotes):
    """kubeflow's overlays/manager brings JobSet from its release file: part of the set, written in
    the manifests themselves, so it is pinned by image name; the trainer image names its variable."""
    rendered = _rendered(upstream, remotes, "kubeflow-trainer", "v2.3.0", components={"manifests"})
    listed = {i.location.name: i for i in list_images(rendered.objects, origins=rendered.origins,
                                                       image_keys=rendered.image_keys,
                                                       components=rendered.components)}
    jobset = listed["registry.k8s.io/jobset/jobset"]
    assert jobset.keys == () and jobset.origin == "the upstream manifests"
    assert [(u.kind, u.container) for u in jobset.uses] == [("Deployment", "manager")]
    trainer = listed["ghcr.io/kubeflow/trainer/trainer-controller-manager"]
    assert trainer.variables == ("RELATED_IMAGE_ODH_TRAINER_IMAGE",)
    _fake_pin(listed.values())
    overrides = overrides_for(list(listed.values()))
    assert overrides["registry.k8s.io/jobset/jobset"] == jobset.pinned
    verify(list(listed.values()), overrides, rendered.rerender)


def test_outputs(upstream, remotes):
    rendered = _rendered(upstream, remotes, *ODH)
    text, listed = images(rendered, ImagesRequest())
    assert text.splitlines() == [i.image for i in listed] and len(listed) == 14
    doc = json.loads(images(rendered, ImagesRequest(output="json"))[0])
    assert doc["source"]["overlay"] == "rhoai" and "images" not in doc["source"] and len(doc["images"]) == len(listed)
    controller = next(i for i in doc["images"] if i["repository"] == "opendatahub/trainer")
    assert controller == {
        "image": "quay.io/opendatahub/trainer:odh-3.5-ea1", "registry": "quay.io", "repository": "opendatahub/trainer",
        "tag": "odh-3.5-ea1", "origin": "params.env odh-kubeflow-trainer-controller-image (rhoai/params.env)",
        "paramsKeys": ["odh-kubeflow-trainer-controller-image"], "relatedImages": ["RELATED_IMAGE_ODH_TRAINER_IMAGE"],
        "usedBy": [{"kind": "Deployment", "namespace": "opendatahub", "name": "kubeflow-trainer-controller-manager",
                    "container": "manager", "field": "spec.template.spec.containers[manager].image",
                    "component": "manifests"}]}
    stream = next(i for i in doc["images"] if i["image"].endswith("torch210-py312:odh-3.4"))
    assert {"kind": "ImageStream", "namespace": "opendatahub", "name": "training-hub-universal-cpu", "tag": "3.4",
            "field": "spec.tags[3.4].from.name", "component": "imagestreams"} in stream["usedBy"]
    mirror = yaml.safe_load(images(rendered, ImagesRequest(output="oc-mirror"))[0])
    assert mirror["apiVersion"] == OC_MIRROR_API_VERSION == "mirror.openshift.io/v2alpha1"
    assert mirror["kind"] == "ImageSetConfiguration"
    assert [a["name"] for a in mirror["mirror"]["additionalImages"]] == [i.image for i in listed]
    _fake_pin(listed)
    pinned = yaml.safe_load(render_output("oc-mirror", listed, None))["mirror"]["additionalImages"]
    assert all("@sha256:" in a["name"] and ":odh" not in a["name"] for a in pinned)
    assert render_output("plain", listed, None).splitlines() == sorted(i.pinned for i in listed)


def test_overrides_file_round_trip_and_bad_files(upstream, remotes, tmp_path):
    rendered = _rendered(upstream, remotes, *ODH)
    listed = list_images(rendered.objects, origins=rendered.origins, image_keys=rendered.image_keys,
                         components=rendered.components)
    _fake_pin(listed)
    overrides = overrides_for(listed)
    path = tmp_path / "images.yaml"
    write_overrides(str(path), overrides)
    assert read_overrides(str(path)) == overrides and path.read_text().startswith("# Image overrides by digest")
    for text, problem in (("images: [a]", "expected YAML with an `images:` mapping"),
                          ("images: {}\nextra: 1", "extra: unknown field"),
                          ("images: {k: 3}", "images: k: expected KEY: IMAGE"),
                          ("images: {k: 'Not An Image'}", "images: k: 'Not An Image' is not a valid image"),
                          ("{", "not valid YAML")):
        path.write_text(text)
        with pytest.raises(InputError, match=problem):
            read_overrides(str(path))
    with pytest.raises(InputError, match="file not found"):
        read_overrides(str(tmp_path / "absent.yaml"))


def test_one_key_cannot_pin_two_images(upstream, remotes):
    rendered = _rendered(upstream, remotes, *ODH)
    listed = list_images(rendered.objects, origins=rendered.origins, image_keys=rendered.image_keys,
                         components=rendered.components)
    _fake_pin(listed)
    listed[1].keys = listed[0].keys  # two images held by one key: no override can pin both
    with pytest.raises(Unpinnable, match="one override cannot pin both"):
        overrides_for(listed)


def test_a_wrong_override_is_caught_by_the_second_render(upstream, remotes):
    rendered = _rendered(upstream, remotes, *ODH)
    listed = list_images(rendered.objects, origins=rendered.origins, image_keys=rendered.image_keys,
                         components=rendered.components)
    _fake_pin(listed)
    overrides = overrides_for(listed)
    key = "odh-training-universal-workbench-image-cpu-3-4"  # the one setting of an ImageStream tag
    overrides[key] = parse_image(overrides[key]).name + ":moved"
    with pytest.raises(Unpinnable, match="would run .*:moved, not .*@sha256:"):
        verify(listed, overrides, rendered.rerender)


def test_bad_requests_are_refused_before_any_work():
    for request, rendered_file, problem in (
            (ImagesRequest(output="yaml"), False, "-o 'yaml': expected one of plain, json, oc-mirror"),
            (ImagesRequest(write_overrides="x.yaml"), False, "needs --pin-digests"),
            (ImagesRequest(write_overrides="x.yaml", pin_digests=True), True, "--write-overrides and -f"),
            (ImagesRequest(write_overrides=" ", pin_digests=True), False, "expected a file name")):
        with pytest.raises(InputError, match=problem):
            request.check(rendered_file)
