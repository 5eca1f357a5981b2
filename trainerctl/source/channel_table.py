"""The release channels as `trainerctl channels` shows them: a table, or JSON and YAML with every
field pins.yaml records."""

from __future__ import annotations

from dataclasses import dataclass

from trainerctl.source.pins import Channel, channels, default_channel
from trainerctl.trust.serialize import Reported

_COLUMNS = ("CHANNEL", "TRAINER", "DATE", "SOURCE", "COMMIT", "CONTROLLER")


@dataclass(frozen=True)
class ChannelList(Reported):
    default: str
    channels: tuple[Channel, ...]

    @classmethod
    def pinned(cls) -> "ChannelList":
        return cls(default_channel().name, tuple(channels().values()))

    def to_dict(self) -> dict:
        return {"default": self.default,
                "channels": [{**c.to_dict(), "default": c.name == self.default} for c in self.channels]}



    def text(self) -> str:
        rows = [_COLUMNS] + [(c.name + ("*" if c.name == self.default else ""), c.trainer, c.date or "-",
                              f"{c.url} {c.tag or c.branch or ''}".rstrip(), c.commit[:12], c.image)
                             for c in self.channels]
        widths = [max(len(row[i]) for row in rows) for i in range(len(_COLUMNS) - 1)]
        table = "".join("  ".join([*(v.ljust(w) for v, w in zip(row, widths)), row[-1]]).rstrip() + "\n" for row in rows)
        return table + "* the default: what render, install and the other commands use without --channel or --source\n"
