"""install with no source flags installs the copy of the pinned release inside the wheel, and the
inventory and `status` say so."""

from __future__ import annotations

import json

from tests.support.cluster import FakeController, ODH_NS, prepare_cluster_for_odh
from trainerctl.cli import main
from trainerctl.render import RenderOptions, render
from trainerctl.source.pins import pinned_digest

URL, REF, COMMIT = "https://github.com/opendatahub-io/trainer.git", "odh-3.5.0", "d063877c480bbd9a35512691ded96c97d8937b44"


def test_install_of_the_default_records_the_embedded_copy(env, installed_copy, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TRAINERCTL_CACHE_DIR", str(tmp_path / "cache"))
    prepare_cluster_for_odh(env.cluster)
    objects = render(RenderOptions(platform="kubernetes", env={})).objects
    with FakeController(env, objects):
        code = main(["install", "--kubeconfig", env.kubeconfig, "-n", ODH_NS, "--platform", "kubernetes",
                     "--timeout", "60", "-o", "json"])
        out = capsys.readouterr().out
    assert code == 0, out
    assert not (tmp_path / "cache" / "repos").exists() and not (tmp_path / "cache" / "trees").exists()
    assert main(["status", "--kubeconfig", env.kubeconfig, "-n", ODH_NS, "-o", "json"]) == 0
    source = json.loads(capsys.readouterr().out)["source"]
    assert (source["url"], source["ref"], source["commit"], source["embedded"]) == (URL, REF, COMMIT, True)
    assert source["digest"] == pinned_digest(COMMIT)
    assert main(["status", "--kubeconfig", env.kubeconfig, "-n", ODH_NS]) == 0
    assert f"source: the copy of {URL} ref {REF} embedded in trainerctl, commit {COMMIT}" in capsys.readouterr().out
