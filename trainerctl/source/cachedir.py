"""Where the source cache lives (also the parsed-file cache of `-f`)."""

from __future__ import annotations

import os
from pathlib import Path


def default_cache_dir() -> Path:
    if os.environ.get("TRAINERCTL_CACHE_DIR"):
        return Path(os.environ["TRAINERCTL_CACHE_DIR"])
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "trainerctl"
