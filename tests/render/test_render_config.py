"""trainerctl.yaml, `trainerctl fetch` and the lock file, through the CLI."""

from __future__ import annotations

import shutil

import pytest
import yaml


from trainerctl.cli import main
from trainerctl.settings.config_file import parse_config
from trainerctl.errors import InputError


@pytest.fixture
def run(capsys, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    for var in [v for v in __import__("os").environ if v.startswith("RELATED_IMAGE_")]:
        monkeypatch.delenv(var)

    def _run(*args):
        code = main(list(args))
        out = capsys.readouterr()
        return code, out.out, out.err

    return _run


@pytest.mark.parametrize("text, message", [
    ("sourse: {}\n", "sourse: unknown field"),
    ("source: {url: x, branch: y}\n", "source.branch: unknown field"),
    ("images: [a]\n", "images: expected a mapping"),
    ("namespace: 3\n", "namespace: expected a string"),
    ("- a\n", "expected a mapping"),
    ("a: [\n", "not valid YAML"),
])
def test_bad_config(text, message):
    with pytest.raises(InputError, match=message):
        parse_config(text, "trainerctl.yaml")


def test_config_file_equals_flags(run, tmp_path, mirrors):
    url = f"file://{mirrors['opendatahub-trainer']}"
    image = "registry.example.com/trainer:1"
    flags = ["render", "--source", url, "--ref", "odh-3.5.0", "--cache-dir", str(tmp_path / "c"),
             "-n", "trainer", "--image", f"RELATED_IMAGE_ODH_TRAINER_IMAGE={image}", "-c", "manifests"]
    code, by_flags, err = run(*flags)
    assert code == 0, err
    (tmp_path / "trainerctl.yaml").write_text(yaml.safe_dump({
        "source": {"url": url, "ref": "odh-3.5.0"}, "namespace": "trainer", "cacheDir": str(tmp_path / "c"),
        "images": {"RELATED_IMAGE_ODH_TRAINER_IMAGE": image}, "components": ["manifests"],
    }))
    code, by_file, err = run("render")  # ./trainerctl.yaml is read without --config
    assert code == 0, err
    assert by_file == by_flags and image in by_file
    code, overridden, _ = run("render", "-n", "other")  # flags win over the file
    assert "namespace: other" in overridden
    (tmp_path / "trainerctl.yaml").write_text("namespaces: x\n")
    code, _, err = run("render")
    assert code == 2 and err == "error: trainerctl.yaml: namespaces: unknown field (known: " + err.split("(known: ")[1]
    code, _, err = run("render", "--config", str(tmp_path / "missing.yaml"))
    assert code == 2 and "cannot read" in err


def test_fetch_writes_lock_and_render_follows_it(run, tmp_path, mirrors):
    import git

    mirror = tmp_path / "mirror"
    shutil.copytree(mirrors["kubeflow-trainer"], mirror, symlinks=True)
    url, cache = f"file://{mirror}", str(tmp_path / "cache")
    code, _, err = run("fetch", "--source", url, "--ref", "v2.3.0", "--cache-dir", cache)
    assert code == 0, err
    lock = yaml.safe_load((tmp_path / "trainerctl.lock").read_text())["source"]
    assert lock["url"] == url and lock["ref"] == "v2.3.0" and len(lock["commit"]) == 40
    shutil.move(mirror, tmp_path / "away")  # air-gapped from here on
    code, out, err = run("render", "--source", url, "--ref", "v2.3.0", "--cache-dir", cache, "--offline", "-c", "runtimes")
    assert code == 0, err
    code, _, err = run("render", "--source", url, "--ref", "v2.2.0", "--cache-dir", cache, "-c", "runtimes")
    assert code == 2 and "trainerctl.lock pins" in err
    shutil.move(tmp_path / "away", mirror)
    git.Repo(mirror).git.tag("-f", "v2.3.0", "v2.2.0")  # the upstream tag moves
    code, _, err = run("fetch", "--source", url, "--ref", "v2.3.0", "--cache-dir", cache)
    assert code == 1 and "pinned to " + lock["commit"] in err
    code, _, err = run("render", "--source", url, "--ref", "v2.3.0", "--cache-dir", cache, "--refresh", "-c", "runtimes")
    assert code == 1 and "tag was moved" in err
    code, _, err = run("render", "--source", url, "--ref", "v2.3.0", "--cache-dir", cache, "-c", "runtimes")
    assert code == 0, err  # the cached, locked commit is still what it was
    code, _, err = run("render", "--source", url, "--ref", "v2.2.0", "--cache-dir", cache, "-c", "runtimes", "--update-lock")
    assert code == 0, err
    assert yaml.safe_load((tmp_path / "trainerctl.lock").read_text())["source"]["ref"] == "v2.2.0"


def test_fetch_needs_a_git_source(run, upstream):
    code, _, err = run("fetch", "--source", str(upstream / "kubeflow-trainer" / "v2.3.0"))
    assert code == 2 and "fetch needs a git URL" in err


def test_ref_required_with_custom_url(run, mirrors):
    code, _, err = run("render", "--source", f"file://{mirrors['kubeflow-trainer']}")
    assert code == 2 and "--ref is required" in err
