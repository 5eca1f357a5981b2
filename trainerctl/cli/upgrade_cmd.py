"""`trainerctl upgrade-check`: what installing the target render would break on this cluster."""

from __future__ import annotations

import sys
from typing import Optional

import typer

from trainerctl.cli import app

# The same flags, and the same way to get the target (a render or -f FILE), as install and diff:
# upgrade-check answers "what would `install` with these flags do to my TrainJobs?".
from trainerctl.cli.cluster_cmd import (
    ContextOpt,
    FileOpt,
    ImageOpt,
    KubeconfigOpt,
    MirrorOpt,
    NamespaceOpt,
    OverlayOpt,
    PlatformOpt,
    RefOpt,
    SourceOpt,
    _connect,
    _objects,
)
from trainerctl.errors import InputError, TrainerctlError


@app.command("upgrade-check")
def upgrade_check(
    kubeconfig: Optional[str] = KubeconfigOpt,
    context: Optional[str] = ContextOpt,
    namespace: str = NamespaceOpt,
    filename: Optional[str] = FileOpt,
    source: Optional[str] = SourceOpt,
    ref: Optional[str] = RefOpt,
    overlay: Optional[str] = OverlayOpt,
    image: list[str] = ImageOpt,
    platform: Optional[str] = PlatformOpt,
    remote_mirror: list[str] = MirrorOpt,
    output: str = typer.Option("text", "-o", "--output", help="text or json."),
) -> None:
    """Compare the installed CRDs with the target render's CRDs: removed versions and fields,
    newly required fields, new validation rules, and the TrainJobs and runtimes affected.

    Exit code 0 when nothing blocks the upgrade, 1 when something does.
    """
    if output not in ("text", "json"):
        raise InputError(f"--output: expected text or json, got {output!r}")
    from trainerctl.upgrade import check_cluster

    cluster = _connect(kubeconfig, context)
    target, _source, owner = _objects(cluster, filename=filename, source=source, ref=ref, overlay=overlay,
                                      images=image, platform=platform, mirrors=remote_mirror, namespace=namespace)
    report = check_cluster(cluster, target, owner_label=owner)
    sys.stdout.write(report.to_json() if output == "json" else report.to_text())
    if report.blocking:
        # An error (not typer.Exit) so the exit code survives cli.main and stderr says why.
        raise TrainerctlError(f"upgrade blocked by {len(report.blocking_findings)} change(s) listed above; "
                              "install refuses it unless --allow-breaking", exit_code=report.exit_code)
