"""No dead code: vulture finds no function, class, variable or import that nothing calls or reads.

Code used only by tests is dead too: what trainerctl, setup.py and scripts/ use is scanned, not
tests/. Names vulture cannot see used (a decorator registers them, the standard library calls
them) are in dead_code_allow.py, each with its caller."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import trainerctl

PACKAGE = Path(trainerctl.__file__).resolve().parent
ROOT = Path(__file__).resolve().parents[2]
ALLOW = Path(__file__).with_name("dead_code_allow.py")


def test_vulture_finds_no_dead_code():
    sources = [PACKAGE, ROOT / "setup.py", ROOT / "scripts"]
    proc = subprocess.run([sys.executable, "-m", "vulture", "--min-confidence", "60",
                           "--exclude", "_embedded,_assets", *map(str, sources), str(ALLOW)],
                          capture_output=True, text=True)
    assert proc.returncode == 0 and not proc.stdout, (
        f"vulture (exit {proc.returncode}) found code nothing uses; remove it, or add the name to "
        f"{ALLOW.name} with its caller:\n{proc.stdout}{proc.stderr}")
