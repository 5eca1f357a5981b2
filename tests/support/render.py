"""Fixtures for the render tests: ../shared located (or skipped), local git mirrors of upstream/,
the pinned release as the wheel build embeds it.

The mirrors are what the render tests fetch from instead of GitHub: one repository per upstream
repo, one commit per ref putting that ref's tree at the root as `manifests/`, tagged with the ref
name, so trainerctl's real fetch path (ls-remote, shallow fetch, extraction) runs offline.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

SHARED = Path(__file__).resolve().parents[3] / "shared"
UPSTREAM = SHARED / "upstream"
REPOS = {"opendatahub-trainer": "opendatahub-io/trainer", "kubeflow-trainer": "kubeflow/trainer"}
# The tree the Go operator ships today: its manifests/trainer is byte-identical to this folder
# (synced from opendatahub-io/trainer main), and the default channel pins its commit.
OPERATOR_TREE = ("opendatahub-trainer", "main-d140e85")


def all_refs() -> list[tuple[str, str]]:
    """(repo folder, ref) for every ref under ../shared/upstream; empty when it is absent."""
    if not UPSTREAM.is_dir():
        return []
    return [(repo.name, ref.name) for repo in sorted(UPSTREAM.iterdir()) for ref in sorted(repo.iterdir())]


def build_mirror(dest: Path, repo_folder: str) -> Path:
    """A git repo at dest with one tagged commit per ref of ../shared/upstream/<repo_folder>."""
    import git

    repo = git.Repo.init(dest, initial_branch="main")
    env = {
        "GIT_AUTHOR_NAME": "mirror", "GIT_AUTHOR_EMAIL": "mirror@example.invalid",
        "GIT_COMMITTER_NAME": "mirror", "GIT_COMMITTER_EMAIL": "mirror@example.invalid",
        "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z", "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z",
    }
    with repo.git.custom_environment(**env):
        for ref_dir in sorted((UPSTREAM / repo_folder).iterdir()):
            shutil.rmtree(dest / "manifests", ignore_errors=True)
            # copy, not copy2: kept mtimes + equal sizes would let git's stat cache miss a changed file
            shutil.copytree(ref_dir / "manifests", dest / "manifests", symlinks=True, copy_function=shutil.copy)
            repo.git.add("-A", "manifests")
            repo.git.commit("-q", "--allow-empty", "-m", f"{repo_folder} {ref_dir.name}")
            repo.git.tag(ref_dir.name)
    repo.close()
    return dest


@pytest.fixture(scope="session")
def upstream(shared_dir) -> Path:
    """../shared/upstream (conftest's shared_dir skips, or fails under TRAINERCTL_REQUIRE_SHARED=1)."""
    return shared_dir / "upstream"


@pytest.fixture(scope="session")
def mirrors(tmp_path_factory, upstream) -> dict[str, Path]:
    """{"opendatahub-trainer": path, "kubeflow-trainer": path} of local git mirrors."""
    root = tmp_path_factory.mktemp("mirrors")
    return {folder: build_mirror(root / folder, folder) for folder in REPOS}


@pytest.fixture(scope="session")
def remotes(tmp_path_factory, upstream):
    """JobSet over loopback HTTP and LWS as a local git repo (tests/support/remotes.py)."""
    from tests.support import remotes as remotes_mod

    served = remotes_mod.start(upstream.parent, tmp_path_factory.mktemp("remotes"))
    yield served
    served.stop()


@pytest.fixture(autouse=True)
def remotes_outlive_each_test():
    """A stand-in that ends during a test fails that test, saying how it ended. Otherwise the
    next test that fetches from it fails with "connection refused", far from what ended it
    (a session's stand-in lives for the whole run)."""
    from tests.support import remotes as remotes_mod

    before = remotes_mod.running()
    yield
    ended = [r.ended() for r in before if not remotes_mod.stopped(r) and r.ended()]
    assert not ended, "; ".join(ended)


@pytest.fixture(scope="session")
def embedded_copy(tmp_path_factory, upstream) -> Path:
    """trainerctl/_embedded as the wheel build writes it: the default channel's tree (from ../shared,
    named by its env var)."""
    from trainerctl.source.embedding import ENV, embed

    root = tmp_path_factory.mktemp("wheel") / "_embedded"
    embed(root, Path(__file__).resolve().parents[2], env={ENV: str(upstream.joinpath(*OPERATOR_TREE))},
          log=lambda line: None)
    return root


@pytest.fixture
def installed_copy(tmp_path, embedded_copy, monkeypatch) -> Path:
    """A writable copy of the embedded release, used as this installation's."""
    from trainerctl.source import embedded

    root = tmp_path / "_embedded"
    shutil.copytree(embedded_copy, root)
    monkeypatch.setattr(embedded, "EMBED_DIR", root)
    return root
