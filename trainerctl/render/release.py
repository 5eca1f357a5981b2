"""The controller image and the manifests from one release.

A controller reads the configuration its own release ships (odh-3.5.0's rejects the
`statusServer` field of stable's config and crash-loops), so an override that puts another
channel's controller image over a channel's manifests is worth a warning naming both. Which image
is a channel's controller is recorded with the channel (data/pins.yaml: `image`), taken from its
tree by `shipped_controller_image` when the channel is pinned (scripts/channel.py), beside the
Trainer version its component_metadata.yaml names.
"""

from __future__ import annotations

from pathlib import Path
from typing import Mapping

from trainerctl.errors import InputError
from trainerctl.render.image_refs import ImageRef, parse_image, related_images
from trainerctl.render.overlay import choose_overlay
from trainerctl.render.params_env import ParamsEnv
from trainerctl.source.pins import Channel, channels
from trainerctl.trust.bounded_read import read_text
from trainerctl.trust.document_bounds import load_yaml

# The variable that sets the controller's image: its params.env keys and kustomize image names.
CONTROLLER = "RELATED_IMAGE_ODH_TRAINER_IMAGE"


def component_releases(manifests: Path) -> list[dict]:
    """component_metadata.yaml's releases (name, version, repoUrl), as the Go operator reports them."""
    path = manifests / "component_metadata.yaml"
    try:
        data = load_yaml(path.read_text(encoding="utf-8"), str(path))
        releases = data["releases"]
    except (OSError, KeyError, TypeError, InputError):
        return []
    out = []
    for rel in releases if isinstance(releases, list) else ():
        if isinstance(rel, dict) and rel.get("version") is not None:
            out.append({k: str(rel[k]) for k in ("name", "version", "repoUrl") if rel.get(k) is not None})
    return out


def shipped_controller_image(manifests: Path, overlay: str | None = None) -> str | None:
    """The controller image the overlay deploys as shipped: its params.env value for the
    controller (rhoai), else its kustomization's `images:` entry for the controller image
    (kubeflow's overlays/manager); None when it sets neither."""
    directory = manifests / choose_overlay(manifests, overlay)
    controller = related_images()[CONTROLLER]
    if (directory / "params.env").is_file():
        params = ParamsEnv.load(directory / "params.env")
        found = next((params.get(key) for key in controller.params if params.get(key)), None)
        if found:
            return found
    kustomization = next((directory / n for n in ("kustomization.yaml", "kustomization.yml", "Kustomization")
                          if (directory / n).is_file()), None)
    if kustomization is None:
        return None
    data = load_yaml(read_text(str(kustomization), str(kustomization), "source-file"), str(kustomization))
    for entry in (data.get("images") or () if isinstance(data, dict) else ()):
        if isinstance(entry, dict) and entry.get("name") in controller.images:
            image = str(entry.get("newName") or entry["name"])
            tag = f":{entry['newTag']}" if entry.get("newTag") else ""
            return image + tag + (f"@{entry['digest']}" if entry.get("digest") else "")
    return None


def _same_release(image: ImageRef, shipped: ImageRef) -> bool:
    """The same repository (on any registry: a mirror keeps the last path part) at the same tag."""
    return bool(image.tag) and image.tag == shipped.tag and \
        image.name.rsplit("/", 1)[-1] == shipped.name.rsplit("/", 1)[-1]


def controller_channels(image: str) -> list[Channel]:
    """The channels whose controller `image` is, by repository and tag (none for a digest alone)."""
    parsed = parse_image(image)
    return [c for c in channels().values() if _same_release(parsed, parse_image(c.image, f"pins.yaml: {c.name}"))]


def mismatched_controllers(images: Mapping[str, str], overridden: Mapping[str, str],
                           tree: Channel | None) -> list[str]:
    """One warning per rendered image an override (`overridden`: image -> the setting that gave
    it) set that is another channel's controller than `tree`'s (the channel of the manifests;
    None: an unknown tree, of which nothing is known to differ)."""
    out = []
    for image in images:
        origin = overridden.get(image)
        owners = controller_channels(image) if origin and tree is not None else []
        if owners and tree not in owners:
            other = owners[0]
            out.append(f"{origin}: {image} is the controller of channel {other.name} (Trainer {other.trainer}), but "
                       f"the manifests are channel {tree.name} (Trainer {tree.trainer}): its config may not match (a "
                       f"controller rejects the config fields of another release and crash-loops); render --channel "
                       f"{other.name} for both from one release, or drop the override for {tree.name}'s {tree.image}")
    return out
