"""One request: Settings defines every setting once, is built once per command (flags over
trainerctl.yaml over the environment over the defaults), keeps where each value came from, and
is never changed afterwards; the actions' options are taken from it by name."""

from __future__ import annotations

import dataclasses
import re
import string
from pathlib import Path

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from tests.cli.test_properties import PROPERTY
from trainerctl.cli import main
from trainerctl.errors import InputError
from trainerctl.settings import CONFIG_FILE, FIELD_MANAGER, LOCK_TIMEOUT, NAMESPACE, TIMEOUT, Settings, setting_of
from trainerctl.settings.build import CONFLICTS, build
from trainerctl.settings.spec import specs

SETTINGS = dict(specs(Settings))


# -- one definition -----------------------------------------------------------------------------
def test_each_flag_key_and_variable_belongs_to_one_setting():
    flags = [n.split("/")[0] for how in SETTINGS.values() for n in how.flags]
    keys = [how.key for how in SETTINGS.values() if how.key]
    env = [how.env for how in SETTINGS.values() if how.env]
    for names in (flags, keys, env):
        assert len(names) == len(set(names)), sorted(n for n in names if names.count(n) > 1)
    for name, how in SETTINGS.items():
        if how.flags:
            assert how.help.endswith("."), name
            assert how.metavar or how.takes is bool, f"{name}: a value flag names its value"
        assert not (how.negate and how.takes is not bool), name


def test_the_defaults_every_command_shares_are_written_once():
    """The field manager and the timeouts: a constant each, and every default is that constant."""
    from trainerctl.cluster.install import InstallOptions
    from trainerctl.cluster.uninstall import UninstallOptions

    defaults = Settings()
    assert (defaults.field_manager, defaults.timeout, defaults.lock_timeout, defaults.namespace) \
        == (FIELD_MANAGER, TIMEOUT, LOCK_TIMEOUT, NAMESPACE)
    for options in (InstallOptions(), UninstallOptions()):
        assert (options.timeout, options.lock_timeout) == (TIMEOUT, LOCK_TIMEOUT)
        assert not hasattr(options, "field_manager")  # the session's (cli/options.py session: the settings')
    from trainerctl.cli.options import session

    assert session(defaults, None).field_manager == FIELD_MANAGER
    root = Path(__file__).resolve().parents[2] / "trainerctl"
    named = [str(p.relative_to(root)) for p in root.rglob("*.py")
             if re.search(r'(?im)^.*field_?manager.*"trainerctl"', p.read_text())]  # names it and writes it
    assert named == ["defaults.py"], named


def test_the_engine_takes_the_field_manager_and_the_wait_budget_from_its_caller():
    """Like Flux's ResourceManager, the engine has no name and no time budget of its own."""
    import inspect

    from trainerctl.cluster.manager.apply import ApplyOptions
    from trainerctl.cluster.manager.resource_manager import ResourceManager
    from trainerctl.cluster.operations import install_lock
    from trainerctl.cluster.trainer import helm_handover

    for fn in (ApplyOptions, ResourceManager.apply_options, ResourceManager.diff, ResourceManager.prune, install_lock.Lock,
               install_lock.take, install_lock.create_namespace, helm_handover.unmark):
        for name, param in inspect.signature(fn).parameters.items():
            if name in ("field_manager", "timeout"):
                assert param.default is inspect.Parameter.empty, f"{fn.__qualname__}({name}=...)"


def test_an_actions_options_are_taken_from_the_settings_by_name():
    """Every option of the render, install and uninstall is a setting of the same name, or one of
    the few things that are not settings (a step, the environment of RELATED_IMAGE_*)."""
    from trainerctl.cluster.install import InstallOptions
    from trainerctl.cluster.uninstall import UninstallOptions
    from trainerctl.render.render_options import RenderOptions

    not_settings = {RenderOptions: {"env"}, InstallOptions: {"legacy_managers", "upgrade_guard", "recipe", "rollback_to",
                                                                       "image_check"},
                    UninstallOptions: set()}
    for kind, extra in not_settings.items():
        names = {f.name for f in dataclasses.fields(kind) if f.init}
        assert {n for n in names if not hasattr(Settings(), n)} == extra, kind
    s = build({"timeout": 12.0, "use_lock": True, "prune": True, "dry_run": True}, files=False)
    install = s.options_for(InstallOptions)
    assert (install.timeout, install.prune, install.dry_run) == (12.0, False, True)
    from trainerctl.cli.options import session

    on = session(s, None)  # the field manager, namespace and owner label come with the session
    assert (on.field_manager, on.namespace, on.owner_label) == (FIELD_MANAGER, s.namespace, "=".join(s.owner_label))
    assert s.options_for(UninstallOptions).timeout == 12.0


def test_settings_are_never_changed_once_built():
    s = build({"images": ["k=v"], "components": ["manifests"]}, files=False)
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.namespace = "other"  # type: ignore[misc]
    with pytest.raises(TypeError):
        s.images["k"] = "w"  # type: ignore[index]
    with pytest.raises(TypeError):
        s.origins["namespace"] = "x"  # type: ignore[index]
    assert isinstance(s.components, frozenset) and isinstance(s.remote_mirrors, tuple)


# -- precedence and origins ---------------------------------------------------------------------
@pytest.fixture
def workdir(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("TRAINERCTL_CACHE_DIR", raising=False)
    return tmp_path


def test_flag_over_file_over_environment_over_default(workdir, monkeypatch):
    assert build({}).cache_dir is None and not build({}).is_set("cache_dir")
    monkeypatch.setenv("TRAINERCTL_CACHE_DIR", str(workdir / "env"))
    s = build({})
    assert (s.cache_dir, s.where("cache_dir")) == (str(workdir / "env"), "TRAINERCTL_CACHE_DIR")
    (workdir / CONFIG_FILE).write_text(f"cacheDir: {workdir / 'file'}\ntimeout: 30\nnamespace: ml\n")
    s = build({})
    assert (s.cache_dir, s.where("cache_dir")) == (str(workdir / "file"), "trainerctl.yaml: cacheDir:")
    assert (s.timeout, s.where("timeout"), s.namespace) == (30.0, "trainerctl.yaml: timeout:", "ml")
    s = build({"cache_dir": str(workdir / "flag"), "timeout": 5.0})
    assert (s.cache_dir, s.where("cache_dir"), s.timeout, s.where("timeout")) == \
        (str(workdir / "flag"), "--cache-dir", 5.0, "--timeout")
    assert s.config == CONFIG_FILE and s.is_set("namespace") and not s.is_set("platform")
    assert s.where("platform") == "--platform"  # a default is named by its flag


def test_a_file_value_a_flag_overrides_is_still_checked(workdir):
    (workdir / CONFIG_FILE).write_text("platform: windows\n")
    with pytest.raises(InputError, match=r"^trainerctl.yaml: platform: 'windows': expected one of"):
        build({"platform": "kubernetes"})


def test_each_image_is_named_where_it_was_set(workdir):
    (workdir / CONFIG_FILE).write_text("images: {a: 'quay.io/x:1', b: 'quay.io/y:1'}\n")
    s = build({"images": ["b=quay.io/z:2"]})
    assert dict(s.images) == {"a": "quay.io/x:1", "b": "quay.io/z:2"}
    assert (s.origins["images.a"], s.origins["images.b"]) == ("trainerctl.yaml: images: a", "--image b")


def test_what_follows_from_several_settings_is_derived_while_building(workdir):
    assert build({"update_lock": True}).use_lock is False  # the lock is being replaced, not checked
    with pytest.raises(InputError, match="--update-lock and --no-lock: choose one"):
        build({"update_lock": True, "use_lock": True})
    (workdir / CONFIG_FILE).write_text("source: {url: 'https://github.com/kubeflow/trainer.git', ref: v2.3.0}\n")
    assert build({}).ref == "v2.3.0"
    s = build({"source": str(workdir)})  # a local checkout: the file's ref was for the file's URL
    assert (s.source_path, s.source_url, s.ref) == (str(workdir), None, None)
    with pytest.raises(InputError, match=r"^--ref v1: a local checkout \(--source "):
        build({"source": str(workdir), "ref": "v1"})


@pytest.mark.parametrize("first, second, why", CONFLICTS)
def test_settings_that_contradict_each_other_are_refused_whoever_set_them(workdir, capsys, first, second, why):
    """Both on, from flags or from the file and a flag: one line naming both, exit 2; either alone is fine."""
    flag = {name: (not SETTINGS[name].negate) if SETTINGS[name].takes is bool else "x" for name in (first, second)}
    for alone in (first, second):
        build({alone: flag[alone]})
    with pytest.raises(InputError, match=rf"^{SETTINGS[first].flag} and {SETTINGS[second].flag}: choose one \({why}\)$"):
        build(flag)
    if SETTINGS[first].key is None:  # no file key: flags and variables only
        return
    (workdir / CONFIG_FILE).write_text(f"{SETTINGS[first].key}: true\n")
    with pytest.raises(InputError, match=rf"^trainerctl.yaml: {SETTINGS[first].key}: and {SETTINGS[second].flag}: "):
        build({second: flag[second]})


def test_contradictory_render_flags_are_one_line_and_exit_2(workdir, capsys):
    assert main(["render", "--offline", "--refresh"]) == 2
    err = capsys.readouterr().err
    assert err == "error: --offline and --refresh: choose one (--offline never asks the git remote, --refresh " \
                  "always does)\n"


def test_kustomize_reads_neither_the_settings_file_nor_the_environment(workdir, monkeypatch, capsys, shared_dir):
    (workdir / CONFIG_FILE).write_text("platform: windows\n")
    monkeypatch.setenv("TRAINERCTL_CACHE_DIR", str(workdir / CONFIG_FILE))  # a file, not a directory
    rhoai = shared_dir / "upstream/opendatahub-trainer/odh-3.5.0/manifests/rhoai"
    assert main(["kustomize", str(rhoai)]) == 0, capsys.readouterr().err
    assert main(["render", "--source", str(rhoai.parents[1])]) == 2  # render reads both
    assert "error: TRAINERCTL_CACHE_DIR " in capsys.readouterr().err
    monkeypatch.delenv("TRAINERCTL_CACHE_DIR")
    assert main(["render", "--source", str(rhoai.parents[1])]) == 2
    assert "error: trainerctl.yaml: platform: 'windows'" in capsys.readouterr().err


def test_help_says_each_default_once():
    import typer.main

    from trainerctl.cli import full_app

    for name, command in typer.main.get_command(full_app()).commands.items():
        for param in command.params:
            if "(default:" in (param.help or ""):
                assert param.default in (None, (), [], False), f"{name} {param.opts}: default said twice"


# -- every setting: a bad value names where it came from ----------------------------------------
_TEXT = st.text(alphabet=string.printable + "\x00é/\\:=", max_size=20)
_VALUES = {str: _TEXT, float: st.floats(allow_nan=True, allow_infinity=True) | st.integers(-5, 5),
           list[str]: st.lists(_TEXT, max_size=3)}
CHECKED = sorted(n for n, how in SETTINGS.items() if how.key and how.check and how.flags and how.file_type in _VALUES)


def _outcome(fn):
    try:
        return "ok", fn()
    except InputError as exc:
        return "error", str(exc)


@PROPERTY
@given(st.data())
def test_a_value_means_the_same_from_a_flag_and_the_file(tmp_path_factory, data):
    """For every setting with a flag and a file key: a value the flag accepts, the file accepts
    as the same setting; a value one refuses, the other refuses too, each naming itself."""
    name = data.draw(st.sampled_from(CHECKED))
    how = setting_of(name)
    value = data.draw(_VALUES[how.file_type])
    config = tmp_path_factory.mktemp("cfg") / "t.yaml"
    section, _, inner = how.key.partition(".")
    config.write_text(yaml.safe_dump({section: {inner: value} if inner else value}))
    by_flag = _outcome(lambda: getattr(build({name: value}, files=False), name))
    by_file = _outcome(lambda: getattr(build({"config": str(config)}, env={}), name))
    assert by_flag[0] == by_file[0], (by_flag, by_file)
    if by_flag[0] == "ok":
        assert by_flag[1] == by_file[1]
    else:
        assert by_flag[1].startswith(f"{how.flag} ") and "\n" not in by_flag[1], by_flag[1]
        assert by_file[1].startswith(f"{config}: {how.key}: "), by_file[1]


@PROPERTY
@given(_TEXT)
def test_a_variable_is_named_as_itself(tmp_path_factory, value):
    directory = tmp_path_factory.mktemp("env")
    empty = directory / "empty.yaml"
    empty.write_text("{}\n")
    kind, result = _outcome(lambda: build({"config": str(empty)}, env={"TRAINERCTL_CACHE_DIR": value}).cache_dir)
    if kind == "error":
        assert result.startswith("TRAINERCTL_CACHE_DIR ") and "\n" not in result, result
    else:
        assert result == (value or None)
    assert list(directory.iterdir()) == [empty]  # a check looks, it never makes the directory


def test_the_image_check_is_one_setting_spelled_per_command():
    """`install --check-images` and `check --images` ask for one check (the checklist's `images`):
    one setting, each command's flag as its users know it, and messages name the flag as given."""
    import typer.main

    from trainerctl.cli import full_app

    commands = typer.main.get_command(full_app()).commands
    flags = {name: {opt: p.name for p in commands[name].params for opt in p.opts} for name in ("install", "check")}
    assert flags["install"]["--check-images"] == flags["check"]["--images"] == "check_images"
    assert "--images" not in flags["install"] and "--check-images" not in flags["check"]
    assert not hasattr(Settings(), "images_check")
    for command, flag in (("install", "--check-images"), ("check", "--images")):
        assert build({"check_images": True}, files=False, command=command).where("check_images") == flag
