"""Where the source cache lives (also the parsed-file cache of `-f`, and kustomize's remote files)."""

from __future__ import annotations

import os
from pathlib import Path

from trainerctl.errors import InputError


def default_cache_dir() -> Path:
    """TRAINERCTL_CACHE_DIR, else $XDG_CACHE_HOME/trainerctl, else ~/.cache/trainerctl. A HOME
    that is set but empty or relative is refused (one line, exit 2): `~` would become `/` or the
    current folder, and the cache would land in `/.cache` or wherever the command runs."""
    if os.environ.get("TRAINERCTL_CACHE_DIR"):
        return Path(os.environ["TRAINERCTL_CACHE_DIR"])
    if os.environ.get("XDG_CACHE_HOME"):
        return Path(os.environ["XDG_CACHE_HOME"]) / "trainerctl"
    home = os.environ.get("HOME")
    if home is not None and not os.path.isabs(home):
        said = "empty" if not home.strip() else "not an absolute path"
        raise InputError(f"HOME is {said}, so trainerctl has no cache directory: set HOME, XDG_CACHE_HOME or "
                         "TRAINERCTL_CACHE_DIR (render: or --cache-dir)")
    return Path(os.path.expanduser("~")) / ".cache" / "trainerctl"
