"""Where trainerctl keeps what it caches: one home folder, one subfolder per cache.

`--cache-dir` (else TRAINERCTL_CACHE_DIR, trainerctl.yaml's `cacheDir`, $XDG_CACHE_HOME/trainerctl,
~/.cache/trainerctl) names the home, and every cache moves with it: fetched sources (repos/,
trees/), the kustomize engine's parses and output (kustomize/), remote bases and files a
kustomization names (remote/), and the parses of large `-f` files (parsed/). docs/trust.md says
what each holds.
"""

from __future__ import annotations

import os
from pathlib import Path

from trainerctl.errors import InputError

ENV = "TRAINERCTL_CACHE_DIR"


def default_cache_dir() -> Path:
    """The home when no --cache-dir is given. A HOME that is set but empty or relative is refused:
    ~ would be / or the working directory, and caches would land in /.cache or wherever the
    command runs."""
    if os.environ.get(ENV):
        return Path(os.environ[ENV])
    if os.environ.get("XDG_CACHE_HOME"):
        return Path(os.environ["XDG_CACHE_HOME"]) / "trainerctl"
    home = os.environ.get("HOME")
    if home is not None and not os.path.isabs(home):
        said = "empty" if not home.strip() else "not an absolute path"
        raise InputError(f"HOME is {said}, so trainerctl has no cache directory: set HOME or XDG_CACHE_HOME, "
                         f"or name one with --cache-dir or {ENV}")
    return Path(os.path.expanduser("~")) / ".cache" / "trainerctl"


def cache_home(given: str | Path | None = None) -> Path:
    """The home: `given` (--cache-dir), else the default; one line when it cannot be a folder."""
    root = Path(given) if given else default_cache_dir()
    where = f"--cache-dir {root}" if given else (
        f"{ENV} {root}" if os.environ.get(ENV) else f"cache directory {root}")
    if not str(given if given else root).strip():
        raise InputError(f"{where}: expected a directory")
    for path in (root, *root.parents):
        if path.exists():
            if not path.is_dir():
                raise InputError(f"{where}: {path} is a file, not a directory")
            break
    return root
