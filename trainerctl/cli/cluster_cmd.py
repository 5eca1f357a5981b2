"""`install`, `uninstall`, `diff`, `status`: the commands that talk to a cluster.

Each command body imports what it runs: this is the dispatch, the one place imports are lazy, so
a command line that fails to parse costs nothing but the parse.
"""

from __future__ import annotations

import sys

import typer

from trainerctl.cli import command
from trainerctl.cli.flags import (
    DEFAULT_FIELD_MANAGER,
    DEFAULT_LOCK_TIMEOUT,
    DEFAULT_TIMEOUT,
    AllowBreaking,
    CheckImages,
    ClusterFlags,
    RenderFlags,
    SourceFlags,
    DeleteCrds,
    DryRun,
    FieldManager,
    Filename,
    ForceConflicts,
    ImagesCheck,
    LockTimeout,
    Namespace,
    NoPrune,
    NoRecreate,
    Output,
    OutputFile,
    RegistryFlags,
    SkipPreflight,
    TakeOverHelm,
    TakeOverOperator,
    Timeout,
    Wait,
    Yes,
    cluster_flags,
    registry_flags,
    render_flags,
    source_flags,
)
from trainerctl.cli.typer_support import uses
from trainerctl.errors import EXIT_BAD_INPUT, EXIT_FAILED, TrainerctlError, WaitTimeout
from trainerctl.safe_text import terminal


def operator_namespace(api, namespace: str | None, source: SourceFlags) -> str | None:
    """For --take-over-operator with no namespace from -n or trainerctl.yaml: where the Go operator
    installed Trainer (its CR's spec.appNamespace)."""
    from trainerctl.cluster.trainer import go_operator
    from trainerctl.render.config_file import load_config

    if namespace is not None or load_config(source.config).get("namespace") is not None:
        return namespace
    return go_operator.OperatorState(cr=go_operator.read_cr(api)).app_namespace


def helm_namespace(api, namespace: str | None, source: SourceFlags) -> str | None:
    """For --take-over-helm with no namespace from -n or trainerctl.yaml: the namespace of the Helm
    release of the kubeflow-trainer chart, when there is exactly one."""
    from trainerctl.cluster.operations import helm
    from trainerctl.cluster.trainer.helm_handover import trainer_releases
    from trainerctl.render.config_file import load_config
    from trainerctl.render.settings import namespace_setting

    if namespace is not None or load_config(source.config).get("namespace") is not None:
        return namespace
    found = {r.namespace for r in trainer_releases(helm.find_releases(api, namespace_setting(None))).releases}
    return found.pop() if len(found) == 1 else namespace


@command("install")
@uses(cluster_flags, source_flags, render_flags, registry_flags)
def install_cmd(
    cluster: ClusterFlags,
    source: SourceFlags,
    render: RenderFlags,
    registry: RegistryFlags,
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
    take_over_operator: TakeOverOperator = False,
    take_over_helm: TakeOverHelm = False,
    lock_timeout: LockTimeout = DEFAULT_LOCK_TIMEOUT,
    check_images: CheckImages = False,
) -> None:
    """Render (or read -f) and server-side-apply Trainer in stages, wait, prune, record an inventory."""
    from trainerctl.cli.output import check_lock_timeout, check_output, check_timeout, emit, progress
    from trainerctl.cli.target import read_first, target
    from trainerctl.cluster.client.client import connect
    from trainerctl.cluster.install import InstallOptions, RunFailed, install
    from trainerctl.upgrade import guard

    output = check_output(output)
    check_timeout(timeout)
    check_lock_timeout(lock_timeout)
    registries = registry.for_step(check_images, "--check-images")
    given = read_first(filename)
    api = connect(cluster.kubeconfig, cluster.context, stdin_in_use=filename == "-")
    if take_over_operator:
        namespace = operator_namespace(api, namespace, source)
    elif take_over_helm:
        namespace = helm_namespace(api, namespace, source)
    goal = target(api, filename, source, render, namespace, given)
    if registries is not None:
        from trainerctl.images.pinning import require_images

        require_images(goal.objects, registries)
    opts = InstallOptions(field_manager=field_manager, force_conflicts=force_conflicts, dry_run=dry_run, wait=wait,
                          timeout=timeout, prune=not no_prune, recreate=not no_recreate, skip_preflight=skip_preflight,
                          allow_breaking=allow_breaking, take_over_operator=take_over_operator,
                          take_over_helm=take_over_helm, upgrade_guard=guard, lock_timeout=lock_timeout)
    try:
        report = install(goal.objects, cluster=api, namespace=goal.namespace, owner_label=goal.owner_label,
                         source=goal.source, options=opts, progress=progress(len(goal.objects)))
    except RunFailed as exc:
        exc.report.error = exc.report.error or str(exc)
        blocked = exc.upgrade_report
        if blocked is not None and output == "text":
            sys.stderr.write(terminal(blocked.to_text()))
        if exc.diagnoses:  # the causes in full, before the one error line that names the first
            from trainerctl.cluster.manager.diagnose import lines

            sys.stderr.write(terminal("".join(f"{line}\n" for line in lines(exc.diagnoses))))
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
    lock_timeout: LockTimeout = DEFAULT_LOCK_TIMEOUT,
) -> None:
    """Delete everything labelled as ours (runtimes first); keep CRDs, TrainJobs and the namespace."""
    from trainerctl.cli.output import check_lock_timeout, check_output, check_timeout, emit, progress
    from trainerctl.cluster.client.client import connect
    from trainerctl.cluster.uninstall import UninstallOptions, uninstall
    from trainerctl.render.settings import namespace_setting

    output = check_output(output)
    check_timeout(timeout)
    check_lock_timeout(lock_timeout)
    ns = namespace_setting(namespace)
    api = connect(cluster.kubeconfig, cluster.context)
    confirm = (lambda q: typer.confirm(q, err=True)) if sys.stdin.isatty() else None
    report = uninstall(cluster=api, namespace=ns, confirm=confirm, progress=progress(0),
                       options=UninstallOptions(delete_crds, yes, dry_run, timeout, lock_timeout))
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
    from trainerctl import ui
    from trainerctl.cli.output import errors_above_one
    from trainerctl.cli.target import read_first, target
    from trainerctl.cluster.diff import diff
    from trainerctl.cluster.client.client import connect

    def compare():
        given = read_first(filename)
        api = connect(cluster.kubeconfig, cluster.context, stdin_in_use=filename == "-")
        goal = target(api, filename, source, render, namespace, given)
        return diff(goal.objects, cluster=api, namespace=goal.namespace, owner_label=goal.owner_label,
                    field_manager=field_manager)

    result = errors_above_one(compare)
    sys.stdout.write(result.text())
    for kept in (d for d in result.diffs if d.state == "kept"):
        ui.info(f"diff: {kept.ref}: {kept.message}")
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
    wait: Wait = False,
    timeout: Timeout = DEFAULT_TIMEOUT,
) -> None:
    """Installed source and Trainer release, the operator's conditions (Ready, ...), each object and
    Deployment; exit 0 when Ready, 1 when not, 4 when --wait timed out."""
    import json

    import yaml

    from trainerctl import ui
    from trainerctl.cli.output import check_output, check_timeout
    from trainerctl.cli.target import load_file
    from trainerctl.cluster.client.client import connect
    from trainerctl.cluster.status import not_ready_line, status, status_text, wait_ready
    from trainerctl.render.settings import namespace_setting

    output = check_output(output)
    check_timeout(timeout)
    ns = namespace_setting(namespace)
    objects = load_file(filename) if filename else None
    api = connect(cluster.kubeconfig, cluster.context, stdin_in_use=filename == "-")
    args = dict(cluster=api, namespace=ns, objects=objects, field_manager=field_manager)
    if wait:
        seen: list[str] = []

        def on_wait(ready: dict) -> None:
            if ready["reason"] not in seen[-1:]:
                seen.append(ready["reason"])
                ui.info(f"waiting for Ready: {ready['reason']}: {ready['message']}")

        st, ready = wait_ready(timeout, on_wait, **args)
    else:
        st = status(**args)
        ready = st["ready"]
    if output == "json":
        sys.stdout.write(json.dumps(st, indent=2) + "\n")
    elif output == "yaml":
        sys.stdout.write(yaml.safe_dump(st, sort_keys=False))
    else:
        sys.stdout.write(terminal(status_text(st)))
    if not ready:
        if wait:
            raise WaitTimeout(f"timed out after {timeout:g}s: {not_ready_line(st)}")
        raise TrainerctlError(not_ready_line(st), EXIT_FAILED)


@command("check")
@uses(cluster_flags, source_flags, render_flags, registry_flags)
def check_cmd(
    cluster: ClusterFlags,
    source: SourceFlags,
    render: RenderFlags,
    registry: RegistryFlags,
    namespace: Namespace = None,
    filename: Filename = None,
    output: Output = None,
    no_prune: NoPrune = False,
    field_manager: FieldManager = DEFAULT_FIELD_MANAGER,
    images: ImagesCheck = False,
) -> None:
    """Every check install makes before applying, all listed: the cluster, versions, JobSet,
    permissions, the Go operator, the upgrade check, with --images the images; exit 0 when install
    may go ahead, 3 when not."""
    from trainerctl.cli.output import check_output, emit
    from trainerctl.cli.target import read_first, target
    from trainerctl.cluster.check import check
    from trainerctl.cluster.client.client import connect
    from trainerctl.cluster.install import source_dict
    from trainerctl.errors import PreflightError
    from trainerctl.upgrade import guard

    output = check_output(output)
    registries = registry.for_step(images, "--images")
    given = read_first(filename)
    api = connect(cluster.kubeconfig, cluster.context, stdin_in_use=filename == "-")
    goal = target(api, filename, source, render, namespace, given)
    images_step = None
    if registries is not None:
        from trainerctl.images.pinning import image_check

        images_step = image_check(registries)
    report = check(goal.objects, cluster=api, namespace=goal.namespace, source=source_dict(goal.source),
                   owner_label=goal.owner_label, field_manager=field_manager, prune=not no_prune,
                   upgrade_guard=guard, image_check=images_step)
    emit(report, output)
    if report.failed:
        first = report.failed[0]
        raise PreflightError(f"{len(report.failed)} check(s) failed, first: {first.check}: {first.message}")


@command("support-bundle")
@uses(cluster_flags)
def support_bundle_cmd(
    cluster: ClusterFlags,
    namespace: Namespace = None,
    output_file: OutputFile = None,
) -> None:
    """Write one .tar.gz for a support ticket: versions, source and inventory, status and diagnosis,
    our objects (no Secret values), events, controller logs, CRD versions, workload counts, nodes."""
    import json

    from trainerctl import ui
    from trainerctl.cluster.client.client import connect
    from trainerctl.cluster.status import status
    from trainerctl.cluster.support_bundle import support_bundle
    from trainerctl.render.settings import namespace_setting

    ns = namespace_setting(namespace)
    api = connect(cluster.kubeconfig, cluster.context)
    written = support_bundle(cluster=api, namespace=ns, output_file=output_file,
                             status=lambda part: json.loads(json.dumps(status(cluster=part, namespace=ns))))
    ui.info(written.line())
    sys.stdout.write(written.path + "\n")
