"""Where trainerctl's own kustomize trees (runtimes/, imagestreams/, templates/) are."""

from __future__ import annotations

from pathlib import Path

from trainerctl.errors import TrainerctlError

ASSET_DIRS = ("runtimes", "imagestreams", "templates")
_PACKAGE = Path(__file__).resolve().parents[1]


def asset_dir(name: str) -> Path:
    """`name` inside the package (a wheel may ship them as trainerctl/_assets/) or at the repo root."""
    for candidate in (_PACKAGE / "_assets" / name, _PACKAGE.parent / name):
        if (candidate / "kustomization.yaml").is_file() or (candidate / "overlay").is_dir():
            return candidate
    raise TrainerctlError(f"trainerctl's {name}/ directory is missing from this installation ({_PACKAGE.parent})")
