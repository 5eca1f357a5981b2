"""`install`, `uninstall`, `diff`, `status`: the commands that talk to a cluster."""

from __future__ import annotations

import math
import sys

import typer

from trainerctl.cli import command
from trainerctl.cli.flags import (
    DEFAULT_FIELD_MANAGER,
    DEFAULT_TIMEOUT,
    AllowBreaking,
    ClusterFlags,
    DeleteCrds,
    DryRun,
    FieldManager,
    Filename,
    ForceConflicts,
    Namespace,
    NoPrune,
    NoRecreate,
    Output,
    RenderFlags,
    SkipPreflight,
    SourceFlags,
    Timeout,
    Wait,
    Yes,
    cluster_flags,
    render_flags,
    source_flags,
)
from trainerctl.cli.render_cmd import render_options
from trainerctl.cli.typer_support import uses
from trainerctl.errors import EXIT_BAD_INPUT, EXIT_FAILED, InputError, TrainerctlError

SUMMARY_FORMATS = ("text", "yaml", "json")


def check_output(output: str | None, formats=SUMMARY_FORMATS) -> str:
    if output is None:
        return formats[0]
    if output not in formats:
        raise InputError(f"-o {output!r}: expected one of {', '.join(formats)}")
    return output


def check_timeout(timeout: float) -> None:
    if not math.isfinite(timeout) or timeout <= 0:
        raise InputError(f"--timeout {timeout:g}: expected a positive number of seconds")


def namespace_of(namespace: str | None, source: SourceFlags | None = None) -> str:
    from trainerctl.render.settings import namespace_setting

    return namespace_setting(namespace, source.config if source else None)


def target(cluster, filename: str | None, source: SourceFlags, render: RenderFlags, namespace: str | None):
    """The objects to work on (trainerctl.target.Target): -f FILE, or a render with these flags."""
    from trainerctl import target as targets

    if filename:
        given = render.given() + [f for f, v in (("--source", source.source), ("--ref", source.ref),
                                                ("--cache-dir", source.cache_dir), ("--lock", source.lock),
                                                ("--no-lock", source.no_lock)) if v]
        if given:
            raise InputError(f"-f {filename} and {given[0]}: {given[0]} changes the render, and -f FILE is "
                             "already rendered (render it with that flag instead)")
        return targets.from_file(filename, namespace_of(namespace, source))
    options = render_options(source, render, namespace=namespace)
    from trainerctl.render.pipeline import check_options

    check_options(options)  # bad flags fail before the cluster is contacted
    return targets.from_render(cluster, options)


def emit(report, output: str) -> None:
    if output == "json":
        sys.stdout.write(report.to_json())
    elif output == "yaml":
        sys.stdout.write(report.to_yaml())
    else:
        sys.stdout.write(report.text())


def progress(total: int):
    from trainerctl.ui import Progress

    return Progress(total)


def errors_above_one(fn):
    """Run fn; a plain failure (exit 1) becomes 2, because 1 means "drift" / "blocked" here."""
    try:
        return fn()
    except TrainerctlError as exc:
        if exc.exit_code == EXIT_FAILED:
            exc.exit_code = EXIT_BAD_INPUT
        raise


@command("install")
@uses(cluster_flags, source_flags, render_flags)
def install_cmd(
    cluster: ClusterFlags,
    source: SourceFlags,
    render: RenderFlags,
    namespace: Namespace = None,
    filename: Filename = None,
    dry_run: DryRun = False,
    wait: Wait = True,
    timeout: Timeout = DEFAULT_TIMEOUT,
    output: Output = None,
    force_conflicts: ForceConflicts = False,
    no_prune: NoPrune = False,
    no_recreate: NoRecreate = False,
    skip_preflight: SkipPreflight = False,
    allow_breaking: AllowBreaking = False,
    field_manager: FieldManager = DEFAULT_FIELD_MANAGER,
) -> None:
    """Render (or read -f) and server-side-apply Trainer in stages, wait, prune, record an inventory."""
    from trainerctl.cluster.install import InstallOptions, RunFailed, install

    output = check_output(output)
    check_timeout(timeout)
    api = cluster.connect()
    goal = target(api, filename, source, render, namespace)
    opts = InstallOptions(field_manager=field_manager, force_conflicts=force_conflicts, dry_run=dry_run, wait=wait,
                          timeout=timeout, prune=not no_prune, recreate=not no_recreate, skip_preflight=skip_preflight,
                          allow_breaking=allow_breaking)
    try:
        report = install(goal.objects, cluster=api, namespace=goal.namespace, owner_label=goal.owner_label,
                         source=goal.source, options=opts, progress=progress(len(goal.objects)))
    except RunFailed as exc:
        exc.report.error = exc.report.error or str(exc)
        blocked = getattr(exc, "upgrade_report", None)
        if blocked is not None and output == "text":
            sys.stderr.write(blocked.to_text())
        if output != "text" or exc.report.objects:  # text: the error line says it all
            emit(exc.report, output)
        raise
    emit(report, output)


@command("uninstall")
@uses(cluster_flags)
def uninstall_cmd(
    cluster: ClusterFlags,
    namespace: Namespace = None,
    delete_crds: DeleteCrds = False,
    yes: Yes = False,
    dry_run: DryRun = False,
    timeout: Timeout = DEFAULT_TIMEOUT,
    output: Output = None,
) -> None:
    """Delete everything labelled as ours (runtimes first); keep CRDs, TrainJobs and the namespace."""
    from trainerctl.cluster.uninstall import UninstallOptions, uninstall

    output = check_output(output)
    check_timeout(timeout)
    ns = namespace_of(namespace)
    api = cluster.connect()
    confirm = (lambda q: typer.confirm(q, err=True)) if sys.stdin.isatty() else None
    report = uninstall(cluster=api, namespace=ns, options=UninstallOptions(delete_crds, yes, dry_run, timeout),
                       confirm=confirm, progress=progress(0))
    emit(report, output)
    if report.failed:
        raise TrainerctlError(f"{len(report.failed)} object(s) could not be deleted: {report.failed[0].display}: "
                              f"{report.failed[0].message}")


@command("diff")
@uses(cluster_flags, source_flags, render_flags)
def diff_cmd(
    cluster: ClusterFlags,
    source: SourceFlags,
    render: RenderFlags,
    namespace: Namespace = None,
    filename: Filename = None,
    field_manager: FieldManager = DEFAULT_FIELD_MANAGER,
) -> None:
    """Unified diff of live objects against a server-side dry-run; exit 0 none, 1 drift, >1 error."""
    from trainerctl.cluster.diff import diff

    def compare():
        api = cluster.connect()
        goal = target(api, filename, source, render, namespace)
        return diff(goal.objects, cluster=api, namespace=goal.namespace, owner_label=goal.owner_label,
                    field_manager=field_manager)

    result = errors_above_one(compare)
    sys.stdout.write(result.text())
    if result.errors:
        first = result.errors[0]
        raise TrainerctlError(f"{len(result.errors)} object(s) could not be compared: {first.ref}: {first.message}",
                              EXIT_BAD_INPUT)
    if result.drift:
        changed = sum(1 for d in result.diffs if d.state in ("changed", "create", "prune"))
        raise TrainerctlError(f"drift: {changed} object(s) differ from the render", EXIT_FAILED)


@command("status")
@uses(cluster_flags)
def status_cmd(
    cluster: ClusterFlags,
    namespace: Namespace = None,
    filename: Filename = None,
    output: Output = None,
    field_manager: FieldManager = DEFAULT_FIELD_MANAGER,
) -> None:
    """Installed source, ref, commit and Trainer version; each object present/missing/drifted."""
    from trainerctl import target as targets
    from trainerctl.cluster.status import status, status_text

    output = check_output(output)
    ns = namespace_of(namespace)
    objects = targets.load_file(filename) if filename else None
    api = cluster.connect()
    st = status(cluster=api, namespace=ns, objects=objects, field_manager=field_manager)
    if output == "json":
        import json

        sys.stdout.write(json.dumps(st, indent=2) + "\n")
    elif output == "yaml":
        import yaml

        sys.stdout.write(yaml.safe_dump(st, sort_keys=False))
    else:
        sys.stdout.write(status_text(st))
