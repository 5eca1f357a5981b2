"""install with no source flags installs the copy of the default channel inside the wheel, and the
inventory, `status` and `history` say so."""

from __future__ import annotations

import json

from tests.support.cluster import FakeController, ODH_NS, prepare_cluster_for_odh
from trainerctl.cli import main
from trainerctl.render import RenderOptions, render
from trainerctl.source.pins import pinned_digest

# The default channel, stable: a commit on opendatahub-io/trainer main, fetched (and recorded) by its commit.
URL, COMMIT = "https://github.com/opendatahub-io/trainer.git", "d140e85264020f29d1e5a8d959ab2fde4aec6681"
REF = COMMIT


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
    st = json.loads(capsys.readouterr().out)
    source = st["source"]
    assert (source["url"], source["ref"], source["commit"], source["embedded"]) == (URL, REF, COMMIT, True)
    assert source["digest"] == pinned_digest(COMMIT) and source["channel"] == st["channel"] == "stable"
    assert st["trainerVersion"] == "2.3.0"
    assert main(["status", "--kubeconfig", env.kubeconfig, "-n", ODH_NS]) == 0
    out = capsys.readouterr().out
    assert f"source: the copy of {URL} at commit {COMMIT} embedded in trainerctl\nchannel: stable (" in out
    assert main(["history", "--kubeconfig", env.kubeconfig, "-n", ODH_NS]) == 0
    table = capsys.readouterr().out.splitlines()
    assert table[0].split()[4:7] == ["TRAINER", "CHANNEL", "SOURCE"]
    assert table[1].split()[4:7] == ["2.3.0", "stable", "embedded"] and f"{URL}@{COMMIT[:12]}" in table[1]
    assert main(["history", "--kubeconfig", env.kubeconfig, "-n", ODH_NS, "-o", "json"]) == 0
    revision = json.loads(capsys.readouterr().out)["revisions"][0]
    assert revision["channel"] == revision["source"]["channel"] == "stable"
