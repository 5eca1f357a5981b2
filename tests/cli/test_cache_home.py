"""trainerctl's cache directory refuses a HOME that is set but empty or relative: `~` would be `/`
or the current folder, and the cache would land in `/.cache` or wherever the command runs. Where
a command needs its cache (render's sources), one line and exit 2 naming what to set; where the
cache is only a speed-up (the parse caches of `kustomize` and `-f`), the command runs without it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.kustomize_cases import write_tree


def _run(args: list[str], cwd: Path, home: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("TRAINERCTL_CACHE_DIR", "XDG_CACHE_HOME")}
    env["HOME"] = home
    return subprocess.run([sys.executable, "-m", "trainerctl", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=120, stdin=subprocess.DEVNULL)


@pytest.mark.parametrize("home, said", [("", "HOME is empty"), ("  ", "HOME is empty"),
                                         ("relative/home", "HOME is not an absolute path")])
def test_render_refuses_a_home_that_names_no_folder(tmp_path, home, said):
    before = Path("/.cache/trainerctl").exists()
    proc = _run(["render"], tmp_path, home)
    assert proc.returncode == 2 and proc.stdout == "", proc.stderr  # docs/exit-codes.md: bad input
    assert proc.stderr.count("\n") == 1 and said in proc.stderr and "TRAINERCTL_CACHE_DIR" in proc.stderr, proc.stderr
    assert list(tmp_path.iterdir()) == [] and Path("/.cache/trainerctl").exists() == before  # nothing written


def test_a_cache_only_for_speed_is_left_out(tmp_path):
    write_tree(tmp_path / "k", {"kustomization.yaml": "resources:\n- cm.yaml\n",
                                "cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n"})
    proc = _run(["kustomize", "k"], tmp_path, "")
    assert proc.returncode == 0 and "name: x" in proc.stdout, proc.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["k"]


def test_a_set_cache_dir_needs_no_home(tmp_path):
    from tests.support.cluster import require_shared

    source = require_shared() / "upstream" / "opendatahub-trainer" / "odh-3.5.0"
    proc = _run(["render", "--source", str(source), "--cache-dir", str(tmp_path / "c")], tmp_path, "")
    assert proc.returncode == 0 and "kind: Deployment" in proc.stdout, proc.stderr
