"""Release channels: pins.yaml names each pinned tree, the default is the tree the Go operator ships
today, `--channel` renders any of them through the real fetch (a tag, or a commit on a branch),
the maintainer's script writes exactly what pins.yaml holds, and a controller image of another
channel over a channel's manifests is a warning naming both."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.support.render import OPERATOR_TREE
from trainerctl.cli import main
from trainerctl.errors import InputError
from trainerctl.render import RenderOptions, render
from trainerctl.render.image_refs import parse_image
from trainerctl.render.release import component_releases, controller_channels, mismatched_controllers, \
    shipped_controller_image
from trainerctl.settings import setting_of
from trainerctl.settings.build import build
from trainerctl.source import embedded, pins
from trainerctl.source.tree import walk_tree
from trainerctl.source.validate import is_commit, normalize_url, validate_ref, validate_url

ROOT = Path(__file__).resolve().parents[2]
ODH_URL = "https://github.com/opendatahub-io/trainer.git"


@pytest.fixture(scope="session")
def shared_trees(upstream) -> dict[str, Path]:
    """Each channel whose tree ../shared holds -> that tree (found by its digest, not its name)."""
    by_digest = {walk_tree(ref / "manifests"): ref for repo in sorted(upstream.iterdir()) for ref in sorted(repo.iterdir())}
    return {name: by_digest[c.digest] for name, c in pins.channels().items() if c.digest in by_digest}


# -- pins.yaml ----------------------------------------------------------------------------------------
def test_every_channel_is_pinned_whole():
    seen_refs = set()
    for name, c in pins.channels().items():
        assert validate_url(c.url) and is_commit(c.commit) and re.fullmatch(r"sha256:[0-9a-f]{64}", c.digest), name
        assert re.fullmatch(r"\d+\.\d+\.\d+", c.trainer) and parse_image(c.image).tag, name
        assert c.date == "" or re.fullmatch(r"20\d\d-\d\d-\d\d", c.date), name
        assert c.via in ("git", "go-proxy", "tree"), name
        assert (c.tag is None) != (c.branch is None), f"{name}: a tag, or the branch its commit is on"
        assert c.ref == (validate_ref(c.tag) if c.tag else c.commit)
        key = (normalize_url(c.url), c.ref)
        assert key not in seen_refs, name
        seen_refs.add(key)
        # what a fetch of it is held to: the commit, and the tree digest of that commit
        assert pins.pinned_commit(c.url, c.ref) == c.commit and pins.pinned_digest(c.commit) == c.digest
    assert pins.default_channel().name in pins.channels()
    assert {"stable", "3.5", "3.4", "v2.0.0", "v2.1.0", "v2.2.0", "v2.2.1", "v2.3.0"} <= set(pins.channels())


def test_the_default_is_the_tree_the_operator_ships(upstream):
    """The operator's manifests/trainer is byte-identical to ../shared's main-d140e85 (its sync of
    opendatahub-io/trainer main): the default channel pins that commit and that tree."""
    default = pins.default_channel()
    tree = upstream.joinpath(*OPERATOR_TREE) / "manifests"
    assert (default.name, default.url, default.branch, default.tag) == ("stable", ODH_URL, "main", None)
    assert default.commit == "d140e85264020f29d1e5a8d959ab2fde4aec6681" and default.date == "2026-08-20"
    assert default.digest == walk_tree(tree)
    assert default.trainer == component_releases(tree)[0]["version"] == "2.3.0"
    assert default.image == shipped_controller_image(tree) == "quay.io/opendatahub/trainer:odh-stable"
    assert (pins.default_url(), pins.default_ref()) == (ODH_URL, default.commit)


def test_each_channel_records_what_its_tree_says(shared_trees):
    """The Trainer version and controller image of every channel ../shared holds, taken from its tree
    as the maintainer's script takes them (the one channel it lacks, v2.2.1, is checked below)."""
    assert set(shared_trees) == set(pins.channels()) - {"v2.2.1"}
    for name, tree in shared_trees.items():
        c = pins.channels()[name]
        releases = component_releases(tree / "manifests")
        assert c.trainer == (releases[0]["version"] if releases else c.tag.lstrip("v")), name
        assert c.image == shipped_controller_image(tree / "manifests"), name
    # v2.2.1: pinned from the Go module proxy's zip (no executable bits, no symlinks), after the same
    # route reproduced v2.3.0's git digest; its tree is not in ../shared, a fetch from GitHub checks it.
    patch = pins.channels()["v2.2.1"]
    assert (patch.tag, patch.commit, patch.via, patch.date) == \
        ("v2.2.1", "14a1107b6a34918feb2d6fe53b3ad7d0fe00154c", "go-proxy", "2026-06-17")
    assert patch.image == "ghcr.io/kubeflow/trainer/trainer-controller-manager:v2.2.1"


def _script(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(ROOT / "scripts" / "channel.py"), *args], capture_output=True,
                          text=True, cwd=ROOT)


def test_the_maintainers_script_writes_what_pins_yaml_holds(tmp_path, shared_trees):
    """Re-pinning stable (the default: the embed step is run too) and 3.5 from their trees
    rewrites pins.yaml byte for byte."""
    copy = tmp_path / "pins.yaml"
    shutil.copy(ROOT / "trainerctl" / "data" / "pins.yaml", copy)
    stable, odh35 = pins.channels()["stable"], pins.channels()["3.5"]
    done = _script("stable", "--url", stable.url, "--branch", "main", "--commit", stable.commit, "--tree",
                   str(shared_trees["stable"]), "--date", stable.date, "--default", "--pins", str(copy))
    assert done.returncode == 0, done.stderr
    assert "(unchanged)" in done.stdout and f"trainerctl: embedded {stable.url} {stable.commit}" in done.stdout
    done = _script("3.5", "--url", odh35.url, "--tag", odh35.tag, "--commit", odh35.commit, "--tree",
                   str(shared_trees["3.5"]), "--pins", str(copy))
    assert done.returncode == 0, done.stderr
    assert copy.read_text() == (ROOT / "trainerctl" / "data" / "pins.yaml").read_text()


def test_the_script_fetches_a_tag_or_a_commit_on_a_branch(tmp_path, mirrors, branch_mirror):
    """Through trainerctl's own git fetch: the tag's commit and date, or the branch's older commit."""
    copy = tmp_path / "pins.yaml"
    shutil.copy(ROOT / "trainerctl" / "data" / "pins.yaml", copy)
    url = f"file://{mirrors['opendatahub-trainer']}"
    done = _script("mirror-3.5", "--url", url, "--tag", "odh-3.5.0", "--pins", str(copy))
    assert done.returncode == 0, done.stderr
    repo, commit = branch_mirror
    done = _script("mirror-stable", "--url", f"file://{repo}", "--branch", "main", "--commit", commit,
                   "--pins", str(copy))
    assert done.returncode == 0, done.stderr
    assert f"main of file://{repo} is at " in done.stderr and f"pinning {commit}" in done.stderr
    written = yaml.safe_load(copy.read_text())["channels"]
    assert written["mirror-3.5"] == {"url": url, "tag": "odh-3.5.0", "commit": written["mirror-3.5"]["commit"],
                                     "digest": pins.channels()["3.5"].digest, "trainer": "2.1.0",
                                     "date": "2026-01-01", "image": pins.channels()["3.5"].image, "via": "git"}
    assert written["mirror-stable"] == {"url": f"file://{repo}", "branch": "main", "commit": commit,
                                        "digest": pins.channels()["stable"].digest, "trainer": "2.3.0",
                                        "date": "2026-01-01", "image": pins.channels()["stable"].image, "via": "git"}
    # The rest is as it was, and a wrong --commit for a tag is refused before anything is written.
    before = copy.read_text()
    done = _script("mirror-3.5", "--url", url, "--tag", "odh-3.5.0", "--commit", "1" * 40, "--pins", str(copy))
    assert done.returncode == 1 and done.stderr.startswith("error: ") and done.stderr.count("\n") == 1
    assert copy.read_text() == before


# -- --channel renders through the real fetch -------------------------------------------------------------
@pytest.fixture(scope="session")
def branch_mirror(tmp_path_factory, upstream) -> tuple[Path, str]:
    """A git repository whose branch main holds the stable tree in a commit that no tag names and
    that is not the branch's tip (another commit follows it): (repository, that commit)."""
    import git

    dest = tmp_path_factory.mktemp("branch-mirror")
    repo = git.Repo.init(dest, initial_branch="main")
    env = {"GIT_AUTHOR_NAME": "m", "GIT_AUTHOR_EMAIL": "m@example.invalid", "GIT_COMMITTER_NAME": "m",
           "GIT_COMMITTER_EMAIL": "m@example.invalid", "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z",
           "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z"}
    commits = []
    with repo.git.custom_environment(**env):
        for ref in (OPERATOR_TREE[1], "odh-3.5.0"):
            shutil.rmtree(dest / "manifests", ignore_errors=True)
            shutil.copytree(upstream / "opendatahub-trainer" / ref / "manifests", dest / "manifests",
                            copy_function=shutil.copy)
            repo.git.add("-A", "manifests")
            repo.git.commit("-q", "-m", ref)
            commits.append(repo.head.commit.hexsha)
    assert not repo.tags
    repo.close()
    return dest, commits[0]


@pytest.fixture
def channels_at_mirrors(monkeypatch, mirrors, branch_mirror, shared_trees, tmp_path):
    """The channels as pinned, each served from a local mirror instead of GitHub: its URL and commit
    the mirror's, its tree digest, Trainer version and image unchanged. stable is fetched by its
    commit from branch_mirror; the others by their tags from the tagged mirrors. No embedded copy,
    an empty source cache: every render fetches."""
    import git

    data = yaml.safe_load((ROOT / "trainerctl" / "data" / "pins.yaml").read_text())
    served = {}
    for name, spec in data["channels"].items():
        if name not in shared_trees:
            continue
        tree = shared_trees[name]
        if spec.get("tag"):
            url = f"file://{mirrors[tree.parent.name]}"
            commit = git.Repo(mirrors[tree.parent.name]).commit(tree.name).hexsha
            served[name] = {**spec, "url": url, "commit": commit}
        else:
            served[name] = {**spec, "url": f"file://{branch_mirror[0]}", "commit": branch_mirror[1]}
    monkeypatch.setattr(pins, "_data", lambda: {"default": data["default"], "channels": served})
    pins._table.cache_clear()
    monkeypatch.setattr(embedded, "EMBED_DIR", tmp_path / "no-copy")
    monkeypatch.setenv("TRAINERCTL_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)
    for var in [v for v in __import__("os").environ if v.startswith("RELATED_IMAGE_")]:
        monkeypatch.delenv(var)
    yield served
    pins._table.cache_clear()


def _cli(capsys, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.mark.parametrize("name", ["stable", "3.5"])
def test_a_channel_renders_its_tree_byte_for_byte(channels_at_mirrors, shared_trees, capsys, name):
    """`render --channel NAME` prints what `render --source` of its tree prints; with no source
    flags, the default channel (stable), fetched by its commit on a branch."""
    code, by_channel, err = _cli(capsys, "render", "--channel", name)
    assert code == 0, err
    code, by_path, err = _cli(capsys, "render", "--source", str(shared_trees[name]))
    assert code == 0, err
    assert by_channel == by_path and by_channel.startswith("apiVersion: ")
    if name == "stable":
        code, by_default, err = _cli(capsys, "render")
        assert code == 0 and by_default == by_path, err
    result = render(RenderOptions(channel=name))
    served = channels_at_mirrors[name]
    assert (result.source.channel, result.source.commit, result.source.url) == (name, served["commit"], served["url"])
    assert result.source.trainer_version == served["trainer"] and not result.source.embedded


def test_a_moved_or_altered_channel_is_refused(channels_at_mirrors, monkeypatch, capsys):
    """The pins hold: a channel whose tree is not the pinned digest, or whose tag is another commit."""
    served = dict(channels_at_mirrors)
    served["3.5"] = {**served["3.5"], "digest": "sha256:" + "0" * 64}
    served["3.4"] = {**served["3.4"], "commit": "1" * 40}
    monkeypatch.setattr(pins, "_data", lambda: {"default": "stable", "channels": served})
    pins._table.cache_clear()
    code, out, err = _cli(capsys, "render", "--channel", "3.5")
    assert code == 1 and out == "" and "but trainerctl pins sha256:000" in err and err.count("\n") == 1
    code, out, err = _cli(capsys, "render", "--channel", "3.4")
    assert code == 1 and out == "" and f"pinned to {'1' * 40}" in err and err.count("\n") == 1


# -- --channel as a setting ---------------------------------------------------------------------------------
@pytest.fixture
def workdir(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_channel_is_a_source_choice(workdir):
    assert build({"channel": "3.5"}, files=False).channel == "3.5"
    with pytest.raises(InputError, match=r"^--channel 'nope': unknown channel \(known: stable, 3.5, 3.4, "):
        build({"channel": "nope"}, files=False)
    with pytest.raises(InputError, match=r"^--channel '': expected a value"):
        build({"channel": ""}, files=False)
    for other in ({"source": "https://example.com/t.git"}, {"source": str(workdir)}, {"ref": "v2.3.0"}):
        with pytest.raises(InputError, match=r"^--channel 3.5 and --(source|ref): choose one"):
            build({"channel": "3.5", **other}, files=False)
    (workdir / "trainerctl.yaml").write_text("source: {url: 'https://github.com/kubeflow/trainer.git', ref: v2.3.0}\n")
    s = build({"channel": "3.5"})  # the flag's channel over the file's source
    assert (s.channel, s.source, s.ref) == ("3.5", None, None)
    (workdir / "trainerctl.yaml").write_text("channel: '3.4'\n")
    assert (build({}).channel, build({}).where("channel")) == ("3.4", "trainerctl.yaml: channel:")
    s = build({"source": "https://github.com/kubeflow/trainer.git", "ref": "v2.3.0"})  # the flags' source wins
    assert (s.channel, s.source_url, s.ref) == (None, "https://github.com/kubeflow/trainer.git", "v2.3.0")
    (workdir / "trainerctl.yaml").write_text("channel: '3.4'\nsource: {ref: v2.3.0}\n")
    with pytest.raises(InputError, match=r"trainerctl.yaml: channel: a channel is a pinned source"):
        build({})
    (workdir / "trainerctl.yaml").write_text("channel: '9.9'\n")
    with pytest.raises(InputError, match=r"^trainerctl.yaml: channel: '9.9': unknown channel"):
        build({})
    with pytest.raises(InputError, match="choose one"):
        RenderOptions(channel="3.5", source_url="https://github.com/kubeflow/trainer.git", ref="v2.3.0")


def test_help_names_the_default_channel():
    assert f"default: {pins.default_channel().name}," in setting_of("channel").help


def test_every_source_command_takes_channel():
    import typer.main

    from trainerctl.cli import full_app

    commands = typer.main.get_command(full_app()).commands
    for name, command in commands.items():
        opts = {o for p in command.params for o in p.opts}
        if "--source" in opts:
            assert "--channel" in opts, name
    assert {"render", "fetch", "install", "diff", "check", "upgrade-check", "images"} <= \
        {n for n, c in commands.items() if "--channel" in {o for p in c.params for o in p.opts}}


def test_channels_lists_them(capsys):
    code, out, err = _cli(capsys, "channels")
    assert code == 0 and err == ""
    lines = out.splitlines()
    assert lines[0].split() == ["CHANNEL", "TRAINER", "DATE", "SOURCE", "COMMIT", "CONTROLLER"]
    default = pins.default_channel()
    assert lines[1].split() == [f"{default.name}*", default.trainer, default.date, default.url, "main",
                                default.commit[:12], default.image]
    assert [line.split()[0].rstrip("*") for line in lines[1:-1]] == list(pins.channels())
    assert lines[-1].startswith("* the default")
    code, out, _ = _cli(capsys, "channels", "-o", "json")
    listed = json.loads(out)
    assert code == 0 and listed["default"] == default.name
    assert [{k: v for k, v in c.items() if k != "default"} for c in listed["channels"]] == \
        [c.to_dict() for c in pins.channels().values()]
    assert [c["name"] for c in listed["channels"] if c["default"]] == [default.name]
    code, out, _ = _cli(capsys, "channels", "-o", "yaml")
    assert code == 0 and yaml.safe_load(out) == listed
    assert _cli(capsys, "channels", "-o", "wide")[0] == 2


# -- the controller image and the manifests from one release -------------------------------------------------
def test_a_controller_is_known_by_repository_and_tag_on_any_registry():
    assert [c.name for c in controller_channels("quay.io/opendatahub/trainer:odh-3.5-ea1")] == ["3.5"]
    assert [c.name for c in controller_channels("mirror.example.com/odh/trainer:odh-stable@sha256:" + "a" * 64)] \
        == ["stable"]
    assert [c.name for c in controller_channels("quay.io/opendatahub/trainer:v2.1.0")] == ["3.4"]
    assert [c.name for c in controller_channels("ghcr.io/kubeflow/trainer/trainer-controller-manager:v2.1.0")] \
        == ["v2.1.0"]
    for unknown in ("quay.io/opendatahub/trainer@sha256:" + "a" * 64, "quay.io/opendatahub/trainer:custom",
                    "quay.io/other/thing:odh-stable"):
        assert controller_channels(unknown) == []


def test_every_pair_of_channels_warns_exactly_when_the_releases_differ():
    """The whole class: each channel's manifests under each channel's controller, set by an override."""
    table = pins.channels().values()
    for tree in table:
        for other in table:
            lines = mismatched_controllers({other.image: "--image X"}, {other.image: "--image X"}, tree)
            if other.name == tree.name:
                assert lines == []
            else:
                assert lines == [f"--image X: {other.image} is the controller of channel {other.name} (Trainer "
                                 f"{other.trainer}), but the manifests are channel {tree.name} (Trainer {tree.trainer}): "
                                 f"its config may not match (a controller rejects the config fields of another release "
                                 f"and crash-loops); render --channel {other.name} for both from one release, or drop "
                                 f"the override for {tree.name}'s {tree.image}"]
            # what the tree ships is no override, and an unknown tree is known to differ from nothing
            assert mismatched_controllers({other.image: "params.env"}, {}, tree) == []
            assert mismatched_controllers({other.image: "--image X"}, {other.image: "--image X"}, None) == []


def test_render_warns_when_the_controller_is_another_channels(shared_trees, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    for var in [v for v in __import__("os").environ if v.startswith("RELATED_IMAGE_")]:
        monkeypatch.delenv(var)
    stable = str(shared_trees["stable"])
    ea1 = "quay.io/opendatahub/trainer:odh-3.5-ea1"
    code, out, err = _cli(capsys, "render", "--source", stable, "--image", f"RELATED_IMAGE_ODH_TRAINER_IMAGE={ea1}")
    assert code == 0 and f"image: {ea1}" in out
    warned = [line for line in err.splitlines() if line.startswith("warning:")]
    assert warned == [f"warning: render: --image RELATED_IMAGE_ODH_TRAINER_IMAGE: {ea1} is the controller of channel "
                      "3.5 (Trainer 2.1.0), but the manifests are channel stable (Trainer 2.3.0): its config may not "
                      "match (a controller rejects the config fields of another release and crash-loops); render "
                      "--channel 3.5 for both from one release, or drop the override for stable's "
                      "quay.io/opendatahub/trainer:odh-stable"]
    (tmp_path / "images.yaml").write_text(f"images:\n  odh-kubeflow-trainer-controller-image: {ea1}\n")
    code, _, err = _cli(capsys, "render", "--source", stable, "--images-from", "images.yaml")
    assert code == 0 and "warning: render: --images-from images.yaml: images: odh-kubeflow-trainer-controller-image: " \
                         f"{ea1} is the controller of channel 3.5" in err
    monkeypatch.setenv("RELATED_IMAGE_ODH_TRAINER_IMAGE", "registry.example.com/mirror/trainer:odh-stable")
    code, _, err = _cli(capsys, "render", "--source", str(shared_trees["3.5"]))
    assert code == 0 and "warning: render: environment variable RELATED_IMAGE_ODH_TRAINER_IMAGE: registry.example.com/" \
                         "mirror/trainer:odh-stable is the controller of channel stable (Trainer 2.3.0), but the " \
                         "manifests are channel 3.5 (Trainer 2.1.0)" in err
    # Its own release's controller (from a mirror, by digest) or a build of its own: no warning.
    for image in ("registry.example.com/mirror/trainer:odh-stable",
                  "quay.io/opendatahub/trainer@sha256:" + "b" * 64, "quay.io/opendatahub/trainer:my-build"):
        monkeypatch.setenv("RELATED_IMAGE_ODH_TRAINER_IMAGE", image)
        code, _, err = _cli(capsys, "render", "--source", stable)
        assert code == 0 and "warning:" not in err, err
