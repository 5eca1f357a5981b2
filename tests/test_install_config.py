"""install/diff render with ./trainerctl.yaml the way `trainerctl render` does (flags win)."""

from __future__ import annotations


def test_install_render_reads_the_manager_block(shared_dir, tmp_path, monkeypatch):
    from trainerctl.cli.cluster_cmd import _objects

    monkeypatch.chdir(tmp_path)
    (tmp_path / "trainerctl.yaml").write_text("manager:\n  replicas: 3\n")
    source = str(shared_dir / "upstream/opendatahub-trainer/odh-3.5.0")
    objects, _src, _owner = _objects(None, filename=None, source=source, ref=None, overlay=None, images=[],
                                     platform="kubernetes", mirrors=[], namespace="opendatahub")
    (deploy,) = [o for o in objects if o["kind"] == "Deployment"]
    assert deploy["spec"]["replicas"] == 3
    # A flag still wins over the file.
    objects, _src, _owner = _objects(None, filename=None, source=source, ref=None, overlay=None, images=[],
                                     platform="kubernetes", mirrors=[], namespace="opendatahub",
                                     set_values=["manager.replicas=2"])
    (deploy,) = [o for o in objects if o["kind"] == "Deployment"]
    assert deploy["spec"]["replicas"] == 2
