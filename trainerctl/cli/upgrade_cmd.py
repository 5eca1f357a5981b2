"""`trainerctl upgrade-check`: what installing the target render would break on this cluster."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional

import typer

from trainerctl.cli import app
from trainerctl.errors import InputError, TrainerctlError


def load_objects(path: str) -> list[dict]:
    """A rendered YAML (or JSON) stream, e.g. the output of `trainerctl render`; '-' is stdin."""
    import yaml

    try:
        text = sys.stdin.read() if path == "-" else Path(path).read_text()
    except OSError as exc:
        raise InputError(f"{path}: cannot read: {exc.strerror}") from None
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        docs = [d for d in yaml.load_all(text, Loader=loader) if d is not None]
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" line {mark.line + 1}" if mark else ""
        raise InputError(f"{path}{where}: not valid YAML: {getattr(exc, 'problem', None) or exc}") from None
    objects: list[dict] = []
    for i, doc in enumerate(docs):
        items = doc.get("items") if isinstance(doc, dict) and str(doc.get("kind", "")).endswith("List") else None
        for obj in items if items is not None else [doc]:
            if not isinstance(obj, dict) or "kind" not in obj or "metadata" not in obj:
                raise InputError(f"{path}: document {i + 1}: expected a Kubernetes object with kind and metadata")
            objects.append(obj)
    return objects


def _render_target(render_args: dict) -> list[dict]:
    """The target objects from the same pipeline `trainerctl render` runs."""
    try:
        from trainerctl.cli import render_cmd
    except ImportError:  # pragma: no cover - render_cmd always ships with the package
        render_cmd = None
    render_objects = getattr(render_cmd, "render_objects_from_cli", None)
    if render_objects is None:
        raise InputError("upgrade-check: this build cannot render a target yet; pass -f FILE "
                         "(the output of `trainerctl render`)")
    return render_objects(**render_args)


@app.command("upgrade-check")
def upgrade_check(
    filename: Optional[str] = typer.Option(
        None, "-f", "--filename",
        help="Compare with the CRDs in this rendered YAML stream ('-' for stdin) instead of rendering."),
    kubeconfig: Optional[str] = typer.Option(None, "--kubeconfig", help="Path to the kubeconfig file."),
    context: Optional[str] = typer.Option(None, "--context", help="Kubeconfig context to use."),
    output: str = typer.Option("text", "-o", "--output", help="text or json."),
    owner_label: str = typer.Option(
        "platform.opendatahub.io/part-of=trainer", "--owner-label",
        help="Also report installed CRDs with this label that the target no longer renders."),
) -> None:
    """Compare the installed CRDs with the target render's CRDs: removed versions and fields,
    newly required fields, new validation rules, and the TrainJobs and runtimes affected.

    Exit code 0 when nothing blocks the upgrade, 1 when something does.
    """
    if output not in ("text", "json"):
        raise InputError(f"-o {output}: expected text or json")
    from trainerctl.cluster.client import connect
    from trainerctl.upgrade import check_cluster

    target = load_objects(filename) if filename else _render_target({})
    cluster = connect(kubeconfig, context)
    report = check_cluster(cluster, target, owner_label=owner_label or None)
    sys.stdout.write(report.to_json() if output == "json" else report.to_text())
    if report.blocking:
        # An error (not typer.Exit) so the exit code survives cli.main and stderr says why.
        raise TrainerctlError(f"upgrade blocked by {len(report.blocking_findings)} change(s) listed above; "
                              "install refuses it unless --allow-breaking", exit_code=report.exit_code)
