"""install/diff render with ./trainerctl.yaml the way `trainerctl render` does (flags win)."""

from __future__ import annotations


def test_install_render_reads_the_manager_block(shared_dir, tmp_path, monkeypatch):
    from trainerctl.cli.options import target
    from trainerctl.settings.build import build

    monkeypatch.chdir(tmp_path)
    (tmp_path / "trainerctl.yaml").write_text("manager:\n  replicas: 3\nnamespace: ml-platform\n")
    source = str(shared_dir / "upstream/opendatahub-trainer/odh-3.5.0")
    goal = target(None, build({"source": source, "platform": "kubernetes"}))
    (deploy,) = [o for o in goal.objects if o["kind"] == "Deployment"]
    assert deploy["spec"]["replicas"] == 3
    assert goal.namespace == "ml-platform" and deploy["metadata"]["namespace"] == "ml-platform"
    # A flag still wins over the file.
    goal = target(None, build({"source": source, "platform": "kubernetes", "set_values": ["manager.replicas=2"],
                               "namespace": "ns2"}))
    (deploy,) = [o for o in goal.objects if o["kind"] == "Deployment"]
    assert deploy["spec"]["replicas"] == 2
    assert goal.namespace == "ns2"
