"""Image references, the RELATED_IMAGE_* map and the --require-registry check."""

from __future__ import annotations

import pytest

from trainerctl.errors import InputError, TrainerctlError
from trainerctl.render.image_refs import (
    check_registry,
    iter_images,
    kustomize_image_entry,
    parse_image,
    related_images,
    resolve_overrides,
)

DIGEST = "sha256:" + "0" * 64


@pytest.mark.parametrize("ref, registry", [
    ("quay.io/opendatahub/trainer:odh-3.5-ea1", "quay.io"),
    (f"quay.io/x/y@{DIGEST}", "quay.io"),
    (f"registry.example.com:5000/a/b:tag@{DIGEST}", "registry.example.com:5000"),
    ("localhost/a", "localhost"),
    ("busybox", "docker.io"),
    ("library/busybox:1.36", "docker.io"),
])
def test_valid_references(ref, registry):
    assert parse_image(ref).registry == registry


@pytest.mark.parametrize("ref", ["", "quay.io/x:", "Upper/x", "quay.io/X/y", "a b", "-x", "quay.io/x@sha256:12",
                                 "quay.io/x:" + "t" * 129, "quay.io//x", "quay.io/x/"])
def test_malformed_references(ref):
    with pytest.raises(InputError, match="not a valid image reference"):
        parse_image(ref, "--image k")


def test_map_has_the_operator_variables():
    table = related_images()
    assert table["RELATED_IMAGE_ODH_TRAINER_IMAGE"].params == ("odh-kubeflow-trainer-controller-image",)
    for var in ("RELATED_IMAGE_ODH_TH_TORCH_CUDA_PY312_IMAGE", "RELATED_IMAGE_ODH_TH_TORCH_ROCM_PY312_IMAGE",
                "RELATED_IMAGE_ODH_TH_TORCH_CPU_PY312_IMAGE", "RELATED_IMAGE_RHAII_MODEL_OPT_CUDA_IMAGE",
                "RELATED_IMAGE_RHAII_VLLM_CUDA_IMAGE"):
        assert table[var].params


def test_resolve_precedence():
    env = {"RELATED_IMAGE_ODH_TRAINER_IMAGE": "env.example/t:1", "RELATED_IMAGE_OTHER_COMPONENT": "bad ref ignored",
           "RELATED_IMAGE_ODH_TH_TORCH_CPU_PY312_IMAGE": ""}
    out = resolve_overrides({}, env)
    assert out.params == {"odh-kubeflow-trainer-controller-image": "env.example/t:1"}
    assert out.images == {"ghcr.io/kubeflow/trainer/trainer-controller-manager": "env.example/t:1"}
    out = resolve_overrides({"RELATED_IMAGE_ODH_TRAINER_IMAGE": "flag.example/t:2",
                             "odh-kubeflow-trainer-controller-image": "param.example/t:3",
                             "registry.k8s.io/jobset/jobset": "mirror.example/jobset:v1"}, env)
    assert out.params["odh-kubeflow-trainer-controller-image"] == "param.example/t:3"
    assert out.images["ghcr.io/kubeflow/trainer/trainer-controller-manager"] == "flag.example/t:2"
    assert out.images["registry.k8s.io/jobset/jobset"] == "mirror.example/jobset:v1"
    assert out.explicit_params == {"odh-kubeflow-trainer-controller-image": "param.example/t:3"}


def test_resolve_errors():
    with pytest.raises(InputError, match="environment variable RELATED_IMAGE_ODH_TRAINER_IMAGE"):
        resolve_overrides({}, {"RELATED_IMAGE_ODH_TRAINER_IMAGE": "not an image"})
    with pytest.raises(InputError, match="unknown variable"):
        resolve_overrides({"RELATED_IMAGE_TYPO": "quay.io/x:1"}, {})
    with pytest.raises(InputError, match="--image some-param"):
        resolve_overrides({"some-param": "quay.io/X"}, {})


def test_kustomize_image_entry():
    assert kustomize_image_entry("a/b", "r.example/c/d:1") == {"name": "a/b", "newName": "r.example/c/d", "newTag": "1"}
    assert kustomize_image_entry("a/b", f"r.example/c@{DIGEST}") == {"name": "a/b", "newName": "r.example/c", "digest": DIGEST}


DEPLOYMENT = {
    "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d", "namespace": "ns"},
    "spec": {"template": {"spec": {"initContainers": [{"name": "i", "image": "quay.io/i:1"}],
                                   "containers": [{"name": "c", "image": "mirror.example/c:1"}]}}},
}
IMAGESTREAM = {
    "apiVersion": "image.openshift.io/v1", "kind": "ImageStream", "metadata": {"name": "s", "namespace": "ns"},
    "spec": {"tags": [{"name": "3.5", "from": {"kind": "DockerImage", "name": "quay.io/s:1"}},
                      {"name": "alias", "from": {"kind": "ImageStreamTag", "name": "s:3.5"}}]},
}


def test_iter_images():
    assert list(iter_images(DEPLOYMENT)) == [
        ("spec.template.spec.initContainers[i].image", "quay.io/i:1"),
        ("spec.template.spec.containers[c].image", "mirror.example/c:1"),
    ]
    assert list(iter_images(IMAGESTREAM)) == [("spec.tags[3.5].from.name", "quay.io/s:1")]


def test_check_registry():
    mirrored = {**DEPLOYMENT, "spec": {"template": {"spec": {"containers": [{"name": "c", "image": "mirror.example/c:1"}]}}}}
    check_registry([mirrored], "mirror.example")
    check_registry([mirrored], "mirror.example/")
    with pytest.raises(TrainerctlError, match=r"2 image\(s\) point elsewhere: Deployment ns/d spec.template.spec.initContainers\[i\].image=quay.io/i:1"):
        check_registry([DEPLOYMENT, IMAGESTREAM], "mirror.example")
    check_registry([{"kind": "ConfigMap", "data": {"image": "quay.io/x"}}], "mirror.example")
    with pytest.raises(TrainerctlError):
        check_registry([DEPLOYMENT], "mirror.exam")  # a prefix of the host is not the host
