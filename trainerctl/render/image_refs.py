"""Image references: validation, the RELATED_IMAGE_* map (data/related_images.yaml), which
override goes where, and the air-gapped check that every rendered image comes from one registry."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Callable, Iterator, Mapping

from trainerctl.errors import InputError, TrainerctlError
from trainerctl.own_data import load_yaml

ENV_PREFIX = "RELATED_IMAGE_"

# The distribution/reference grammar (what `docker pull` accepts), lower-case repository path.
_COMPONENT = r"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*"
_DOMAIN = (
    r"(?:localhost|\[[0-9A-Fa-f:]+\]|[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?"
    r"(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*)(?::[0-9]+)?"
)
_TAG = r"[\w][\w.-]{0,127}"
_DIGEST = r"[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}"
_REFERENCE = (
    rf"^(?P<name>(?:(?P<domain>{_DOMAIN})/)?{_COMPONENT}(?:/{_COMPONENT})*)"
    rf"(?::(?P<tag>{_TAG}))?(?:@(?P<digest>{_DIGEST}))?$"
)


@lru_cache(maxsize=1)
def _reference() -> re.Pattern:
    # compiled on first use: most renders set no image, and this costs ~4 ms at start-up
    return re.compile(_REFERENCE)


@dataclass(frozen=True)
class ImageRef:
    """An image reference taken apart: registry/repository, tag and digest."""

    name: str  # registry and repository, no tag or digest
    tag: str | None
    digest: str | None

    @property
    def registry(self) -> str:
        first = self.name.split("/", 1)[0]
        if "/" in self.name and ("." in first or ":" in first or first == "localhost"):
            return first
        return "docker.io"


def parse_image(ref: str, where: str = "image") -> ImageRef:
    """Parse ref, or fail with one line saying where it came from and what was expected."""
    match = _reference().match(ref or "")
    domain = match["domain"] if match else None
    # The first component is a registry only with a '.', a ':' or "localhost"; else it is a
    # repository path component, which must be lower case.
    bad_domain = bool(domain) and not ("." in domain or ":" in domain or domain == "localhost") and domain != domain.lower()
    if not match or bad_domain or len(match["name"]) > 255:
        raise InputError(
            f"{where}: {ref!r} is not a valid image reference "
            f"(expected [registry[:port]/]repository[:tag][@sha256:digest], repository in lower case)"
        )
    return ImageRef(match["name"], match["tag"], match["digest"])


@dataclass(frozen=True)
class RelatedImage:
    """One RELATED_IMAGE_* variable: the params.env keys it sets and the images it names."""

    env: str
    params: tuple[str, ...]
    images: tuple[str, ...] = ()


@lru_cache(maxsize=1)
def related_images() -> dict[str, RelatedImage]:
    """The env-var map from data/related_images.yaml, in file order."""
    return {
        env: RelatedImage(env, tuple(spec.get("params", ())), tuple(spec.get("images", ())))
        for env, spec in load_yaml("related_images.yaml").items()
    }


@dataclass
class ImageOverrides:
    """What to change: params.env keys, and kustomize `images:` entries by image name."""

    params: dict[str, str] = field(default_factory=dict)
    images: dict[str, str] = field(default_factory=dict)
    # param keys given explicitly (not through an env var), which must exist somewhere
    explicit_params: dict[str, str] = field(default_factory=dict)
    # image reference -> the setting that put it there ("--image KEY", "environment variable X")
    origins: dict[str, str] = field(default_factory=dict)
    # explicit param key -> the setting that gave it (for "no params.env has that key")
    key_origins: dict[str, str] = field(default_factory=dict)


def resolve_overrides(images: Mapping[str, str], env: Mapping[str, str],
                      where: Callable[[str], str] = lambda key: f"--image {key}") -> ImageOverrides:
    """Turn RELATED_IMAGE_* variables (env) and explicit KEY=REF settings (images) into overrides.

    A key of `images` is a RELATED_IMAGE_* variable from the map, a params.env key, or an image
    name containing '/' (for `images:`); explicit settings win over the environment, and a param
    key wins over a variable that also sets it. `where(key)` names an explicit setting in errors.
    """
    table = related_images()
    out = ImageOverrides()
    env_values = {k: v for k, v in env.items() if k in table and v}
    explicit_env = {k: v for k, v in images.items() if k.startswith(ENV_PREFIX)}
    for key in explicit_env:
        if key not in table:
            raise InputError(
                f"{where(key)}: unknown variable (known: {', '.join(table)}); "
                f"to set a params.env key, name the key itself"
            )
    for var, value in {**env_values, **explicit_env}.items():
        out.origins[value] = where(var) if var in explicit_env else f"environment variable {var}"
        parse_image(value, out.origins[value])
        for param in table[var].params:
            out.params[param] = value
        for name in table[var].images:
            out.images[name] = value
    for key, value in images.items():
        if key.startswith(ENV_PREFIX):
            continue
        parse_image(value, where(key))
        out.origins[value] = where(key)
        if "/" in key:
            parse_image(key, f"{where(key)} (image name)")
            out.images[key] = value
        else:
            out.params[key] = value
            out.explicit_params[key] = value
            out.key_origins[key] = where(key)
    return out


def kustomize_image_entry(name: str, ref: str) -> dict:
    """The `images:` entry that replaces image `name` (any tag) with `ref`."""
    parsed = parse_image(ref)
    entry = {"name": name, "newName": parsed.name}
    if parsed.digest:
        entry["digest"] = parsed.digest
    elif parsed.tag:
        entry["newTag"] = parsed.tag
    return entry


# --------------------------------------------------------------------------- rendered images

_POD_CONTAINER_LISTS = ("initContainers", "containers", "ephemeralContainers")


@dataclass(frozen=True)
class ImageField:
    """One image an object names: a container's image, or an ImageStream tag's."""

    path: str  # the field, e.g. spec.template.spec.containers[manager].image
    image: str
    container: str | None = None  # the container's name
    tag: str | None = None  # the ImageStream tag's name


def image_fields(obj: dict) -> Iterator[ImageField]:
    """Every container image and ImageStream tag image in obj."""
    if obj.get("kind") == "ImageStream" and str(obj.get("apiVersion", "")).startswith("image.openshift.io/"):
        for i, tag in enumerate((obj.get("spec") or {}).get("tags") or []):
            source = tag.get("from") or {}
            if source.get("kind") == "DockerImage" and source.get("name"):
                name = tag.get("name", i)
                yield ImageField(f"spec.tags[{name}].from.name", source["name"], tag=str(name))
    yield from _walk_containers(obj, "")


def iter_images(obj: dict) -> Iterator[tuple[str, str]]:
    """(field path, image) for every container image and ImageStream tag image in obj."""
    for found in image_fields(obj):
        yield found.path, found.image


def _walk_containers(node, path: str) -> Iterator[ImageField]:
    if isinstance(node, dict):
        for key, value in node.items():
            sub = f"{path}.{key}" if path else key
            if key in _POD_CONTAINER_LISTS and isinstance(value, list):
                for item in value:
                    if isinstance(item, dict) and isinstance(item.get("image"), str):
                        name = item.get("name", "?")
                        yield ImageField(f"{sub}[{name}].image", item["image"], container=str(name))
            else:
                yield from _walk_containers(value, sub)
    elif isinstance(node, list):
        for i, item in enumerate(node):
            yield from _walk_containers(item, f"{path}[{i}]")


def describe(obj: dict) -> str:
    meta = obj.get("metadata") or {}
    name = f"{meta['namespace']}/{meta.get('name')}" if meta.get("namespace") else meta.get("name")
    return f"{obj.get('kind')} {name}"


def validate_registry(registry: str, where: str = "--require-registry") -> str:
    """A registry prefix: host[:port] and optional lower-case repository path, no scheme."""
    if "://" in registry:
        raise InputError(f"{where} {registry!r}: give host[:port][/path] without a scheme")
    match = re.fullmatch(rf"(?P<domain>{_DOMAIN})(?:/{_COMPONENT})*/?", registry)
    if not registry or not match or len(registry) > 255:
        raise InputError(f"{where} {registry!r}: expected a registry host[:port][/path], e.g. registry.example.com")
    return registry


def check_registry(objects: list[dict], registry: str) -> None:
    """Fail when any rendered image is not under `registry` (a host, host:port or host/path)."""
    prefix = registry.rstrip("/") + "/"
    leftovers = [
        f"{describe(obj)} {path}={image}"
        for obj in objects
        for path, image in iter_images(obj)
        if not image.startswith(prefix)
    ]
    if leftovers:
        shown = "; ".join(leftovers[:3]) + (f"; and {len(leftovers) - 3} more" if len(leftovers) > 3 else "")
        raise TrainerctlError(
            f"--require-registry {registry}: {len(leftovers)} image(s) point elsewhere: {shown} "
            f"(override them with RELATED_IMAGE_* or --image KEY=REF)"
        )


def check_digests(objects: list[dict], where: str = "--require-digests") -> None:
    """Fail when any rendered image is named by tag alone (a tag can move between mirror and pull)."""
    by_tag: dict[str, str] = {}
    for obj in objects:
        for path, image in iter_images(obj):
            if not parse_image(image, f"{describe(obj)} {path}").digest:
                by_tag.setdefault(image, f"{describe(obj)} {path}")
    if by_tag:
        shown = "; ".join(f"{image} ({use})" for image, use in list(by_tag.items())[:3])
        more = f"; and {len(by_tag) - 3} more" if len(by_tag) > 3 else ""
        raise TrainerctlError(
            f"{where}: {len(by_tag)} image(s) are given by tag alone: {shown}{more} (pin them: trainerctl images "
            f"--pin-digests --write-overrides FILE, then --images-from FILE; docs/images.md#pinning-digests)"
        )


def image_origins(objects: list[dict], overrides: ImageOverrides | None = None,
                  params: Mapping[str, str] | None = None, default: str = "the upstream manifests") -> dict[str, str]:
    """Where each rendered container image came from: an override (`overrides.origins`), a
    params.env value as the source ships it (`params`: image -> "params.env KEY (path)"), else the
    manifests themselves. A failed pull then names the setting to fix."""
    out: dict[str, str] = {}
    for obj in objects:
        if obj.get("kind") == "CustomResourceDefinition":
            continue  # megabytes of schema and no image: not worth the walk
        for _, image in iter_images(obj):
            out.setdefault(image, (overrides.origins if overrides else {}).get(image) or (params or {}).get(image)
                           or default)
    return out
