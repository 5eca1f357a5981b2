"""Render layers its edits over the source in memory: no temporary copy, nothing written, and
errors name the files the user gave (the paths the engine itself read)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from trainerctl.source import walk_tree

ODH = ("opendatahub-trainer", "odh-3.5.0")


def _render(args: list[str], tmpdir: Path, cwd: Path, **env: str) -> subprocess.CompletedProcess:
    tmpdir.mkdir(mode=0o700)
    environment = {k: v for k, v in os.environ.items() if not k.startswith("RELATED_IMAGE_")}
    environment.update(TMPDIR=str(tmpdir), NO_COLOR="1", **env)
    return subprocess.run([sys.executable, "-m", "trainerctl", "render", *args], cwd=cwd,
                          capture_output=True, text=True, env=environment, timeout=300)


def test_render_leaves_an_empty_tmpdir_empty(tmp_path, mirrors, upstream):
    cache = tmp_path / "cache"
    source = ["--source", f"file://{mirrors[ODH[0]]}", "--ref", ODH[1], "--cache-dir", str(cache)]
    fetched = subprocess.run([sys.executable, "-m", "trainerctl", "fetch", *source], cwd=tmp_path,
                             capture_output=True, text=True, timeout=300)
    assert fetched.returncode == 0, fetched.stderr
    override = {"RELATED_IMAGE_ODH_TRAINER_IMAGE": "registry.example.com/trainer:1"}
    warm = _render([*source, "--platform", "openshift"], tmp_path / "tmp-warm", tmp_path, **override)
    assert warm.returncode == 0, warm.stderr
    assert "registry.example.com/trainer:1" in warm.stdout
    elsewhere = tmp_path / "elsewhere"  # no trainerctl.lock (fetch wrote one in tmp_path)
    elsewhere.mkdir()
    local = _render(["--source", str(upstream / ODH[0] / ODH[1])], tmp_path / "tmp-local", elsewhere,
                    **override)
    assert local.returncode == 0, local.stderr
    for tmpdir in ("tmp-warm", "tmp-local"):
        assert list((tmp_path / tmpdir).iterdir()) == [], tmpdir
    # the edits never reached the cache
    (tree,) = (cache / "trees").iterdir()
    assert walk_tree(tree / "manifests") == __import__("json").loads((tree / "source.json").read_text())["digest"]


def test_errors_name_the_users_files(tmp_path, upstream):
    checkout = tmp_path / "checkout"
    shutil.copytree(upstream / ODH[0] / ODH[1], checkout, symlinks=True)
    kustomization = checkout / "manifests" / "rhoai" / "kustomization.yaml"
    kustomization.write_text(kustomization.read_text() + "\nnotAField: 1\n")
    proc = _render(["--source", str(checkout)], tmp_path / "tmp", tmp_path)
    assert proc.returncode == 2 and proc.stdout == ""
    (line,) = proc.stderr.strip().splitlines()
    assert f"{checkout}/manifests/rhoai/kustomization.yaml" in line and "notAField" in line, line
    assert str(tmp_path / "tmp") not in line and "work copy" not in line
    params = checkout / "manifests" / "rhoai" / "params.env"
    kustomization.write_text(kustomization.read_text().replace("\nnotAField: 1\n", "\n"))
    params.write_text(params.read_text() + "odh-extra-image=Not A Valid/Image\n")
    proc = _render(["--source", str(checkout)], tmp_path / "tmp2", tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert f"{params}: odh-extra-image" in proc.stderr, proc.stderr


@pytest.mark.parametrize("name", ["kustomization.yml", "Kustomization"])
def test_the_wrapper_hides_a_kustomization_beside_the_overlay(tmp_path, upstream, name):
    """The wrapper sits in memory in the overlay's parent directory; a kustomization file there
    on disk is not part of the render (kubectl would see one kustomization either way)."""
    checkout = tmp_path / "checkout"
    shutil.copytree(upstream / ODH[0] / ODH[1], checkout, symlinks=True)
    baseline = _render(["--source", str(checkout)], tmp_path / "tmp1", tmp_path)
    assert baseline.returncode == 0, baseline.stderr
    (checkout / "manifests" / name).write_text("resources: [does-not-exist.yaml]\n")
    proc = _render(["--source", str(checkout)], tmp_path / "tmp2", tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == baseline.stdout
