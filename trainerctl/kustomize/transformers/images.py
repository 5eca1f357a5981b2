"""ImageTagTransformer: `images:` entries and `kind: ImageTagTransformer`. Like kustomize it
updates every `containers`/`initContainers` list anywhere in an object, then the image field
specs; CustomResourceDefinitions are left alone."""

from __future__ import annotations

import re

from trainerctl.kustomize import fieldspecs
from trainerctl.kustomize import schema
from trainerctl.kustomize.errors import KustomizeError

KIND = "ImageTagTransformer"
CONFIG = schema.Struct(KIND, {"imageTag": schema.IMAGE,
                              "fieldSpecs": schema.List(schema.FIELD_SPEC)})


def split_image(image: str) -> tuple[str, str, str]:
    """name, tag, digest; a registry port before the first '/' is not a tag."""
    slash = image.find("/")
    search = image[slash:] if slash > 0 else image
    offset = slash if slash > 0 else 0
    at, colon = search.find("@"), search.find(":")
    if at < 0 and colon < 0:
        return image, "", ""
    if at >= 0 and (colon < 0 or at < colon):
        return image[: at + offset], "", image[at + offset + 1:]
    if at >= 0 and colon >= 0:
        return image[: colon + offset], image[colon + offset + 1: at + offset], image[at + offset + 1:]
    return image[: colon + offset], image[colon + offset + 1:], ""


def _updater(entry: dict, where: str):
    name = entry.get("name", "")
    try:
        pattern = re.compile("^" + name + r"(:[a-zA-Z0-9_.{}-]*)?(@sha256:[a-zA-Z0-9_.{}-]*)?\Z")
    except re.error as exc:
        raise KustomizeError(f"{where}: image name {name!r} is not a valid pattern: {exc}") from None
    new_name, new_tag = entry.get("newName", ""), entry.get("newTag", "")
    digest, tag_suffix = entry.get("digest", ""), entry.get("tagSuffix", "")

    def update(value: str) -> str:
        if not pattern.match(value):
            return value
        n, tag, dig = split_image(value)
        if new_name:
            n = new_name
        if new_tag and digest:
            tag, dig = new_tag, digest
        elif new_tag:
            tag, dig = new_tag, ""
        elif digest:
            tag, dig = "", digest
        elif tag_suffix:
            tag, dig = tag + tag_suffix, ""
        if tag:
            n += ":" + tag
        if dig:
            n += "@" + dig
        return n

    return update


def _legacy(node, update, where) -> None:
    if isinstance(node, dict):
        for key, value in node.items():
            _legacy(value, update, where)
            if key in ("containers", "initContainers") and isinstance(value, list):
                for c in value:
                    if isinstance(c, dict) and c.get("image") is not None:
                        c["image"] = _scalar(c["image"], update, where)
    elif isinstance(node, list):
        for item in node:
            _legacy(item, update, where)


def _scalar(value, update, where):
    if isinstance(value, (dict, list)):
        raise KustomizeError(f"{where}: an image field holds {type(value).__name__}, "
                             f"expected a string")
    if isinstance(value, str):
        return update(value)
    return value


def configure(cfg: dict, ctx):
    update = _updater(cfg.get("imageTag") or {}, ctx.where)
    specs = [fieldspecs.FieldSpec.from_config(f, ctx.where) for f in cfg.get("fieldSpecs") or []]

    def transform(resmap) -> None:
        for r in resmap:
            if r.kind == "CustomResourceDefinition":
                continue
            _legacy(r.obj, update, ctx.where)
            for spec in specs:
                if spec.applies_to(r.gvk):
                    for parent, key in fieldspecs.field_values(r.obj, spec):
                        if parent[key] is not None:
                            parent[key] = _scalar(parent[key], update, ctx.where)

    return transform
