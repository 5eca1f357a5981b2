"""trainerctl's own data files (trainerctl/data/), read from beside the package.

importlib.resources would add its import to every run that reads one (render reads two), and
the files are ours, so libyaml reads them rather than the pure-Python loader.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

DATA_DIR = Path(__file__).resolve().parent / "data"


def load_yaml(name: str) -> Any:
    return yaml.load((DATA_DIR / name).read_text(encoding="utf-8"), Loader=yaml.CSafeLoader)
