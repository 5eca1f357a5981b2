"""What a render is asked for (RenderOptions) and what it produced (RenderResult).

RenderOptions checks every value once, when it is made, and names the field in each error; a
caller that knows where a value came from (a flag, a settings file) passes `origins` so the error
names that instead: the command line makes it from its Settings (trainerctl.settings), whose
fields have the same names (`Settings.options_for`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping, Sequence

from trainerctl.errors import InputError
from trainerctl.trust.redact import strip_userinfo
from trainerctl.owner_label import DEFAULT_OWNER_LABEL, OwnerLabel
from trainerctl.render.image_refs import ImageOverrides, resolve_overrides, validate_registry
from trainerctl.render.controller import ManagerOptions
from trainerctl.render.controller import resolve as resolve_manager
from trainerctl.settings import COMPONENTS, NAMESPACE as DEFAULT_NAMESPACE, PLATFORMS, checks


def _manager(value, where: str) -> ManagerOptions:
    """ManagerOptions, or a `manager:` block as trainerctl.yaml holds it."""
    if isinstance(value, ManagerOptions):
        return value
    if isinstance(value, dict):
        return resolve_manager(value, source=where)
    raise InputError(f"{where}: expected a `manager:` mapping or ManagerOptions")


# The values with a vocabulary or syntax: field -> check(value, where) returning the typed value.
CHECKS = {
    "namespace": checks.namespace,
    "platform": checks.platform,
    "overlay": checks.overlay,
    "owner_label": lambda value, where: OwnerLabel(*value).validated(where),
    "components": checks.components,
    "require_registry": validate_registry,
    "manager": _manager,
    "channel": checks.channel,
}


@dataclass(frozen=True)
class RenderOptions:
    """Everything a render is asked for, from flags and config file alike, checked once. What
    differs (a platform detected on the cluster) makes new options (dataclasses.replace)."""

    source_url: str | None = None  # None: a channel's (data/pins.yaml)
    ref: str | None = None  # None: the channel's pinned tag or commit (only with the default URL)
    channel: str | None = None  # a release channel; None with no source: the default channel
    source_path: str | Path | None = None  # a local checkout instead of a git source
    overlay: str | None = None  # None: rhoai, else overlays/manager, whichever exists
    namespace: str = DEFAULT_NAMESPACE
    platform: str | None = None  # None: kubernetes (install detects it)
    images: Mapping[str, str] = field(default_factory=dict)  # env var, params key or image name -> ref
    env: Mapping[str, str] | None = None  # None: os.environ (for RELATED_IMAGE_*)
    components: set[str] | frozenset[str] | None = None  # None: all that apply to the platform
    owner_label: OwnerLabel = DEFAULT_OWNER_LABEL  # or a (key, value) pair
    cache_dir: str | Path | None = None
    require_registry: str | None = None
    require_digests: bool = False  # fail unless every image is given by digest
    remote_mirrors: Sequence[str] = ()  # PREFIX=REPLACEMENT for remote bases
    offline: bool = False  # never contact the git remote
    refresh: bool = False  # ask the git remote again even when the ref is cached
    lock_file: str | Path | None = None  # None: ./trainerctl.lock
    use_lock: bool = True  # verify the source against the lock file when there is one
    manager: ManagerOptions | None = None  # controller options (or a `manager:` block), made ManagerOptions
    # field -> how to name it in an error (a flag, or "FILE: field:"); the field's name otherwise
    origins: Mapping[str, str] = field(default_factory=dict, compare=False, repr=False)
    overrides: ImageOverrides = field(init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        for name, check in CHECKS.items():
            value = getattr(self, name)
            if value is not None:
                object.__setattr__(self, name, check(value, self.where(name)))
        if self.source_path and (self.source_url or self.ref):
            raise InputError(f"{self.where('source_path')} PATH (a local checkout) cannot be combined with a git URL "
                             "or --ref")
        if self.channel is not None and (self.source_path or self.source_url or self.ref):
            other = self.where("ref") if self.ref and not (self.source_path or self.source_url) else \
                self.where("source_path" if self.source_path else "source_url")
            raise InputError(f"{self.where('channel')} {self.channel} and {other}: choose one (a channel is a "
                             "pinned source)")
        # Image settings are resolved here, once, so a typo fails before anything is fetched.
        object.__setattr__(self, "overrides", resolve_overrides(
            self.images, self.environment(),
            lambda key: self.origins.get(f"images.{key}", f"{self.where('images')} {key}")))

    def where(self, name: str) -> str:
        return self.origins.get(name, name)

    def environment(self) -> Mapping[str, str]:
        return os.environ if self.env is None else self.env

    def platform_components(self) -> tuple[str, set[str]]:
        """The platform, and the sets to render on it."""
        platform = self.platform or "kubernetes"
        if self.components is None:
            return platform, {"manifests", "runtimes"} | ({"imagestreams"} if platform == "openshift" else set())
        if "imagestreams" in self.components and platform != "openshift":
            raise InputError(f"{self.where('components')} imagestreams: ImageStreams need --platform openshift")
        return platform, set(self.components)


@dataclass(frozen=True)
class SourceInfo:
    """Where a render's manifests came from, as records, locks and GitOps output name it."""

    url: str | None
    ref: str | None
    commit: str | None
    digest: str
    overlay: str
    trainer_version: str | None
    path: str | None = None  # the local checkout, for --source PATH
    releases: tuple[dict, ...] = ()  # component_metadata.yaml releases: name, version, repoUrl
    images: dict[str, str] = field(default_factory=dict)  # rendered image -> where it came from
    embedded: bool = False  # the manifests are the copy of url at ref inside trainerctl's wheel
    channel: str | None = None  # the release channel whose tree this is (by its digest), if any

    def __post_init__(self) -> None:
        # What a render reports (the inventory, -o json, the lock) never holds a URL's password.
        if self.url:
            object.__setattr__(self, "url", strip_userinfo(self.url))


@dataclass
class RenderResult:
    """A render's objects, all together and per set, with where they came from."""

    objects: list[dict]
    components: dict[str, list[dict]]
    source: SourceInfo
    namespace: str
    owner_label: OwnerLabel
    platform: str = "kubernetes"
    image_keys: dict[str, tuple[str, ...]] = field(default_factory=dict)  # image -> params.env keys holding it
