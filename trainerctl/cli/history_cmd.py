"""`history` and `rollback`: the install history and the way back (the command bodies import
what they run: see cluster_cmd)."""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from trainerctl.cli import command
from trainerctl.cli.flags import CLUSTER, takes
from trainerctl.settings import Settings


@command("history")
@takes(*CLUSTER, "namespace", "output")
def history_cmd(s: Settings) -> None:
    """List the install history's revisions.

    The install history: each revision an install or rollback recorded, who made it, from which
    source; -o json for everything each record holds."""
    from trainerctl import ui
    from trainerctl.cli.output import check_output, emit
    from trainerctl.cluster.client.client import connect
    from trainerctl.cluster.history import read_history

    output = check_output(s.output)
    found = read_history(connect(s.kubeconfig, s.context), s.namespace)
    for line in found.unreadable:
        ui.warn(f"{line} (left out)")
    emit(found, output)


@command("rollback")
@takes(*CLUSTER, "namespace", "channel", "source", "ref", "remote_mirrors", "owner_label", "cache_dir", "offline", "dry_run",
       "wait", "timeout", "output", "force_conflicts", "prune", "recreate", "skip_preflight", "allow_breaking",
       "field_manager", "lock_timeout", "history_max", "verify", "verbose", defaults={"verify": True})
def rollback_cmd(s: Settings, revision: Annotated[Optional[int], typer.Argument(
        metavar="REVISION", help="The revision to install again (default: the one before the newest).",
        show_default=False)] = None) -> None:
    """Install a recorded revision again.

    The revision is rendered again (from the cache, the embedded copy or a fetch of its source,
    refused when its tree digest changed) and installed through the same staged install and lock;
    recorded as a new revision, then verified (verify's default tiers; --no-verify skips them). A
    source trainerctl does not pin (a local checkout, another git URL) is rendered only from
    --source (or --channel), and a recorded remote mirror only through --remote-mirror. --dry-run
    shows the diff and the plan."""
    from trainerctl.cli.options import install_options, session
    from trainerctl.cli.output import check_output, emit, run_failed
    from trainerctl.cli.verify_cmd import verify_after
    from trainerctl.cluster import rollback
    from trainerctl.cluster.client.client import connect
    from trainerctl.cluster.install import RunFailed, source_dict
    from trainerctl.cluster.operations.history import MAX_REVISION
    from trainerctl.errors import InputError
    from trainerctl.render.pipeline import render
    from trainerctl.render.recipe import Named, options_from
    from trainerctl.source import pins
    from trainerctl.upgrade import guard

    output = check_output(s.output)
    if revision is not None and not 1 <= revision <= MAX_REVISION:
        raise InputError(f"REVISION {revision}: expected a revision number 1..{MAX_REVISION}")
    api = connect(s.kubeconfig, s.context)
    back = rollback.choose(api, s.namespace, revision)
    given = s.command_line  # a source named for this rollback, not trainerctl.yaml's (that is install's)
    chosen = pins.channel(s.channel) if "channel" in given else None  # a channel names a pinned source
    named = Named(source_url=chosen.url if chosen else s.source_url if "source" in given else None,
                  source_path=s.source_path if "source" in given else None,
                  ref=chosen.ref if chosen else s.ref if "ref" in given else None,
                  remote_mirrors=tuple(s.remote_mirrors), owner_label=s.owner_label)
    rendered = render(options_from(back.target.source, back.target.render, what=back.what, namespace=s.namespace,
                                   named=named, cache_dir=s.cache_dir, offline=s.offline))
    source = source_dict(rendered.source)
    rollback.check_render(back, source)
    where = dict(namespace=rendered.namespace, owner_label=rendered.owner_label)
    if s.dry_run:  # shown before the install's progress starts
        _show_diff(session(s, api, **where), rendered.objects, output)
    on = session(s, api, **where, progress_of=len(rendered.objects))
    action = install_options(s, recipe=back.target.render, rollback_to=back.target.revision,
                             upgrade_guard=rollback.guard(guard, back, s.allow_breaking))
    try:
        report = action.run(on, rendered.objects, source)
    except RunFailed as exc:
        run_failed(exc, output, on.progress)
        raise
    emit(report, output, on.progress)
    verify_after(api, s, rendered.namespace, on.progress)


def _show_diff(on, objects: list[dict], output: str) -> None:
    """--dry-run: the unified diff of what the rollback changes, before the plan (on stderr when
    stdout is for -o json or yaml), over the session the rollback runs over."""
    import sys

    from trainerctl.cli.output import show
    from trainerctl.cluster.diff import Diff

    result = Diff().run(on, objects)
    show(result.text() or "diff: no changes\n", sys.stdout if output == "text" else sys.stderr)
