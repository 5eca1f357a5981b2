"""`trainerctl channels`: the release channels --channel chooses from (command bodies import what
they run: see cluster_cmd)."""

from __future__ import annotations

from trainerctl.cli import command
from trainerctl.cli.flags import takes
from trainerctl.settings import Settings


@command("channels")
@takes("output")
def channels_cmd(s: Settings) -> None:
    """List the release channels: pinned Trainer releases.

    Each a named, pinned Trainer release: its repository, tag or branch and commit, tree digest,
    Trainer version, date and controller image; * marks the default, which the wheel carries. -o json or yaml for every field."""
    from trainerctl.cli.output import check_output, emit
    from trainerctl.source.channel_table import ChannelList

    emit(ChannelList.pinned(), check_output(s.output))
