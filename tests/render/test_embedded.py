"""The default channel's tree inside the wheel: what the build embeds and from where, what a render
of the default source reads (the copy, checked against the pinned digest and the lock; no git, no
socket, nothing in the source cache), and every way an altered copy is refused."""

from __future__ import annotations

import json
import os
import shutil
import socket
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.support.properties import PROPERTY
from tests.support.render import OPERATOR_TREE
from trainerctl.render import RenderOptions, render
from trainerctl.source import Lock, PinError, embedded, gitrepo
from trainerctl.source.embedded import DamagedInstallation, embedded_release, embedded_source
from trainerctl.source.embedding import ENV, EmbedError, embed, find_tree
from trainerctl.source.pins import default_channel, default_ref, default_url, pinned_commit, pinned_digest
from trainerctl.source.tree import walk_tree

ROOT = Path(__file__).resolve().parents[2]
# The default channel, stable: a commit on opendatahub-io/trainer main (no tag), so its ref is its commit.
URL, COMMIT = "https://github.com/opendatahub-io/trainer.git", "d140e85264020f29d1e5a8d959ab2fde4aec6681"
REF = COMMIT


@pytest.fixture(scope="session")
def stable_tree(shared_dir) -> Path:
    """The operator's synced tree, which the default channel pins."""
    return shared_dir.joinpath("upstream", *OPERATOR_TREE)


@pytest.fixture
def offline(monkeypatch, tmp_path):
    """No socket may connect and no git may start; the source cache is an empty directory."""
    def refuse(*args, **kwargs):
        raise AssertionError("the render tried to reach the network")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(gitrepo, "open_bare_repo", refuse)
    cache = tmp_path / "cache"
    monkeypatch.setenv("TRAINERCTL_CACHE_DIR", str(cache))
    monkeypatch.chdir(tmp_path)  # no trainerctl.yaml or trainerctl.lock of the checkout
    return cache


def test_the_pins_cover_the_default_with_a_digest():
    assert default_channel().name == "stable" and (default_url(), default_ref()) == (URL, REF)
    assert pinned_commit(URL, REF) == COMMIT and pinned_digest(COMMIT).startswith("sha256:")


def test_the_build_embeds_the_pinned_tree_and_records_it(embedded_copy, stable_tree):
    record = json.loads((embedded_copy / "source.json").read_text())
    assert record == {"url": URL, "ref": REF, "commit": COMMIT, "digest": pinned_digest(COMMIT)}
    assert walk_tree(embedded_copy / "manifests") == walk_tree(stable_tree / "manifests") == pinned_digest(COMMIT)


@pytest.mark.parametrize("name", ["main-d140e85", "any-name"])
def test_the_build_finds_shared_beside_the_repository(tmp_path, stable_tree, name):
    """By its digest: a tree under the commit's short name that is another tree is passed over,
    and the right one is found under any name."""
    repo = tmp_path / "checkout" / "trainerctl"
    (tmp_path / "checkout" / "shared" / "upstream" / "some-name").mkdir(parents=True)
    wrong = tmp_path / "checkout" / "shared" / "upstream" / "aaa-other" / "main-d140e85"
    shutil.copytree(stable_tree.parent / "odh-3.5.0", wrong)  # right name, wrong tree
    os.symlink(stable_tree, tmp_path / "checkout" / "shared" / "upstream" / "some-name" / name)
    manifests, where, scratch = find_tree(repo, env={}, fetch=_no_fetch)
    assert scratch is None and where.endswith(f"some-name/{name}") and walk_tree(manifests) == pinned_digest(COMMIT)


def _no_fetch(url, ref, cache):
    raise gitrepo.FetchError(f"cannot reach {url}: no network here")


def test_the_build_fetches_when_no_checkout_is_at_hand(tmp_path, mirrors):
    """The last resort is trainerctl's own fetch (here from a local mirror of the same tree, where
    it is tagged main-d140e85; tests/render/test_channels.py fetches the commit itself)."""
    from trainerctl.source.cache import resolve_source

    mirror = f"file://{mirrors['opendatahub-trainer']}"
    seen = []

    def fetch(url, ref, cache):
        seen.append((url, ref, cache))
        return resolve_source(mirror, OPERATOR_TREE[1], cache_dir=cache, refresh=True).manifests

    line = embed(tmp_path / "_embedded", tmp_path / "lonely", env={}, fetch=fetch, log=lambda line: None)
    assert seen and seen[0][:2] == (URL, REF) and not seen[0][2].exists()  # the throwaway cache is gone
    assert "a fetch of" in line and walk_tree(tmp_path / "_embedded" / "manifests") == pinned_digest(COMMIT)


def test_the_builds_own_fetch_names_the_url_and_no_temporary_path(tmp_path, monkeypatch):
    def unreachable(repo, url, *refs):
        raise gitrepo.FetchError(f"cannot reach {url}: Could not resolve host: github.com")

    monkeypatch.setattr(gitrepo, "ls_remote", unreachable)
    monkeypatch.setattr(gitrepo, "fetch_commit", unreachable)  # the default channel is fetched by its commit
    with pytest.raises(EmbedError) as err:
        embed(tmp_path / "_embedded", tmp_path / "lonely", env={}, log=lambda line: None)
    message = str(err.value)
    assert f"the fetch failed: cannot reach {URL}: Could not resolve host" in message
    assert "trainerctl-embed-" not in message and str(tmp_path) not in message.split(" holds no tree")[1]


def test_the_build_fails_in_one_line_when_nothing_verifies(tmp_path, stable_tree):
    with pytest.raises(EmbedError) as err:
        embed(tmp_path / "_embedded", tmp_path / "lonely", env={}, fetch=_no_fetch, log=lambda line: None)
    message = str(err.value)
    assert "\n" not in message and ENV in message and "no network here" in message and COMMIT in message
    assert not (tmp_path / "_embedded").exists()
    wrong = stable_tree.parent / "odh-3.5.0"
    with pytest.raises(EmbedError, match=f"{ENV}={wrong}: its manifests/ hash to sha256:"):
        embed(tmp_path / "_embedded", ROOT, env={ENV: str(wrong)}, fetch=_no_fetch, log=lambda line: None)
    with pytest.raises(EmbedError, match="not a readable tree"):
        embed(tmp_path / "_embedded", ROOT, env={ENV: str(tmp_path / "nothing")}, fetch=_no_fetch,
              log=lambda line: None)


def test_a_render_of_the_default_reads_the_copy_offline(installed_copy, offline, stable_tree):
    result = render(RenderOptions())
    assert result.source.embedded and (result.source.url, result.source.ref, result.source.commit) == (URL, REF, COMMIT)
    assert result.source.digest == pinned_digest(COMMIT) and result.source.channel == "stable"
    assert result.source.trainer_version == "2.3.0"
    reference = render(RenderOptions(source_path=stable_tree))
    assert result.objects == reference.objects and reference.source.channel == "stable"
    assert not (offline / "repos").exists() and not (offline / "trees").exists()
    # the same for --channel stable, --ref at the pinned commit, and with --offline
    for options in (RenderOptions(channel="stable"), RenderOptions(ref=COMMIT, source_url=URL + "/"),
                    RenderOptions(offline=True)):
        assert render(options).source.embedded


def test_other_refs_and_refresh_still_fetch(installed_copy):
    assert embedded_source(URL, "odh-3.4.0") is None and embedded_source(URL, "odh-3.5.0") is None
    assert embedded_source(URL, "main") is None  # the branch moves; the channel is its pinned commit
    assert embedded_source("https://github.com/kubeflow/trainer.git", REF) is None
    assert embedded_source(URL, REF) is not None


def test_refresh_asks_the_remote(installed_copy, offline):
    with pytest.raises(AssertionError, match="tried to reach the network"):
        render(RenderOptions(refresh=True))


def test_the_lock_binds_the_copy(installed_copy, offline):
    assert embedded_source(URL, REF, Lock(URL, REF, COMMIT, pinned_digest(COMMIT))).embedded
    with pytest.raises(PinError, match="pinned to " + "1" * 40):
        embedded_source(URL, REF, Lock(URL, REF, "1" * 40, pinned_digest(COMMIT)))
    with pytest.raises(PinError, match="trainerctl.lock records sha256:0"):
        embedded_source(URL, REF, Lock(URL, REF, COMMIT, "sha256:" + "0" * 64))


def test_no_copy_means_fetch(tmp_path, monkeypatch):
    monkeypatch.setattr(embedded, "EMBED_DIR", tmp_path / "absent")
    assert embedded_release() is None and embedded_source(URL, REF) is None


@pytest.mark.parametrize("record, problem", [
    ("{", "not the JSON"),
    ("[]", "expected the strings"),
    (json.dumps({"url": URL, "ref": REF, "commit": COMMIT}), "expected the strings"),
    (json.dumps({"url": URL, "ref": REF, "commit": "abc", "digest": "sha256:0"}), "no commit"),
    (json.dumps({"url": URL, "ref": REF, "commit": "2" * 40, "digest": "sha256:0"}), "does not pin"),
])
def test_a_damaged_record_is_one_line(installed_copy, record, problem):
    (installed_copy / "source.json").write_text(record)
    with pytest.raises(DamagedInstallation) as err:
        embedded_source(URL, REF)
    assert problem in str(err.value) and "reinstall trainerctl" in str(err.value) and "\n" not in str(err.value)


def test_a_record_with_another_digest_is_refused(installed_copy):
    record = json.loads((installed_copy / "source.json").read_text())
    (installed_copy / "source.json").write_text(json.dumps({**record, "digest": "sha256:" + "3" * 64}))
    with pytest.raises(PinError, match="but trainerctl pins"):
        embedded_source(URL, REF)


# Every kind of change to the installed copy: a file's bytes, a new file, a removed file, the
# executable bit. The render hashes the copy each time and refuses it, naming the copy.
changes = st.tuples(st.sampled_from(["edit", "add", "remove", "chmod"]), st.integers(0, 10_000), st.binary(max_size=8))


@PROPERTY
@given(change=changes)
def test_any_change_to_the_copy_is_refused(embedded_copy, tmp_path_factory, change):
    kind, pick, data = change
    root = tmp_path_factory.mktemp("altered") / "_embedded"
    shutil.copytree(embedded_copy, root)
    files = sorted(p for p in (root / "manifests").rglob("*") if p.is_file())
    target = files[pick % len(files)]
    if kind == "edit":
        target.write_bytes(target.read_bytes() + b"\n#" + data.hex().encode())
    elif kind == "add":
        (target.parent / f"extra-{data.hex()}.yaml").write_bytes(data)
    elif kind == "remove":
        target.unlink()
    else:
        target.chmod(target.stat().st_mode | 0o100)
    original = embedded.EMBED_DIR
    embedded.EMBED_DIR = root
    try:
        with pytest.raises(PinError) as err:
            render(RenderOptions())
    finally:
        embedded.EMBED_DIR = original
    assert "embedded in trainerctl no longer matches" in str(err.value) and "\n" not in str(err.value)


def test_status_names_the_embedded_copy():
    from trainerctl.cluster.install import source_dict
    from trainerctl.cluster.trainer.status_report import _source_line
    from trainerctl.render.render_options import SourceInfo

    info = SourceInfo(URL, REF, COMMIT, pinned_digest(COMMIT), "rhoai", "2.3.0", embedded=True, channel="stable")
    assert source_dict(info)["embedded"] is True and source_dict(info)["channel"] == "stable"
    assert _source_line(source_dict(info)) == f"source: the copy of {URL} at commit {COMMIT} embedded in trainerctl"
    assert _source_line({"url": URL, "ref": REF, "commit": COMMIT, "embedded": False}) == f"source: {URL} commit {COMMIT}"
    tagged = {"url": URL, "ref": "odh-3.5.0", "commit": "d063877c480bbd9a35512691ded96c97d8937b44"}
    assert _source_line({**tagged, "embedded": True}) == \
        f"source: the copy of {URL} ref odh-3.5.0 embedded in trainerctl, commit {tagged['commit']}"
