"""What a render is asked for (RenderOptions) and what it produced (RenderResult)."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping

COMPONENTS = ("manifests", "runtimes", "imagestreams")
PLATFORMS = ("openshift", "kubernetes")
DEFAULT_NAMESPACE = "opendatahub"
DEFAULT_OWNER_LABEL = ("platform.opendatahub.io/part-of", "trainer")
_DNS1123_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")


def validate_namespace(namespace: str, where: str = "--namespace") -> str:
    from trainerctl.errors import InputError

    if not isinstance(namespace, str) or not _DNS1123_LABEL.match(namespace) or len(namespace) > 63:
        raise InputError(f"{where} {namespace!r}: expected a DNS-1123 label (lower case, digits, '-', at most 63)")
    return namespace


@dataclass
class RenderOptions:
    source_url: str | None = None  # None: the pinned default (data/pins.yaml)
    ref: str | None = None  # None: the pinned default ref (only with the default URL)
    source_path: str | Path | None = None  # a local checkout instead of a git source
    overlay: str | None = None  # None: rhoai, else overlays/manager, whichever exists
    namespace: str = DEFAULT_NAMESPACE
    platform: str | None = None  # None: kubernetes (install detects it)
    images: dict[str, str] = field(default_factory=dict)  # env var, params key or image name -> ref
    env: Mapping[str, str] | None = None  # None: os.environ (for RELATED_IMAGE_*)
    components: set[str] | frozenset[str] | None = None  # None: all that apply to the platform
    owner_label: tuple[str, str] = DEFAULT_OWNER_LABEL
    cache_dir: str | Path | None = None
    require_registry: str | None = None
    remote_mirrors: list[str] = field(default_factory=list)  # PREFIX=REPLACEMENT for remote bases
    offline: bool = False  # never contact the git remote
    refresh: bool = False  # ask the git remote again even when the ref is cached
    lock_file: str | Path | None = None  # None: ./trainerctl.lock
    use_lock: bool = True  # verify the source against the lock file when there is one
    manager: dict | None = None  # manager options (issue 6): patches on the controller Deployment

    def environment(self) -> Mapping[str, str]:
        return os.environ if self.env is None else self.env


@dataclass(frozen=True)
class SourceInfo:
    url: str | None
    ref: str | None
    commit: str | None
    digest: str
    overlay: str
    trainer_version: str | None
    path: str | None = None  # the local checkout, for --source PATH
    releases: tuple[dict, ...] = ()  # component_metadata.yaml releases: name, version, repoUrl

    def __post_init__(self) -> None:
        # What a render reports (the inventory, -o json, the lock) never holds a URL's password.
        if self.url:
            from trainerctl.redact import strip_userinfo

            object.__setattr__(self, "url", strip_userinfo(self.url))


@dataclass
class RenderResult:
    objects: list[dict]
    components: dict[str, list[dict]]
    source: SourceInfo
    namespace: str
    owner_label: tuple[str, str]
    platform: str = "kubernetes"
