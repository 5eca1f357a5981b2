"""An image reference as a registry sees it: the host to ask, the repository, the tag or digest.

Docker's rules for names without a registry: `busybox` is Docker Hub's `library/busybox`, and
Docker Hub's API lives at registry-1.docker.io.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from trainerctl.render.image_refs import parse_image

DOCKER_HUB = "docker.io"
DOCKER_HUB_API = "registry-1.docker.io"
DOCKER_HUB_ALIASES = ("docker.io", "index.docker.io", "registry-1.docker.io")
DIGEST = re.compile(r"^sha256:[0-9a-f]{64}$")


@dataclass(frozen=True)
class Location:
    """Where one image lives."""

    image: str  # as rendered
    name: str  # registry and repository as written, no tag or digest
    registry: str  # host[:port] (docker.io for Docker Hub)
    repository: str  # the path in the registry (library/ added for Docker Hub's official images)
    tag: str | None
    digest: str | None

    @property
    def api_host(self) -> str:
        return DOCKER_HUB_API if self.registry == DOCKER_HUB else self.registry

    @property
    def reference(self) -> str:
        """What the manifest request names: the digest when there is one, else the tag."""
        return self.digest or self.tag or "latest"

    def pinned(self, digest: str) -> str:
        """The reference by digest alone: what skopeo, oc-mirror's ImageDigestMirrorSet and every
        runtime pull exactly (a tag next to a digest is ignored by runtimes, refused by some tools)."""
        return f"{self.name}@{digest}"


def locate(image: str, where: str = "image") -> Location:
    ref = parse_image(image, where)
    first, _, rest = ref.name.partition("/")
    has_registry = bool(rest) and ("." in first or ":" in first or first == "localhost")
    registry = first if has_registry else DOCKER_HUB
    repository = rest if has_registry else ref.name
    if registry in DOCKER_HUB_ALIASES:
        registry = DOCKER_HUB
        if "/" not in repository:
            repository = f"library/{repository}"
    return Location(image, ref.name, registry, repository, ref.tag, ref.digest)
