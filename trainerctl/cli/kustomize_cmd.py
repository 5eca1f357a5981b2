"""`trainerctl kustomize DIR`: a drop-in for `kubectl kustomize DIR`."""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from trainerctl.cli import app


@app.command("kustomize")
def kustomize(
    directory: Path = typer.Argument(..., help="Kustomization directory (or remote URL)."),
    remote_mirror: list[str] = typer.Option(
        [], "--remote-mirror", help="PREFIX=REPLACEMENT: fetch remote resources from a mirror."
    ),
) -> None:
    """Build a kustomization and print it, byte-identical to `kubectl kustomize`."""
    from trainerctl.kustomize import build_yaml

    sys.stdout.write(build_yaml(str(directory), remote_mirrors=remote_mirror))
