"""`install`, `uninstall`, `diff`, `status`, `check`, `support-bundle`: the commands that talk to a
cluster, each building its action and the session it runs over (cli/options.py).

Each command body imports what it runs: this is the dispatch, the one place imports are lazy, so
a command line that fails to parse costs nothing but the parse.
"""

from __future__ import annotations

import sys

import typer

from trainerctl.cli import command
from trainerctl.cli.flags import CLUSTER, REGISTRY, RENDER, SOURCE, takes
from trainerctl.errors import EXIT_BAD_INPUT, EXIT_FAILED, TrainerctlError, WaitTimeout
from trainerctl.settings import Settings


@command("install")
@takes(*CLUSTER, *SOURCE, *RENDER, *REGISTRY, "namespace", "filename", "dry_run", "wait", "timeout", "output",
       "force_conflicts", "prune", "recreate", "skip_preflight", "allow_breaking", "field_manager",
       "take_over_operator", "take_over_helm", "lock_timeout", "check_images", "history_max",
       "verify", "verbose")
def install_cmd(s: Settings) -> None:
    """Apply Trainer in stages, wait, prune, record a revision.

    Render (or read -f) and server-side-apply Trainer in stages, wait, prune, record an inventory
    and a revision in the install history."""
    from trainerctl.cli.options import image_check, install_options, read_first, session, target
    from trainerctl.cli.output import check_output, report_install
    from trainerctl.cli.verify_cmd import verify_after

    output = check_output(s.output)
    images = image_check(s, "install")
    given = read_first(s)
    on = session(s)
    goal = target(on, s, given, hand_over=True)
    on = session(s, on.cluster, namespace=goal.namespace, owner_label=goal.owner_label, progress_of=len(goal.objects))
    action = install_options(s, recipe=goal.recipe, image_check=images)
    report_install(lambda: action.run(on, goal.objects, goal.source), output, on.progress, verify_after(s, on))


@command("uninstall")
@takes(*CLUSTER, "namespace", "owner_label", "delete_crds", "keep_history", "yes", "dry_run", "timeout", "output", "lock_timeout",
       "verbose")
def uninstall_cmd(s: Settings) -> None:
    """Delete what trainerctl installed; keep CRDs and TrainJobs.

    Delete everything labelled as ours (webhooks first); keep CRDs, TrainJobs and the namespace;
    delete the install history unless --keep-history."""
    from trainerctl.cli.options import session, uninstall_options
    from trainerctl.cli.output import check_output, emit

    output = check_output(s.output)
    on = session(s, progress_of=0)
    confirm = (lambda q: typer.confirm(q, err=True)) if sys.stdin.isatty() else None
    report = uninstall_options(s).run(on, confirm)
    emit(report, output, on.progress)
    if report.failed:
        raise TrainerctlError(f"{len(report.failed)} object(s) could not be deleted: {report.failed[0].display}: "
                              f"{report.failed[0].message}")


@command("diff")
@takes(*CLUSTER, *SOURCE, *RENDER, "namespace", "filename", "field_manager")
def diff_cmd(s: Settings) -> None:
    """Diff the cluster against the render; exit 1 on drift.

    Unified diff of live objects against a server-side dry-run; exit 0 none, 1 drift, >1 error."""
    from trainerctl import ui
    from trainerctl.cli.output import errors_above_one, verbatim
    from trainerctl.cli.options import read_first, session, target
    from trainerctl.cluster.diff import Diff

    def compare():
        given = read_first(s)
        on = session(s)
        goal = target(on, s, given)
        return Diff().run(session(s, on.cluster, namespace=goal.namespace, owner_label=goal.owner_label), goal.objects)

    result = errors_above_one(compare)
    verbatim(result.text())  # YAML made by serialize: escaped, masked, whole as kubectl diff shows it
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
@takes(*CLUSTER, "namespace", "owner_label", "filename", "output", "field_manager", "wait", "timeout",
       defaults={"wait": False})
def status_cmd(s: Settings) -> None:
    """Show what is installed and whether it is Ready.

    Installed source and Trainer release, the operator's conditions (Ready, ...), each object and
    Deployment; exit 0 when Ready, 1 when not, 4 when --wait timed out."""
    from trainerctl import ui
    from trainerctl.cli.options import read_first, session
    from trainerctl.cli.output import check_output, emit
    from trainerctl.cluster.status import Status

    output = check_output(s.output)
    given = read_first(s)
    on = session(s)
    seen: list[str] = []

    def on_wait(ready: dict) -> None:
        if ready["reason"] not in seen[-1:]:
            seen.append(ready["reason"])
            ui.info(f"waiting for Ready: {ready['reason']}: {ready['message']}")

    st = Status(given.objects if given else None, s.timeout if s.wait else None, on_wait).run(on)
    emit(st, output)
    if not st.ready:
        if s.wait:
            raise WaitTimeout(f"timed out after {s.timeout:g}s: {st.not_ready_line()}")
        raise TrainerctlError(st.not_ready_line(), EXIT_FAILED)


@command("check")
@takes(*CLUSTER, *SOURCE, *RENDER, *REGISTRY, "namespace", "filename", "output", "prune", "field_manager",
       "allow_breaking", "check_images", "job_namespace")
def check_cmd(s: Settings) -> None:
    """Run every check install makes, applying nothing.

    Every check install makes before applying, all listed: the lock, the cluster, versions, JobSet,
    the Go operator, Helm, permissions, the upgrade check, with --images the images, with
    --job-namespace whether that namespace admits each runtime's pods; exit 0 when install may go
    ahead, else install's code for its first refusal (3; 4 for a held lock)."""
    from trainerctl.cli.options import image_check, install_options, read_first, session, target
    from trainerctl.cli.output import check_output, emit
    from trainerctl.cluster.check import Check

    output = check_output(s.output)
    images = image_check(s, "check")
    given = read_first(s)
    on = session(s)
    goal = target(on, s, given)
    report = Check(install_options(s, image_check=images), s.job_namespace).run(
        session(s, on.cluster, namespace=goal.namespace, owner_label=goal.owner_label), goal.objects, goal.source)
    emit(report, output)
    if report.failed:
        first = report.failed[0]
        # install's exit code for its first refusal (3; 4 for a held lock)
        raise TrainerctlError(f"{len(report.failed)} check(s) failed, first: {first.check}: {first.message}",
                              first.exit_code)


@command("support-bundle")
@takes(*CLUSTER, "namespace", "owner_label", "output_file")
def support_bundle_cmd(s: Settings) -> None:
    """Write one .tar.gz of diagnostics for a support ticket.

    Write one .tar.gz for a support ticket: versions, source and inventory, status and diagnosis,
    our objects (no Secret values), events, controller logs, CRD versions, workload counts, nodes."""
    from trainerctl import ui
    from trainerctl.cli.options import session
    from trainerctl.cli.output import verbatim
    from trainerctl.cluster.status import Status
    from trainerctl.cluster.support_bundle import SupportBundle

    written = SupportBundle(Status(), s.output_file).run(session(s))
    ui.info(written.line())
    verbatim(written.path + "\n")
