"""A rollback renders a revision again from its record (trainerctl/render/recipe.py), and a record
lives on the cluster, where whoever may edit a ConfigMap can write it. So, whatever a record holds,
the options made of it either are refused in one line (exit 2, before anything is read or fetched)
or read no folder and reach no host the user did not name: the source is the one the user names,
or one trainerctl pins; remote mirrors are the user's; the ownership label is the user's; the
overlay stays inside the tree. And whatever name a record has, its revision is in range or none."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.support.properties import PROPERTY
from trainerctl.errors import EXIT_BAD_INPUT, TrainerctlError
from trainerctl.owner_label import DEFAULT_OWNER_LABEL, OwnerLabel
from trainerctl.render.recipe import Named, options_from
from trainerctl.source.pins import channels, pinned_source
from trainerctl.source.validate import normalize_url
from trainerctl.trust.redact import strip_userinfo

PINNED = [{"url": c.url if c.url.endswith(".git") else f"{c.url}.git", "ref": c.ref, "commit": c.commit,
           "digest": c.digest} for c in channels().values()]
WORDS = ["", "..", "../..", "/etc", "overlays/manager", "a/../../b", "x\x00y", "\x1b[31m", "rhoai", "é/ü", "//", "."]
text = st.one_of(st.sampled_from(WORDS), st.text(max_size=30))
urls = st.one_of(st.sampled_from(["https://github.com/kubeflow/trainer.git", "http://github.com/kubeflow/trainer",
                                  "https://evil.example/kubeflow/trainer.git", "file:///tmp/x",
                                  "https://u:p@github.com/kubeflow/trainer", "git@github.com:kubeflow/trainer.git",
                                  "ext::sh -c touch% /tmp/pwned"]),
                 st.sampled_from([p["url"] for p in PINNED]), text)
hexes = st.one_of(st.sampled_from([p["commit"] for p in PINNED]), st.text("0123456789abcdef", min_size=40,
                                                                             max_size=40), text)
digests = st.one_of(st.sampled_from([p["digest"] for p in PINNED]), st.just("sha256:" + "0" * 64), text)
recorded = st.one_of(
    st.sampled_from(PINNED),
    st.builds(lambda pin, key, value: {**pin, key: value}, st.sampled_from(PINNED),
              st.sampled_from(["url", "ref", "commit", "digest", "path", "file", "folder", "overlay"]), text),
    st.fixed_dictionaries({}, optional={"path": text, "url": urls, "ref": text, "commit": hexes, "digest": digests,
                                        "overlay": text, "file": text, "folder": text}),
)
mirrors = st.lists(st.one_of(st.sampled_from(["https://github.com/=file:///tmp/m", "https://github.com/=http://evil/",
                                              "x=y", "=", "noequals"]), text), max_size=3)
labels = st.one_of(st.sampled_from(["", "platform.opendatahub.io/part-of=trainer", "app=x", "=", "a=b=c"]), text)
renders = st.fixed_dictionaries({}, optional={
    "overlay": text, "remoteMirrors": mirrors, "ownerLabel": labels,
    "platform": st.sampled_from(["kubernetes", "openshift", "windows", ""]),
    "components": st.lists(st.sampled_from(["manifests", "runtimes", "imagestreams", "../x"]), max_size=3),
    "requireRegistry": text, "requireDigests": st.booleans()})
named = st.one_of(
    st.just(Named()),
    st.builds(Named, source_path=st.sampled_from([None, "/checkout"]),
              remote_mirrors=st.lists(st.sampled_from(["https://github.com/=file:///srv/m", "x=z"]),
                                      max_size=2).map(tuple),
              owner_label=st.sampled_from([DEFAULT_OWNER_LABEL, OwnerLabel("app", "x")])),
    st.builds(Named, source_url=st.just("https://git.example/trainer.git"), ref=st.sampled_from([None, "v9"])),
)


@pytest.fixture(autouse=True)
def no_mirrors_from_the_environment(monkeypatch):
    monkeypatch.delenv("TRAINERCTL_REMOTE_MIRRORS", raising=False)


@PROPERTY
@given(source=recorded, render=renders, named=named)
def test_a_record_reads_no_folder_and_reaches_no_host_the_user_did_not_name(source, render, named):
    try:
        options = options_from(source, render, what="revision 3", namespace="ns", named=named)
    except TrainerctlError as exc:
        assert exc.exit_code == EXIT_BAD_INPUT and "\n" not in str(exc), str(exc)
        return
    if named.source_path or named.source_url:
        assert (options.source_path, options.source_url) == (named.source_path, named.source_url)
    else:
        assert options.source_path is None
        assert pinned_source(options.source_url, options.ref, source.get("commit"), source.get("digest"))
        assert "@" not in options.source_url and normalize_url(options.source_url) in {normalize_url(c.url) for c in channels().values()}
    assert options.remote_mirrors == named.remote_mirrors
    given_prefixes = {strip_userinfo(m.partition("=")[0]) for m in named.remote_mirrors}
    assert {strip_userinfo(m.partition("=")[0]) for m in render.get("remoteMirrors") or ()} <= given_prefixes
    assert options.owner_label == named.owner_label
    if options.overlay is not None:
        assert ".." not in options.overlay.split("/") and options.overlay.strip("/") and options.overlay.isprintable()


def test_a_pinned_record_renders_with_nothing_to_name():
    options = options_from(PINNED[0], {}, what="revision 1", namespace="ns")
    assert (options.source_url, options.ref, options.source_path) == (PINNED[0]["url"], PINNED[0]["ref"], None)


@pytest.mark.parametrize("source, said", [
    ({"path": "/home/ci/trainer/manifests", "digest": "sha256:" + "0" * 64},
     "revision 1 was installed from the local checkout /home/ci/trainer, which trainerctl does not pin; a record "
     "on the cluster never chooses a local folder or a host by itself: name it with --source /home/ci/trainer to "
     f"render it again (its tree digest must be sha256:{'0' * 64})"),
    ({"url": "https://u:secret@git.example/t.git", "ref": "main"},
     "revision 1 was installed from https://u:xxxxx@git.example/t.git at ref main, which trainerctl does not pin; "
     "a record on the cluster never chooses a local folder or a host by itself: name it with --source "
     "https://u:xxxxx@git.example/t.git --ref main to render it again"),
])
def test_an_unpinned_source_is_one_line_naming_what_to_give(source, said):
    with pytest.raises(TrainerctlError) as refused:
        options_from(source, {}, what="revision 1", namespace="ns")
    assert str(refused.value) == said


def test_a_named_source_needs_a_recorded_digest_to_check():
    with pytest.raises(TrainerctlError, match=r"^revision 1 records no tree digest \(source.digest\)"):
        options_from({"path": "/x"}, {}, what="revision 1", namespace="ns", named=Named(source_path="/x"))


@PROPERTY
@given(name=st.one_of(st.text(max_size=40), st.builds(lambda n: f"trainerctl-history.v{n}",
                                                       st.one_of(st.integers(-5, 10**12), st.text(max_size=12)))))
def test_a_record_name_holds_a_revision_in_range_or_none(name):
    """Whatever name the server lists, the history numbers from 1..MAX_REVISION only, so the next
    revision it writes is always a name it can read back."""
    from trainerctl.cluster.operations.install_history import MAX_REVISION, name as record_name, revision_of

    revision = revision_of(name)
    assert revision is None or (1 <= revision <= MAX_REVISION and record_name(revision) == name)
