"""Container images the process kubelet runs for real, and the Go package each image's binary is built from.

A pod whose container image is listed here runs the real binary, built from the Go module proxy at
the image's tag (tests/testenv/build.py builds every version listed). Any other pod is kwok's: it
is only marked Running, and Job pods Succeeded.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class KnownImage:
    repositories: tuple[str, ...]  # image names without a tag
    package: str  # the Go main package the image's entrypoint is built from
    versions: tuple[str, ...]  # the tags we build (the module version is the tag)
    entrypoint: str = "/manager"  # where the image keeps the binary (both images are distroless)

    @property
    def module(self) -> str:
        return self.package.split("/cmd/")[0]

    @property
    def short(self) -> str:
        return self.package.rstrip("/").rsplit("/", 1)[-1]

    def binary(self, version: str) -> str:
        """The file name of this version's binary in the e2e bin dir."""
        return f"{self.short}@{version}"


TRAINER = KnownImage(
    ("ghcr.io/kubeflow/trainer/trainer-controller-manager",),
    "github.com/kubeflow/trainer/v2/cmd/trainer-controller-manager",
    # v2.2.0 is the last one that adds the legacy resource-in-use finalizer (upgrade and prune tests).
    ("v2.2.0", "v2.3.0"),
)
JOBSET = KnownImage(
    # The release manifests name the staging registry; Trainer's overlays rewrite it to registry.k8s.io.
    ("registry.k8s.io/jobset/jobset", "us-central1-docker.pkg.dev/k8s-staging-images/jobset/jobset"),
    "sigs.k8s.io/jobset",
    # What Trainer v2.2.0 and v2.3.0 name in third-party/jobset.
    ("v0.11.0", "v0.12.0"),
)
KNOWN: tuple[KnownImage, ...] = (TRAINER, JOBSET)


def split_image(ref: str) -> tuple[str, str]:
    """("repo", "tag") of an image reference; the tag is "" for a digest or no tag."""
    if "@" in ref:
        return ref.split("@", 1)[0], ""
    last = ref.rsplit("/", 1)[-1]
    if ":" in last:
        repo, tag = ref.rsplit(":", 1)
        return repo, tag
    return ref, ""


def resolve(ref: str) -> tuple[KnownImage, str] | None:
    """The known image and version for an image reference, or None when kwok should play it."""
    repo, tag = split_image(ref)
    for image in KNOWN:
        if repo in image.repositories:
            return image, tag
    return None
