"""Pinned images as overrides for render and install (`--images-from FILE`, read and written by
trainerctl.render.overrides_file).

The file holds the same `images:` mapping trainerctl.yaml does: a params.env key, or for an image
the upstream manifests write themselves its name (a kustomize `images:` entry), to the image by
digest. Keys, not RELATED_IMAGE_* variables: one variable may set keys holding different images
(an ImageStream's 3.5 tag and the runtimes' image), and each needs its own digest.

Written only after a render with the overrides gives every container and ImageStream tag exactly
the digest resolved for it, so what is installed from the file is what was mirrored.
"""

from __future__ import annotations

from typing import Callable

from trainerctl.errors import TrainerctlError
from trainerctl.images.image_uses import ListedImage, list_images


class Unpinnable(TrainerctlError):
    """The pinned images cannot be expressed as overrides (one setting holds two images)."""


def overrides_for(images: list[ListedImage]) -> dict[str, str]:
    """key -> image by digest, for every pinned image.

    An image is pinned through every params.env key that holds it and no other rendered image
    (a key is global: the same key may hold another image in another params.env, as odh-3.4's
    rhoai/params.env and trainerctl's imagestreams/params.env do), and, where it runs in a
    container of the upstream manifests, through its name (a kustomize `images:` entry, which
    reaches a container however its image got there) unless another image of that name runs there
    too. A key held by other images as well is used only when nothing else can pin the image.
    """
    holders: dict[str, set[str]] = {}
    for listed in images:
        for key in listed.keys:
            holders.setdefault(key, set()).add(listed.image)
    names: dict[str, set[str]] = {}
    for listed in images:
        if any(u.component in (None, "manifests") and u.container for u in listed.uses):
            names.setdefault(listed.location.name, set()).add(listed.image)
    out: dict[str, str] = {}
    holder: dict[str, str] = {}
    for listed in images:
        if not listed.pinned:
            continue
        keys = [k for k in listed.keys if holders[k] == {listed.image}]
        if names.get(listed.location.name) == {listed.image}:
            keys.append(listed.location.name)
        if not keys:
            keys = list(listed.keys)
        if not keys:
            raise Unpinnable(f"{listed.image} ({listed.uses[0].shown()}) is set by no params.env key, and an image "
                             "name override reaches the containers of the upstream manifests only")
        for key in keys:
            if key in out and out[key] != listed.pinned:
                raise Unpinnable(f"{key} holds {holder[key]} in one place and {listed.image} in another: one "
                                 f"override cannot pin both; set them apart with --image KEY=REF")
            out[key], holder[key] = listed.pinned, listed.image
    return dict(sorted(out.items()))


def verify(images: list[ListedImage], overrides: dict[str, str], rerender: Callable[[dict[str, str]], tuple]) -> None:
    """Render again with the overrides: every use of every image must now name its pinned image.
    `rerender(overrides)` returns (objects, components) of that render."""
    expected = {use.identity(): listed.pinned for listed in images for use in listed.uses}
    objects, components = rerender(overrides)
    got = {use.identity(): (listed.image, use) for listed in list_images(objects, components=components)
           for use in listed.uses}
    for identity, pinned in expected.items():
        image, use = got.get(identity, (None, None))
        if image != pinned:
            where = use.shown() if use else " ".join(str(p) for p in identity if p)
            raise Unpinnable(f"with the overrides, {where} would run {image or 'nothing'}, not {pinned}: "
                             "the setting that chooses it cannot be overridden by key")
