"""The git source: validation before git runs, shallow fetch from a local mirror, pins, the lock,
the cache's digest, offline use and symlinks."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest


from trainerctl.cli import main
from trainerctl.errors import InputError
from trainerctl.source import (
    FetchError,
    Lock,
    PinError,
    SourceCache,
    local_source,
    read_lock,
    resolve_source,
    validate_ref,
    validate_url,
    walk_tree,
    write_lock,
)
from trainerctl.source import gitrepo
from trainerctl.source.cache import check_pin, expected_commit


@pytest.fixture
def no_git(monkeypatch):
    """Make any attempt to start git fail the test."""
    def boom(*args, **kwargs):
        raise AssertionError("a git process was started")

    monkeypatch.setattr(gitrepo, "open_bare_repo", boom)
    import git

    monkeypatch.setattr(git.Git, "execute", boom)


@pytest.mark.parametrize("url", [
    "ext::sh -c touch% /tmp/pwned",
    "EXT::sh -c id",
    "fd::17",
    "foo::https://example.com/x.git",
    "--upload-pack=touch /tmp/pwned",
    "-c core.sshCommand=touch",
    "gopher://example.com/x",
    "https://exa mple.com/x",
    "ssh://-oProxyCommand=touch/x",
    "",
])
def test_bad_urls_are_refused(url):
    with pytest.raises(InputError):
        validate_url(url)


@pytest.mark.parametrize("url", [
    "https://github.com/opendatahub-io/trainer.git",
    "http://127.0.0.1:8080/trainer.git",
    "ssh://git@github.com/kubeflow/trainer.git",
    "git@github.com:kubeflow/trainer.git",
    "file:///srv/mirrors/trainer",
])
def test_good_urls_pass(url):
    assert validate_url(url) == url


@pytest.mark.parametrize("ref", [
    "--upload-pack=touch /tmp/x", "-x", "a..b", "a b", "v1.0.lock", "refs//x", "x/", "x@{1}", "~1", "a:b", "",
])
def test_bad_refs_are_refused(ref):
    with pytest.raises(InputError):
        validate_ref(ref)


@pytest.mark.parametrize("ref", ["odh-3.5.0", "v2.3.0", "main", "release/2.3", "d063877c480bbd9a35512691ded96c97d8937b44"])
def test_good_refs_pass(ref):
    assert validate_ref(ref) == ref


def test_injection_is_rejected_before_git_runs(tmp_path, no_git, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    marker = tmp_path / "pwned"
    cache = tmp_path / "cache"
    cases = [
        ["--source", "https://github.com/kubeflow/trainer.git", "--ref", f"--upload-pack=touch {marker}"],
        ["--source", f"ext::sh -c touch% {marker}", "--ref", "v2.3.0"],
        ["--source", f"--upload-pack=touch {marker}", "--ref", "v2.3.0"],
    ]
    for args in cases:
        for command in ("render", "fetch"):
            assert main([command, *args, "--cache-dir", str(cache)]) == 2, args
            assert "error:" in capsys.readouterr().err
    assert not marker.exists()
    assert not cache.exists()
    assert list(tmp_path.iterdir()) == []


def test_fetch_from_mirror_matches_upstream(tmp_path, mirrors, upstream):
    tree = resolve_source(f"file://{mirrors['kubeflow-trainer']}", "v2.3.0", cache_dir=tmp_path)
    assert tree.expected_digest == walk_tree(upstream / "kubeflow-trainer" / "v2.3.0" / "manifests")
    assert walk_tree(tree.manifests) == tree.expected_digest
    # shallow: the cache holds that one commit, not the mirror's history of five
    import git

    repo = git.Repo(SourceCache(tmp_path).repo_dir(f"file://{mirrors['kubeflow-trainer']}"))
    assert len(list(repo.iter_commits(f"refs/trainerctl/{tree.commit}"))) == 1


def test_fetch_by_commit(tmp_path, mirrors):
    url = f"file://{mirrors['opendatahub-trainer']}"
    by_tag = resolve_source(url, "odh-3.4.0", cache_dir=tmp_path / "a")
    by_sha = resolve_source(url, by_tag.commit, cache_dir=tmp_path / "b")
    assert by_sha.commit == by_tag.commit and by_sha.expected_digest == by_tag.expected_digest


def test_unknown_ref_is_a_clear_error(tmp_path, mirrors):
    url = f"file://{mirrors['kubeflow-trainer']}"
    with pytest.raises(InputError, match=r"ref 'v9.9.9' not found at file://"):
        resolve_source(url, "v9.9.9", cache_dir=tmp_path)
    assert not (tmp_path / "trees").exists()


def test_warm_cache_works_offline(tmp_path, mirrors):
    mirror = tmp_path / "mirror"
    shutil.copytree(mirrors["kubeflow-trainer"], mirror, symlinks=True)
    url = f"file://{mirror}"
    first = resolve_source(url, "v2.2.0", cache_dir=tmp_path / "cache")
    shutil.rmtree(mirror)  # the remote is gone
    for offline in (True, False):  # a cached tag needs no remote either way
        again = resolve_source(url, "v2.2.0", cache_dir=tmp_path / "cache", offline=offline)
        assert again == first


def test_cold_cache_offline_names_the_url(tmp_path):
    url = "https://github.com/opendatahub-io/trainer.git"
    with pytest.raises(FetchError, match="https://github.com/opendatahub-io/trainer.git"):
        resolve_source(url, "odh-3.5.0", cache_dir=tmp_path, offline=True)


def test_unreachable_remote_names_the_url(tmp_path):
    url = f"file://{tmp_path}/no-such-repo"
    with pytest.raises(FetchError) as err:
        resolve_source(url, "odh-3.5.0", cache_dir=tmp_path / "cache")
    assert url in str(err.value) and "trainerctl fetch" in str(err.value) and "--source PATH" in str(err.value)


def test_default_source_without_network_is_clear(tmp_path, monkeypatch, capsys):
    """On this machine github.com is unreachable: a render that must ask it (--refresh; without it
    the wheel's embedded copy answers, tests/render/test_embedded.py) says so in one line."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TRAINERCTL_CACHE_DIR", str(tmp_path / "cache"))
    code = main(["render", "--refresh"])
    err = capsys.readouterr().err
    if code == 0:
        pytest.skip("github.com is reachable from here")
    assert code == 1
    # the default channel, stable, is a commit on a branch: fetched by its commit
    assert err.startswith("error: cannot fetch d140e85264020f29d1e5a8d959ab2fde4aec6681 from "
                          "https://github.com/opendatahub-io/trainer.git: ")
    assert err.count("\n") == 1


def test_moved_tag_is_refused(tmp_path, mirrors, monkeypatch):
    import git

    mirror = tmp_path / "mirror"
    shutil.copytree(mirrors["kubeflow-trainer"], mirror, symlinks=True)
    url = f"file://{mirror}"
    cache = tmp_path / "cache"
    first = resolve_source(url, "v2.3.0", cache_dir=cache)
    lock = Lock(url, "v2.3.0", first.commit, first.expected_digest)
    repo = git.Repo(mirror)
    repo.git.tag("-f", "v2.3.0", "v2.2.0")  # someone re-points the tag
    with pytest.raises(PinError, match="pinned to " + first.commit):
        resolve_source(url, "v2.3.0", cache_dir=tmp_path / "cold", lock=lock)
    with pytest.raises(PinError, match="tag was moved"):
        resolve_source(url, "v2.3.0", cache_dir=cache, lock=lock, refresh=True)
    assert not (tmp_path / "cold" / "trees").exists()  # refused before fetching anything
    # the built-in pins do the same for the real upstream URLs
    commit = "0" * 40
    with pytest.raises(PinError):
        check_pin("https://github.com/kubeflow/trainer", "v2.3.0", commit,
                  expected_commit("https://github.com/kubeflow/trainer.git", "v2.3.0", None))


def test_pins_cover_the_channels_tags_and_commits():
    """odh-3.5.0 (channel 3.5) by its tag; stable, the default, by its commit (no tag names it)."""
    assert expected_commit("https://github.com/opendatahub-io/trainer.git", "odh-3.5.0", None) == \
        "d063877c480bbd9a35512691ded96c97d8937b44"
    stable = "d140e85264020f29d1e5a8d959ab2fde4aec6681"
    assert expected_commit("https://github.com/opendatahub-io/trainer.git", stable, None) == stable
    with pytest.raises(PinError, match=f"pinned to {'1' * 40}"):  # a lock of a commit ref holds it to its commit
        lock = Lock("https://github.com/opendatahub-io/trainer.git", stable, "1" * 40, "sha256:" + "0" * 64)
        check_pin(lock.url, stable, stable, expected_commit(lock.url, stable, lock))


def test_lock_digest_mismatch_is_refused(tmp_path, mirrors):
    url = f"file://{mirrors['opendatahub-trainer']}"
    tree = resolve_source(url, "odh-3.5.0", cache_dir=tmp_path)
    lock = Lock(url, "odh-3.5.0", tree.commit, "sha256:" + "0" * 64)
    with pytest.raises(PinError, match="trainerctl.lock"):
        resolve_source(url, "odh-3.5.0", cache_dir=tmp_path, lock=lock)


def test_lock_round_trip_and_bad_lock(tmp_path):
    path = tmp_path / "trainerctl.lock"
    lock = Lock("https://github.com/kubeflow/trainer.git", "v2.3.0", "a" * 40, "sha256:" + "b" * 64)
    write_lock(path, lock)
    assert read_lock(path) == lock
    assert lock.applies_to("https://github.com/kubeflow/trainer", "v2.3.0")
    assert not lock.applies_to("https://github.com/kubeflow/trainer", "v2.2.0")
    path.write_text("source:\n  url: x\n  ref: y\n  commit: nothex\n  digest: sha256:1\n")
    with pytest.raises(InputError, match="source.commit"):
        read_lock(path)
    assert read_lock(tmp_path / "missing.lock") is None


def _symlink_mirror(tmp_path: Path, target: str) -> Path:
    import git

    repo_dir = tmp_path / "evil"
    (repo_dir / "manifests" / "base").mkdir(parents=True)
    (repo_dir / "manifests" / "base" / "kustomization.yaml").write_text("resources: []\n")
    (repo_dir / "manifests" / "base" / "leak.yaml").symlink_to(target)
    repo = git.Repo.init(repo_dir)
    repo.git.add("-A")
    repo.git.commit("-q", "-m", "symlink", "--author", "t <t@example.invalid>",
                    env={"GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.invalid"})
    repo.git.tag("v1")
    return repo_dir


@pytest.mark.parametrize("target", ["/etc/passwd", "../../../outside.yaml"])
def test_symlink_leaving_the_tree_is_refused(tmp_path, target):
    repo_dir = _symlink_mirror(tmp_path, target)
    with pytest.raises(InputError, match="symlink"):
        resolve_source(f"file://{repo_dir}", "v1", cache_dir=tmp_path / "cache")
    assert not list((tmp_path / "cache" / "trees").glob("[0-9a-f]*"))
    with pytest.raises(InputError, match="symlink"):  # and the same for a local checkout
        walk_tree(local_source(repo_dir).manifests)


def test_symlink_inside_the_tree_is_kept(tmp_path):
    repo_dir = _symlink_mirror(tmp_path, "kustomization.yaml")
    tree = resolve_source(f"file://{repo_dir}", "v1", cache_dir=tmp_path / "cache")
    assert (tree.manifests / "base" / "leak.yaml").read_text() == "resources: []\n"


def test_local_source_reads_head_without_git(tmp_path, mirrors, no_git):
    tree = local_source(mirrors["opendatahub-trainer"])
    assert tree.manifests.name == "manifests" and tree.url is None
    assert tree.commit and len(tree.commit) == 40
    with pytest.raises(InputError):
        local_source(tmp_path / "missing")


def test_tampered_cache_is_refused(tmp_path, mirrors):
    from trainerctl.source import check_tree

    url = f"file://{mirrors['opendatahub-trainer']}"
    tree = resolve_source(url, "odh-3.5.0", cache_dir=tmp_path)
    assert check_tree(tree) == tree.expected_digest
    params = tree.manifests / "rhoai" / "params.env"
    params.write_text(params.read_text().replace("quay.io/opendatahub/trainer", "evil.example/trainer"))
    with pytest.raises(PinError, match="the cache was modified"):
        check_tree(resolve_source(url, "odh-3.5.0", cache_dir=tmp_path, offline=True))
    with pytest.raises(PinError, match="the cache was modified"):
        check_tree(tree, copy_to=tmp_path / "work")


def test_annotated_tag_resolves_to_its_commit(tmp_path, mirrors):
    import git

    mirror = tmp_path / "mirror"
    shutil.copytree(mirrors["kubeflow-trainer"], mirror, symlinks=True)
    repo = git.Repo(mirror)
    commit = repo.commit("v2.3.0").hexsha
    repo.git.tag("-a", "release-2.3", "-m", "annotated", "v2.3.0",
                 env={"GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.invalid"})
    tree = resolve_source(f"file://{mirror}", "release-2.3", cache_dir=tmp_path / "cache")
    assert tree.commit == commit
