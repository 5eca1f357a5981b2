"""`trainerctl kustomize DIR`: a drop-in for `kubectl kustomize DIR`."""

from __future__ import annotations

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
    """Print a kustomization's build, as `kubectl kustomize` does.

    Byte-identical to `kubectl kustomize DIR`, remote bases included; trainerctl.yaml is not read."""
    from trainerctl.cachedir import default_cache_dir
    from trainerctl.cli.output import verbatim
    from trainerctl.errors import InputError
    from trainerctl.kustomize import build_yaml
    from trainerctl.kustomize.cachedread import resource_cache

    # TRAINERCTL_CACHE_DIR moves it (this command takes no trainerctl flags); caching is best
    # effort here, so a home that cannot be one (an empty HOME) only means parsing again.
    try:
        home = default_cache_dir()
    except InputError:
        home = None
    verbatim(build_yaml(directory, remote_mirrors=list(s.remote_mirrors),
                        parsed_cache=resource_cache(home) if home else None, cache_dir=home))
