"""`install`, `uninstall`, `diff`, `status`: the commands that talk to a cluster."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional

import typer

from trainerctl.cli import app
from trainerctl.cli.manager_flags import HaOpt, SetOpt
from trainerctl.errors import EXIT_FAILED, InputError, TrainerctlError

DEFAULT_NAMESPACE = "opendatahub"

KubeconfigOpt = typer.Option(None, "--kubeconfig", help="Path to the kubeconfig (default: $KUBECONFIG, ~/.kube/config).")
ContextOpt = typer.Option(None, "--context", help="Kubeconfig context (default: the current one).")
NamespaceOpt = typer.Option(DEFAULT_NAMESPACE, "-n", "--namespace", help="Install namespace.")
OutputOpt = typer.Option(None, "-o", "--output", help="Print the summary as yaml or json on stdout.")
FileOpt = typer.Option(None, "-f", "--filename", help="Install these rendered objects (YAML stream, `-` for stdin) "
                                                      "instead of rendering.")
SourceOpt = typer.Option(None, "--source", help="Git URL or local checkout of the upstream (default: pinned).")
RefOpt = typer.Option(None, "--ref", help="Git ref of the source (default: pinned).")
OverlayOpt = typer.Option(None, "--overlay", help="Upstream overlay (default: rhoai, else overlays/manager).")
ImageOpt = typer.Option([], "--image", help="KEY=REF image override (repeatable).")
PlatformOpt = typer.Option(None, "--platform", help="openshift|kubernetes (default: detected from the cluster).")
MirrorOpt = typer.Option([], "--remote-mirror", help="PREFIX=REPLACEMENT for remote kustomize resources.")
FieldManagerOpt = typer.Option("trainerctl", "--field-manager", help="Server-side apply field manager.")
TimeoutOpt = typer.Option(300.0, "--timeout", help="Seconds to wait for readiness (each wait).")


def _check_output(output: str | None) -> None:
    if output not in (None, "yaml", "json"):
        raise InputError(f"--output: expected yaml or json, got {output!r}")


def _connect(kubeconfig: str | None, context: str | None):
    from trainerctl.cluster.client import connect

    return connect(kubeconfig, context)


def _load_file(path: str) -> list[dict]:
    # The engine's reader: libyaml's parser with our own fast construction (CRDs are megabytes).
    from trainerctl.kustomize import yamlio

    try:
        text = sys.stdin.read() if path == "-" else Path(path).read_text()
    except OSError as exc:
        raise InputError(f"{path}: {exc.strerror}") from None
    docs = yamlio.load_all(text, path)
    for i, doc in enumerate(docs):
        if not isinstance(doc, dict) or not doc.get("apiVersion") or not doc.get("kind"):
            raise InputError(f"{path}: document {i + 1}: expected a Kubernetes object with apiVersion and kind")
        if doc.get("kind", "").endswith("List") and "items" in doc:
            raise InputError(f"{path}: document {i + 1}: List objects are not supported; pass the items")
    return docs


def _objects(cluster, *, filename, source, ref, overlay, images, platform, mirrors, namespace,
             set_values=(), ha=False):
    """(objects, source info, owner label) from a file or a render; platform detected if unset.

    A render takes ./trainerctl.yaml into account exactly as `trainerctl render` does (flags win)."""
    from trainerctl.cluster.objects import DEFAULT_OWNER_LABEL

    if filename and (set_values or ha):
        raise InputError("--ha/--set manager.* change the render; they cannot apply to -f FILE (render it with them)")
    if filename:
        return _load_file(filename), {"file": filename}, DEFAULT_OWNER_LABEL
    from trainerctl.cluster.discovery import Discovery
    from trainerctl.cluster.preflight import OPENSHIFT_GROUP
    from trainerctl.render import render
    from trainerctl.render.cli import render_options

    opts = render_options(source=source, ref=ref, overlay=overlay, namespace=namespace, platform=platform,
                          image=list(images), remote_mirror=list(mirrors), set_values=list(set_values), ha=ha)
    if opts.platform is None:
        opts.platform = "openshift" if Discovery(cluster).has_group(OPENSHIFT_GROUP) else "kubernetes"
    result = render(opts)
    return result.objects, result.source, "=".join(result.owner_label)


def _emit(report, output: str | None) -> None:
    if output == "json":
        sys.stdout.write(report.to_json())
    elif output == "yaml":
        sys.stdout.write(report.to_yaml())
    else:
        sys.stdout.write(report.text())


def _progress(total: int, output: str | None):
    from trainerctl.ui import Progress

    return Progress(total)


def _operator_namespace(ctx: typer.Context, cluster, namespace: str, take_over: bool) -> str:
    """With --take-over-operator and no -n, install where the operator did (its CR's spec.appNamespace)."""
    if not take_over or ctx.get_parameter_source("namespace").name != "DEFAULT":
        return namespace
    from trainerctl.cluster import go_operator

    cr = go_operator.read_cr(cluster)
    return go_operator.OperatorState(cr=cr).app_namespace or namespace


@app.command("install")
def install_cmd(
    ctx: typer.Context,
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
    dry_run: bool = typer.Option(False, "--dry-run", help="Server-side dry-run: write nothing, say what would change."),
    wait: bool = typer.Option(True, "--wait/--no-wait", help="Wait for the controller and its webhooks to be ready."),
    timeout: float = TimeoutOpt,
    output: Optional[str] = OutputOpt,
    force_conflicts: bool = typer.Option(False, "--force-conflicts", help="Take ownership of conflicting fields."),
    no_prune: bool = typer.Option(False, "--no-prune", help="Keep objects the previous install had and this one has not."),
    no_recreate: bool = typer.Option(False, "--no-recreate", help="Fail instead of recreating on immutable-field changes."),
    skip_preflight: bool = typer.Option(False, "--skip-preflight", help="Skip the preflight checks."),
    allow_breaking: bool = typer.Option(False, "--allow-breaking", help="Apply even if upgrade-check finds a "
                                                                        "blocking CRD change."),
    field_manager: str = FieldManagerOpt,
    set_values: list[str] = SetOpt,
    ha: bool = HaOpt,
    take_over_operator: bool = typer.Option(False, "--take-over-operator", help="Hand over from the Go "
                                            "trainer-operator: scale it to 0, release and delete its Trainer CR "
                                            "without its cleanup, then install (namespace: its appNamespace)."),
) -> None:
    """Render (or read -f) and server-side-apply Trainer in stages, wait, prune, record an inventory."""
    from trainerctl.cluster.install import InstallOptions, RunFailed, install

    _check_output(output)
    if timeout <= 0:
        raise InputError("--timeout: expected a positive number of seconds")
    cluster = _connect(kubeconfig, context)
    namespace = _operator_namespace(ctx, cluster, namespace, take_over_operator)
    objects, src, owner = _objects(cluster, filename=filename, source=source, ref=ref, overlay=overlay, images=image,
                                   platform=platform, mirrors=remote_mirror, namespace=namespace,
                                   set_values=set_values, ha=ha)
    opts = InstallOptions(field_manager=field_manager, force_conflicts=force_conflicts, dry_run=dry_run, wait=wait,
                          timeout=timeout, prune=not no_prune, recreate=not no_recreate, skip_preflight=skip_preflight,
                          allow_breaking=allow_breaking, take_over_operator=take_over_operator)
    try:
        report = install(objects, cluster=cluster, namespace=namespace, owner_label=owner, source=src, options=opts,
                         progress=_progress(len(objects), output))
    except RunFailed as exc:
        blocked = getattr(exc, "upgrade_report", None)
        if blocked is not None and output is None:
            sys.stderr.write(blocked.to_text())
        _emit(exc.report, output)
        raise
    _emit(report, output)


@app.command("uninstall")
def uninstall_cmd(
    kubeconfig: Optional[str] = KubeconfigOpt,
    context: Optional[str] = ContextOpt,
    namespace: str = NamespaceOpt,
    delete_crds: bool = typer.Option(False, "--delete-crds", help="Also delete the CRDs, and with them every TrainJob."),
    yes: bool = typer.Option(False, "--yes", help="Do not ask before deleting CRDs."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Say what would be deleted; delete nothing."),
    timeout: float = TimeoutOpt,
    output: Optional[str] = OutputOpt,
) -> None:
    """Delete everything labelled as ours (runtimes first); keep CRDs, TrainJobs and the namespace."""
    from trainerctl.cluster.uninstall import UninstallOptions, uninstall

    _check_output(output)
    cluster = _connect(kubeconfig, context)
    confirm = (lambda q: typer.confirm(q, err=True)) if sys.stdin.isatty() else None
    report = uninstall(cluster=cluster, namespace=namespace, options=UninstallOptions(delete_crds, yes, dry_run, timeout),
                       confirm=confirm, progress=_progress(0, output))
    _emit(report, output)
    if report.failed:
        raise TrainerctlError(f"{len(report.failed)} object(s) could not be deleted: {report.failed[0].display}: "
                              f"{report.failed[0].message}")


@app.command("diff")
def diff_cmd(
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
    field_manager: str = FieldManagerOpt,
    set_values: list[str] = SetOpt,
    ha: bool = HaOpt,
) -> None:
    """Unified diff of live objects against a server-side dry-run; exit 0 none, 1 drift, >1 error."""
    from trainerctl.cluster.diff import diff

    try:
        cluster = _connect(kubeconfig, context)
        objects, _src, owner = _objects(cluster, filename=filename, source=source, ref=ref, overlay=overlay,
                                        images=image, platform=platform, mirrors=remote_mirror, namespace=namespace,
                                        set_values=set_values, ha=ha)
        result = diff(objects, cluster=cluster, namespace=namespace, owner_label=owner, field_manager=field_manager)
    except TrainerctlError as exc:
        if exc.exit_code == EXIT_FAILED:  # 1 means "drift" here, like kubectl diff
            exc.exit_code = 2
        raise
    sys.stdout.write(result.text())
    if result.errors:
        first = result.errors[0]
        raise TrainerctlError(f"{len(result.errors)} object(s) could not be compared: {first.ref}: {first.message}", 2)
    if result.drift:
        changed = sum(1 for d in result.diffs if d.state in ("changed", "create", "prune"))
        raise TrainerctlError(f"drift: {changed} object(s) differ from the render", EXIT_FAILED)


@app.command("status")
def status_cmd(
    kubeconfig: Optional[str] = KubeconfigOpt,
    context: Optional[str] = ContextOpt,
    namespace: str = NamespaceOpt,
    filename: Optional[str] = FileOpt,
    output: Optional[str] = OutputOpt,
    field_manager: str = FieldManagerOpt,
    wait: bool = typer.Option(False, "--wait", help="Wait until Ready (or --timeout), then report."),
    timeout: float = TimeoutOpt,
) -> None:
    """Installed source and Trainer version, the operator's conditions (Ready, ...), each object and
    Deployment; exit 0 when Ready, 1 when not, 4 when --wait timed out."""
    from trainerctl.cluster.status import not_ready_line, status, status_text, wait_ready
    from trainerctl.errors import WaitTimeout

    _check_output(output)
    if timeout <= 0:
        raise InputError("--timeout: expected a positive number of seconds")
    cluster = _connect(kubeconfig, context)
    objects = _load_file(filename) if filename else None
    args = dict(cluster=cluster, namespace=namespace, objects=objects, field_manager=field_manager)
    if wait:
        from trainerctl import ui

        def on_wait(ready: dict) -> None:
            if ready["reason"] != getattr(on_wait, "last", None):
                on_wait.last = ready["reason"]  # type: ignore[attr-defined]
                ui.info(f"waiting for Ready: {ready['reason']}: {ready['message']}")

        st, ready = wait_ready(timeout, on_wait, **args)
    else:
        st = status(**args)
        ready = st["ready"]
    if output == "json":
        import json

        sys.stdout.write(json.dumps(st, indent=2) + "\n")
    elif output == "yaml":
        import yaml

        sys.stdout.write(yaml.safe_dump(st, sort_keys=False))
    else:
        sys.stdout.write(status_text(st))
    if not ready:
        if wait:
            raise WaitTimeout(f"timed out after {timeout:g}s: {not_ready_line(st)}")
        raise TrainerctlError(not_ready_line(st), EXIT_FAILED)
