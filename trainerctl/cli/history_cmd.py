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
    from trainerctl.cli.options import session
    from trainerctl.cli.output import check_output, emit
    from trainerctl.cluster.history import History

    output = check_output(s.output)
    found = History().run(session(s))
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
    from trainerctl.cli.options import rollback_action, session
    from trainerctl.cli.output import check_output, report_install
    from trainerctl.cli.verify_cmd import verify_after

    output = check_output(s.output)
    action = rollback_action(s, revision, lambda diff: _show_diff(diff, output))  # REVISION checked first
    on = session(s, progress_of=0)  # the install tells it its objects' count
    report_install(lambda: action.run(on), output, on.progress, verify_after(s, on))


def _show_diff(result, output: str) -> None:
    """--dry-run: the unified diff of what the rollback changes, before the plan (on stderr when
    stdout is for -o json or yaml)."""
    import sys

    from trainerctl.cli.output import show

    show(result.text() or "diff: no changes\n", sys.stdout if output == "text" else sys.stderr)
