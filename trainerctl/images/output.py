"""How `trainerctl images` prints: one image per line, JSON, or an oc-mirror ImageSetConfiguration.

oc-mirror v2 (OpenShift 4.18 and later; v1 is deprecated) reads `mirror.openshift.io/v2alpha1`, and
mirrors `mirror.additionalImages[].name` by tag or by digest. A pinned image is listed by digest
alone, the form its ImageDigestMirrorSet redirects and `--images-from` installs.
"""

from __future__ import annotations

from trainerctl.images.image_uses import ListedImage
from trainerctl.trust.serialize import json_text, yaml_text

FORMATS = ("plain", "json", "oc-mirror")
OC_MIRROR_API_VERSION = "mirror.openshift.io/v2alpha1"


def _ref(listed: ListedImage) -> str:
    return listed.pinned or listed.image


def plain(images: list[ListedImage]) -> str:
    return "".join(f"{ref}\n" for ref in sorted({_ref(i) for i in images}))


def as_json(images: list[ListedImage], source: dict | None) -> str:
    doc = {"source": source or {}, "images": [i.to_dict() for i in images]}
    return json_text(doc)


def oc_mirror(images: list[ListedImage]) -> str:
    doc = {"kind": "ImageSetConfiguration", "apiVersion": OC_MIRROR_API_VERSION,
           "mirror": {"additionalImages": [{"name": ref} for ref in sorted({_ref(i) for i in images})]}}
    return yaml_text(doc, default_flow_style=False)


def render_output(fmt: str, images: list[ListedImage], source: dict | None) -> str:
    if fmt == "json":
        return as_json(images, source)
    if fmt == "oc-mirror":
        return oc_mirror(images)
    return plain(images)
