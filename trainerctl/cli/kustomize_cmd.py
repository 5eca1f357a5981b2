"""`trainerctl kustomize DIR`: a drop-in for `kubectl kustomize DIR`."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from trainerctl.cli import command
from trainerctl.cli.flags import RemoteMirror


@command("kustomize")
def kustomize(
    directory: Annotated[str, typer.Argument(metavar="DIR", help="Kustomization directory (or remote URL).")],
    remote_mirror: RemoteMirror = [],  # noqa: B006 (typer reads the default)
) -> None:
    """Build a kustomization and print it, byte-identical to `kubectl kustomize`."""
    from trainerctl.kustomize import build_yaml
    from trainerctl.kustomize.cachedread import resource_cache
    from trainerctl.source.cachedir import default_cache_dir

    sys.stdout.write(build_yaml(directory, remote_mirrors=remote_mirror,
                                parsed_cache=resource_cache(default_cache_dir())))
