"""install/diff render with ./trainerctl.yaml the way `trainerctl render` does (flags win)."""

from __future__ import annotations


def test_install_render_reads_the_manager_block(shared_dir, tmp_path, monkeypatch):
    from trainerctl.cli.target import target
    from trainerctl.cli.flags import RenderFlags, SourceFlags

    monkeypatch.chdir(tmp_path)
    (tmp_path / "trainerctl.yaml").write_text("manager:\n  replicas: 3\nnamespace: ml-platform\n")
    source = SourceFlags(source=str(shared_dir / "upstream/opendatahub-trainer/odh-3.5.0"))
    goal = target(None, None, source, RenderFlags(platform="kubernetes"), None)
    (deploy,) = [o for o in goal.objects if o["kind"] == "Deployment"]
    assert deploy["spec"]["replicas"] == 3
    assert goal.namespace == "ml-platform" and deploy["metadata"]["namespace"] == "ml-platform"
    # A flag still wins over the file.
    goal = target(None, None, source, RenderFlags(platform="kubernetes", set_values=["manager.replicas=2"]), "ns2")
    (deploy,) = [o for o in goal.objects if o["kind"] == "Deployment"]
    assert deploy["spec"]["replicas"] == 2
    assert goal.namespace == "ns2"
