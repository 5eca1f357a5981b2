"""Choosing the upstream overlay, and trainerctl's own overlay (templates/overlay) over each set,
held in memory beside the set it wraps."""

from __future__ import annotations

import copy
import os
from functools import lru_cache
from pathlib import Path, PurePosixPath

import yaml

from trainerctl.errors import InputError
from trainerctl.kustomize.cachedread import load_yaml11
from trainerctl.kustomize.filesys import OverlayFS
from trainerctl.parsed_cache import ParsedCache
from trainerctl.render.assets import asset_dir
from trainerctl.trust.bounded_read import read_text

# Tried in order when no overlay is given: opendatahub-io/trainer, then kubeflow/trainer.
DEFAULT_OVERLAYS = ("rhoai", "overlays/manager")
_KUSTOMIZATION_NAMES = ("kustomization.yaml", "kustomization.yml", "Kustomization")
# libyaml's loader: the pure-Python one costs ~50 ms on the rhoai kustomization alone.
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _kustomization_file(directory: Path) -> Path | None:
    for name in _KUSTOMIZATION_NAMES:
        try:
            if (directory / name).is_file():
                return directory / name
        except OSError:  # a path too long, a loop: not a kustomization we can use
            return None
    return None


def choose_overlay(manifests: Path, overlay: str | None) -> str:
    """The overlay path relative to manifests/, checked to be a kustomization inside it."""
    if overlay is None:
        for candidate in DEFAULT_OVERLAYS:
            if _kustomization_file(manifests / candidate):
                return candidate
        raise InputError(
            f"{manifests}: none of the default overlays ({', '.join(DEFAULT_OVERLAYS)}) exists; "
            f"choose one with --overlay"
        )
    rel = PurePosixPath(overlay.strip("/"))
    if rel.is_absolute() or ".." in rel.parts or not rel.parts:
        raise InputError(f"--overlay {overlay!r}: expected a directory path inside manifests/ (no '..')")
    if not _kustomization_file(manifests / rel):
        raise InputError(f"--overlay {overlay!r}: {manifests / rel} has no kustomization.yaml")
    return str(rel)


@lru_cache(maxsize=1)
def _template() -> dict:
    return yaml.load((asset_dir("templates") / "overlay" / "kustomization.yaml").read_text(encoding="utf-8"), Loader=_LOADER)


def sort_options(directory: Path, cache: ParsedCache | None = None) -> dict | None:
    """The set's own sortOptions, which the wrapping overlay must repeat to keep its order.
    Read as the engine reads it, through its cache (`cache`), where the build finds it next."""
    path = _kustomization_file(directory)
    if not path:
        return None
    try:
        docs = load_yaml11(read_text(str(path), str(path), "source-file"), str(path), cache)
    except (InputError, RecursionError):  # KustomizeError is an InputError
        return None  # the kustomize build that follows reports it, naming the file and field
    data = docs[0] if len(docs) == 1 else None
    return data.get("sortOptions") if isinstance(data, dict) else None


def wrapper_kustomization(
    resource: str,
    *,
    owner_label: tuple[str, str],
    namespace: str | None,
    sort: dict | None = None,
    images: list[dict] | None = None,
    patches: list[dict] | None = None,
) -> dict:
    """templates/overlay/kustomization.yaml, filled in for one set (see the comments there)."""
    data = copy.deepcopy(_template())
    data["resources"] = [resource]
    data["labels"] = [{"pairs": {owner_label[0]: owner_label[1]}}]
    if namespace:
        data["namespace"] = namespace
    else:
        data.pop("namespace", None)
    if sort:
        data["sortOptions"] = sort
    if images:
        data["images"] = images
    if patches:
        data["patches"] = patches
    return data


def add_wrapper(fs: OverlayFS, directory: Path, data: dict, label: str) -> str:
    """Put `data` in memory as the kustomization of `directory`'s parent (whose `resources`
    name `directory` by its base name) and return the path to build: the parent as the user
    knows it. Any kustomization file of the parent on disk is hidden; nothing is written."""
    real_parent = os.path.realpath(directory.parent)
    for name in _KUSTOMIZATION_NAMES:
        fs.hide(os.path.join(real_parent, name))
    text = yaml.safe_dump(data, sort_keys=False)
    fs.add_file(os.path.join(real_parent, "kustomization.yaml"), text.encode("utf-8"), label=label)
    return str(directory.parent)
