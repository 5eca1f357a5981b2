"""`history` and `rollback`: the install history and the way back (the command bodies import
what they run: see cluster_cmd)."""

from __future__ import annotations


from trainerctl.cli import command
from trainerctl.cli.flags import CLUSTER, takes
from trainerctl.settings import Settings


@command("history")
@takes(*CLUSTER, "namespace", "output")
def history_cmd(s: Settings) -> None:
    """The install history: each revision an install or rollback recorded, who made it, from which
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
