"""Container images the process kubelet runs for real, and the Go package each image's binary is built from.

A pod whose container image is listed here runs the real binary, built from the Go module proxy at
the image's tag (tests/testenv/build.py builds every version listed). Any other pod is kwok's: it
is only marked Running, and Job pods Succeeded.

The builds are this cluster's registry, and the process kubelet pulls from nothing else. So an
image the kubelet takes but cannot run fails the way a kubelet's pull fails (pull()):

- a listed repository at a tag or digest with no build behind it: the registry answers "not
  found", as for a mistyped `--image` tag or a mirror that lacks the tag;
- any image under UNPULLABLE_REGISTRY (`.invalid` never resolves, RFC 6761): the registry host
  does not resolve, as for a mirror that is not there. Tests use it for an image that must not
  run at all; kwok leaves those pods alone too (tests/testenv/e2e.py);
- a reference the kubelet cannot parse (a listed repository with a malformed tag):
  InvalidImageName.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# Images under this registry never pull (see above).
UNPULLABLE_REGISTRY = "registry.testenv.invalid"


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
    # v2.1.0: the API before runtimePatches, for the 2.1 -> 2.2 upgrade story (tests/e2e/test_e2e_upgrade_story.py);
    # v2.2.0 is the last one that adds the legacy resource-in-use finalizer (upgrade and prune tests).
    ("v2.1.0", "v2.2.0", "v2.3.0"),
)
JOBSET = KnownImage(
    # The release manifests name the staging registry; Trainer's overlays rewrite it to registry.k8s.io.
    ("registry.k8s.io/jobset/jobset", "us-central1-docker.pkg.dev/k8s-staging-images/jobset/jobset"),
    "sigs.k8s.io/jobset",
    # What Trainer v2.1.0, v2.2.0 and v2.3.0 name in third-party/jobset.
    ("v0.10.1", "v0.11.0", "v0.12.0"),
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
    """The known image and version for an image reference, or None when it is not ours."""
    repo, tag = split_image(ref)
    for image in KNOWN:
        if repo in image.repositories:
            return image, tag
    return None


def registry_host(ref: str) -> str:
    first = ref.split("/", 1)[0]
    return first if "/" in ref and ("." in first or ":" in first or first == "localhost") else "docker.io"


def process_kubelet_takes(ref: str) -> bool:
    """Whether the process kubelet (not kwok) runs pods with this image."""
    return resolve(ref) is not None or registry_host(ref) == UNPULLABLE_REGISTRY


# The distribution/reference grammar, as the kubelet parses an image before pulling it.
_COMPONENT = r"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*"
_DOMAIN = r"(?:localhost|[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*)(?::[0-9]+)?"
_REFERENCE = re.compile(rf"^(?:{_DOMAIN}/)?{_COMPONENT}(?:/{_COMPONENT})*(?::[\w][\w.-]{{0,127}})?"
                        rf"(?:@[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{{32,}})?$")


@dataclass(frozen=True)
class Pull:
    """What pulling an image gives: a build to run, or the kubelet's reason and message."""

    image: str  # the reference with the default tag applied, as the kubelet names it
    build: tuple[KnownImage, str] | None = None
    reason: str = ""  # InvalidImageName, or ErrImagePull when the pull fails
    message: str = ""


def pull(ref: str, built: set[str]) -> Pull:
    """Pull `ref` from this cluster's registry; `built` holds the binary names that exist."""
    if not _REFERENCE.match(ref):
        return Pull(ref, None, "InvalidImageName",
                    f'Failed to apply default image tag "{ref}": couldn\'t parse image name "{ref}": '
                    "invalid reference format")
    repo, tag = split_image(ref)
    image = ref if tag or "@" in ref else f"{ref}:latest"
    if registry_host(ref) == UNPULLABLE_REGISTRY:
        path = repo.split("/", 1)[1]
        return Pull(image, None, "ErrImagePull",
                    f'rpc error: code = Unknown desc = failed to pull and unpack image "{image}": failed to resolve '
                    f'reference "{image}": failed to do request: Head "https://{UNPULLABLE_REGISTRY}/v2/{path}/'
                    f'manifests/{tag or "latest"}": dial tcp: lookup {UNPULLABLE_REGISTRY}: no such host')
    known = resolve(ref)
    if known is not None and tag in known[0].versions and known[0].binary(tag) in built:
        return Pull(image, known)
    return Pull(image, None, "ErrImagePull",
                f'rpc error: code = NotFound desc = failed to pull and unpack image "{image}": failed to resolve '
                f'reference "{image}": {image}: not found')
