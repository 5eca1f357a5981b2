"""`trainerctl kustomize DIR`: a drop-in for `kubectl kustomize DIR`."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from trainerctl.cli import command
from trainerctl.cli.flags import takes
from trainerctl.settings import Settings


# A drop-in for `kubectl kustomize`: it reads neither trainerctl.yaml nor the environment's settings.
@command("kustomize")
@takes("remote_mirrors", files=False)
def kustomize(
    directory: Annotated[str, typer.Argument(metavar="DIR", help="Kustomization directory (or remote URL).")],
    s: Settings,
) -> None:
    """Build a kustomization and print it, byte-identical to `kubectl kustomize`."""
    from trainerctl.errors import InputError
    from trainerctl.kustomize import build_yaml
    from trainerctl.kustomize.cachedread import resource_cache
    from trainerctl.source.cachedir import default_cache_dir

    try:
        cache = resource_cache(default_cache_dir())
    except InputError:  # no cache directory (an empty HOME): the parse cache is only a speed-up
        cache = None
    sys.stdout.write(build_yaml(directory, remote_mirrors=list(s.remote_mirrors), parsed_cache=cache))
