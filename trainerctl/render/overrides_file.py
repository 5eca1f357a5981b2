"""The image overrides file (`--images-from FILE`): an `images:` mapping of KEY: IMAGE, as in
trainerctl.yaml, written by `trainerctl images --pin-digests --write-overrides FILE`
(trainerctl.images.overrides says which keys)."""

from __future__ import annotations

import yaml

from trainerctl.errors import InputError
from trainerctl.render.image_refs import parse_image
from trainerctl.trust.bounded_read import read_text, shown_path
from trainerctl.trust.document_bounds import load_yaml
from trainerctl.trust.safe_text import field_name
from trainerctl.trust.safe_write import write_atomic

_HEADER = ("# Image overrides by digest, written by `trainerctl images --pin-digests --write-overrides`.\n"
           "# Use them with `trainerctl render|install --images-from FILE` (docs/images.md).\n")


def write_overrides(path: str, overrides: dict[str, str]) -> None:
    body = yaml.safe_dump({"images": overrides}, sort_keys=False, default_flow_style=False)
    try:
        write_atomic(path, _HEADER + body)
    except OSError as exc:
        raise InputError(f"--write-overrides {shown_path(path)}: cannot write: {exc.strerror or exc}") from None


def read_overrides(path: str, flag: str = "--images-from") -> dict[str, str]:
    """The `images:` mapping of an overrides file, every value a valid image reference."""
    label = f"{flag} {shown_path(path)}"
    expected = "YAML with an `images:` mapping of KEY: IMAGE (as --write-overrides writes it)"
    data = load_yaml(read_text(path, label, "images-file", expected=expected), label, expected=expected)
    if not isinstance(data, dict) or not isinstance(data.get("images"), dict):
        raise InputError(f"{label}: expected {expected}")
    unknown = sorted((k for k in data if k != "images"), key=str)
    if unknown:
        raise InputError(f"{label}: {field_name(str(unknown[0]))}: unknown field (expected only `images:`)")
    out: dict[str, str] = {}
    for key, value in data["images"].items():
        if not isinstance(key, str) or not key or not isinstance(value, str):
            raise InputError(f"{label}: images: {field_name(str(key))}: expected KEY: IMAGE (strings)")
        parse_image(value, f"{label}: images: {field_name(key)}")
        out[key] = value
    return out
