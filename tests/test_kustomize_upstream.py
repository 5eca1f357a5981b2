"""Acceptance: every kustomization under ../shared/upstream builds byte-identical to kubectl.

kubectl reads a copy whose remote URLs point at loopback stand-ins (../shared/remote); the
engine reads the untouched upstream tree with --remote-mirror, so the mirror map is exercised
too and both see the same bytes.
"""

from __future__ import annotations

import difflib
import subprocess
import sys

import pytest

from tests.conftest import SHARED_DIR
from tests.support import kubectl, remotes

UPSTREAM = SHARED_DIR / "upstream"
DIRS = [str(p.relative_to(UPSTREAM)) for p in remotes.kustomization_dirs(UPSTREAM)] if UPSTREAM.is_dir() else []


@pytest.fixture(scope="module")
def served(shared_dir, tmp_path_factory):
    work = tmp_path_factory.mktemp("remotes")
    r = remotes.start(shared_dir, work)
    tree = remotes.rewrite_tree(shared_dir / "upstream", work / "upstream", r)
    yield r, tree
    r.stop()


def test_all_115_directories_are_collected(shared_dir):
    assert len(DIRS) == 115


@pytest.mark.parametrize("rel", DIRS)
def test_byte_identical_to_kubectl(served, rel):
    from trainerctl.kustomize import build_yaml

    r, tree = served
    expected = kubectl.kustomize(tree / rel)
    assert expected.returncode == 0, expected.stderr
    got = build_yaml(str(UPSTREAM / rel), remote_mirrors=r.mirrors)
    if got != expected.stdout:
        diff = "\n".join(list(difflib.unified_diff(
            expected.stdout.splitlines(), got.splitlines(), "kubectl", "trainerctl", lineterm="", n=2))[:60])
        pytest.fail(f"{rel} differs from kubectl kustomize:\n{diff}")


def test_cli_is_a_drop_in(served):
    """The command itself, as a process: same stdout bytes, exit 0."""
    r, tree = served
    rel = "opendatahub-trainer/odh-3.5.0/manifests/rhoai"
    expected = kubectl.kustomize(tree / rel)
    got = subprocess.run([sys.executable, "-m", "trainerctl", "kustomize", str(tree / rel)],
                         capture_output=True, text=True)
    assert got.returncode == 0, got.stderr
    assert got.stdout == expected.stdout


def test_remote_mirror_flag(served):
    r, _ = served
    rel = UPSTREAM / "kubeflow-trainer/v2.3.0/manifests/third-party/jobset"
    args = [sys.executable, "-m", "trainerctl", "kustomize", str(rel)]
    for m in r.mirrors:
        args += ["--remote-mirror", m]
    got = subprocess.run(args, capture_output=True, text=True)
    assert got.returncode == 0, got.stderr
    assert "kind: CustomResourceDefinition" in got.stdout


def test_remote_file_cache_serves_offline(shared_dir, tmp_path, monkeypatch):
    """A release file fetched once builds again with its server gone."""
    from trainerctl.kustomize import build_yaml

    monkeypatch.setenv("TRAINERCTL_CACHE_DIR", str(tmp_path / "cache"))
    r = remotes.start(shared_dir, tmp_path)
    rel = str(UPSTREAM / "kubeflow-trainer/v2.3.0/manifests/third-party/jobset")
    first = build_yaml(rel, remote_mirrors=r.mirrors)
    r.stop()
    assert build_yaml(rel, remote_mirrors=r.mirrors) == first
