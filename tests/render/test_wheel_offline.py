"""The README's first command with the installed wheel, on a machine without network and with an
empty HOME: `trainerctl render` exits 0 and prints exactly what a render of the default channel's
tree from a checkout prints; and the default channel, the tree the wheel carries and the tree the
Go operator ships today are one tree."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.render import OPERATOR_TREE

ROOT = Path(__file__).resolve().parents[2]


def _installed() -> bool:
    return os.environ.get("TRAINERCTL_TEST_INSTALLED", "").lower() in ("1", "true", "yes")


@pytest.fixture(scope="session")
def wheel_bin(tmp_path_factory) -> Path:
    """The bin dir of a venv holding the wheel: under .ci/run the venv being tested; else this
    checkout's wheel, built as .ci/run builds it, in a fresh venv that borrows this venv's
    dependencies (no package index needed)."""
    if _installed():
        return Path(sys.executable).parent
    work = tmp_path_factory.mktemp("wheel")
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--disable-pip-version-check", "--no-deps",
                            "-w", str(work / "dist"), str(ROOT)], capture_output=True, text=True)
    if built.returncode != 0:
        pytest.skip(f"cannot build the wheel here: {built.stderr.strip().splitlines()[-1:]}")
    (wheel,) = (work / "dist").glob("trainerctl-*.whl")
    venv = work / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    subprocess.run([sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"), "install", "--quiet",
                    "--disable-pip-version-check", "--no-deps", "--no-index", str(wheel)], check=True)
    site = subprocess.run([str(venv / "bin" / "python"), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True).stdout.strip()
    deps = subprocess.run([sys.executable, "-c", "import yaml, os; print(os.path.dirname(os.path.dirname(yaml.__file__)))"],
                          capture_output=True, text=True, check=True).stdout.strip()
    Path(site, "trainerctl-test-deps.pth").write_text(deps + "\n")  # after the venv's own site: its trainerctl wins
    return venv / "bin"


def _no_network() -> list[str]:
    """A command prefix that runs without any network (a new network namespace), or [] when
    this machine cannot make one (the proxy variables below then point nowhere)."""
    unshare = shutil.which("unshare")
    for prefix in ([unshare, "-n"], [unshare, "-rn"]) if unshare else ():
        if subprocess.run([*prefix, "true"], capture_output=True).returncode == 0:
            return prefix
    return []


def _clean_env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("TRAINERCTL_", "RELATED_IMAGE_", "XDG_", "GIT_")) and k not in ("KUBECONFIG",)}
    env.update(HOME=str(home), NO_COLOR="1", HTTPS_PROXY="http://127.0.0.1:9", HTTP_PROXY="http://127.0.0.1:9",
               ALL_PROXY="http://127.0.0.1:9", NO_PROXY="")
    return env


def test_render_works_without_network_and_matches_a_checkout(wheel_bin, tmp_path, shared_dir):
    home, work = tmp_path / "home", tmp_path / "work"
    home.mkdir()
    work.mkdir()
    trainerctl = str(wheel_bin / "trainerctl")
    offline = _no_network()
    run = subprocess.run([*offline, trainerctl, "render"], cwd=work, env=_clean_env(home), capture_output=True)
    assert run.returncode == 0, run.stderr.decode()
    checkout = subprocess.run([trainerctl, "render", "--source", str(shared_dir.joinpath("upstream", *OPERATOR_TREE))],
                              cwd=work, env=_clean_env(tmp_path / "other-home"), capture_output=True)
    assert checkout.returncode == 0, checkout.stderr.decode()
    assert run.stdout == checkout.stdout and run.stdout.startswith(b"apiVersion: ")
    channel = subprocess.run([*offline, trainerctl, "render", "--channel", "stable"], cwd=work, env=_clean_env(home),
                             capture_output=True)
    assert channel.returncode == 0 and channel.stdout == run.stdout, channel.stderr.decode()
    # Nothing was fetched or put into the source cache; only the engine's parse cache may be there.
    cache = home / ".cache" / "trainerctl"
    assert not (cache / "repos").exists() and not (cache / "trees").exists()
    assert sorted(p.name for p in cache.iterdir()) in ([], ["kustomize"]) if cache.exists() else True
    # --refresh asks the remote, which is not there: one line, exit 1.
    if offline:
        refresh = subprocess.run([*offline, trainerctl, "render", "--refresh"], cwd=work, env=_clean_env(home),
                                 capture_output=True, text=True)
        assert refresh.returncode == 1 and refresh.stdout == ""
        # the default channel is a commit on a branch: fetched by its commit
        assert refresh.stderr.startswith("error: cannot fetch d140e85264020f29d1e5a8d959ab2fde4aec6681 from "
                                         "https://github.com/opendatahub-io/trainer.git")
        assert refresh.stderr.count("\n") == 1


def test_the_default_channel_the_wheels_copy_and_the_operators_tree_agree(wheel_bin, tmp_path, shared_dir):
    """The installed wheel's copy is the default channel's commit and digest, hashed again where pip
    put it, and that is the digest of the tree the operator ships (its manifests/trainer)."""
    out = subprocess.run([str(wheel_bin / "python"), "-I", "-c",
                          "from trainerctl.source.embedded import embedded_release as e; "
                          "from trainerctl.source.pins import default_channel as d; "
                          "from trainerctl.source.tree import walk_tree as w; r = e(); c = d(); "
                          "print(r.url, r.ref, r.commit, r.digest, w(r.manifests), c.name, c.url, c.commit, c.digest)"],
                         capture_output=True, text=True, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    from trainerctl.source.tree import walk_tree

    operator_tree = walk_tree(shared_dir.joinpath("upstream", *OPERATOR_TREE) / "manifests")
    url, commit = "https://github.com/opendatahub-io/trainer.git", "d140e85264020f29d1e5a8d959ab2fde4aec6681"
    assert out.stdout.split() == [url, commit, commit, operator_tree, operator_tree, "stable", url, commit,
                                  operator_tree]
