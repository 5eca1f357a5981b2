"""One cache home (trainerctl/cachedir.py): `--cache-dir` moves every cache trainerctl keeps (the
fetched sources, the kustomize engine's parses, remote bases and files), nothing
lands in the default home then, and an empty HOME is refused in one line rather than caching in
whatever folder the command runs in."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from trainerctl.errors import EXIT_BAD_INPUT

KF = ("kubeflow-trainer", "v2.3.0")


def _run(args: list[str], cwd: Path, **env: str) -> subprocess.CompletedProcess:
    environment = {k: v for k, v in os.environ.items()
                   if k not in ("TRAINERCTL_CACHE_DIR", "XDG_CACHE_HOME", "HOME") and not k.startswith("RELATED_IMAGE_")}
    environment.update(NO_COLOR="1", **env)
    return subprocess.run([sys.executable, "-m", "trainerctl", *args], cwd=cwd, capture_output=True, text=True,
                          env=environment, timeout=600)


def _files(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()) if root.exists() else []


def test_cache_dir_moves_every_cache_remote_bases_included(tmp_path, mirrors, remotes):
    home, cache = tmp_path / "home", tmp_path / "cache"
    home.mkdir()
    mirror_flags = [f for m in remotes.mirrors for f in ("--remote-mirror", m)]
    rendered = _run(["render", "--source", f"file://{mirrors[KF[0]]}", "--ref", KF[1], "--overlay", "overlays/manager",
                     "--no-lock", "--cache-dir", str(cache), *mirror_flags], tmp_path, HOME=str(home))
    assert rendered.returncode == 0, rendered.stderr
    kept = {name.split("/")[0] for name in _files(cache)}
    assert kept == {"repos", "trees", "kustomize", "remote"}, sorted(kept)
    assert any(name.startswith("remote/http/") for name in _files(cache)), _files(cache)
    assert _files(home) == []  # nothing in the default home


def test_the_kustomize_command_keeps_its_caches_in_trainerctl_cache_dir(tmp_path, upstream, remotes):
    from tests.support.remotes import rewrite_tree

    home, cache = tmp_path / "home", tmp_path / "cache"
    home.mkdir()
    tree = rewrite_tree(upstream / KF[0] / KF[1] / "manifests", tmp_path / "manifests", remotes)
    built = _run(["kustomize", str(tree / "overlays" / "manager")], tmp_path, HOME=str(home),
                 TRAINERCTL_CACHE_DIR=str(cache))
    assert built.returncode == 0, built.stderr
    assert {name.split("/")[0] for name in _files(cache)} == {"kustomize", "remote"}
    assert _files(home) == []


@pytest.mark.parametrize("command", [["render", "--source", "{source}"]])  # kustomize: tests/cli/test_cache_home.py
def test_an_empty_home_is_refused_in_one_line(tmp_path, upstream, command):
    source = upstream / "opendatahub-trainer" / "odh-3.5.0"
    args = [a.format(source=source) for a in command]
    proc = _run(args, tmp_path, HOME="")
    assert proc.returncode == EXIT_BAD_INPUT and proc.stdout == "", proc.stderr
    (line,) = proc.stderr.strip().splitlines()
    assert "HOME is empty" in line and "--cache-dir" in line, line
    assert list(tmp_path.iterdir()) == []  # no .cache in the working directory
