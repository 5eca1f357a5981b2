"""How one setting is given: its flag (and the help that explains it, per command where it
differs), its trainerctl.yaml key, its environment variable, its default and its check.

Every field of `Settings` carries one `Setting` in its dataclass metadata; the command line's
flags (trainerctl.cli.flags), the settings file's known fields (config_file.py) and the build
(build.py) are all read from there, so a setting is defined in one place.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable, Iterator, Mapping, NamedTuple

# Help panels keep long help pages readable: what to render, where the cluster is, how to run.
RENDER_PANEL = "Render"
CLUSTER_PANEL = "Cluster"
REGISTRY_PANEL = "Registry"
# `complete=` for values found at completion time (trainerctl.cli.flags finds them): the context
# names of the kubeconfig in use, the registries with credentials, the command's output formats,
# the release channels.
KUBECONFIG_CONTEXTS = "kubeconfig contexts"
REGISTRY_HOSTS = "registry hosts"
OUTPUT_FORMATS = "output formats"
CHANNELS = "channels"

_METADATA = "trainerctl.setting"


class Setting(NamedTuple):  # a NamedTuple, not a dataclass: 47 of them are made at every start-up
    flags: tuple[str, ...] = ()  # ("-n", "--namespace"), or ("--wait/--no-wait",) for a pair; () for none
    help: str = ""  # a sentence; defaults in parentheses
    # command -> its own help, where what the flag does or defaults to differs there (`help` for the rest)
    help_in: Mapping[str, str] | None = None
    metavar: str | None = None  # the value's name in help (every value flag has one)
    panel: str | None = None  # RENDER_PANEL, CLUSTER_PANEL, or the plain options
    complete: tuple[str, ...] | str = ()  # values shell completion offers, or where to find them
    takes: type = str  # what the flag takes: str, bool, float, or list (repeatable)
    negate: bool = False  # a bool flag that turns the setting off (--no-prune: prune is False)
    key: str | None = None  # trainerctl.yaml field; "source.ref" is `ref` under `source`
    file_type: Any = str  # what the file holds there: str, float, bool, list[str], dict[str, str] or dict
    env: str | None = None  # environment variable, below the file
    check: Callable[[Any, str], Any] | None = None  # (value as given, where it came from) -> value
    merge: bool = False  # a mapping: the flag's entries over the file's, each with its own origin
    renders: bool = False  # it chooses the render: refused next to -f FILE, which is rendered already

    def help_for(self, command: str | None) -> str:
        """The help a command shows: its own text, else the one every other command shares."""
        return self.help_in.get(command, self.help) if self.help_in and command else self.help

    @property
    def flag(self) -> str:
        """How messages name the flag: its long form (`--namespace`, `--wait`)."""
        names = [n.split("/")[0] for n in self.flags]
        return next((n for n in names if n.startswith("--")), names[0] if names else "")


def setting(default: Any = None, **how: Any) -> Any:
    """A field of Settings: its default (immutable: Settings is frozen and shared) and how it is given."""
    metadata = {_METADATA: Setting(**how)}
    if getattr(type(default), "__hash__", None) is None:  # a read-only mapping: dataclasses asks for a factory
        return dataclasses.field(default_factory=lambda: default, metadata=metadata)
    return dataclasses.field(default=default, metadata=metadata)


def spec(f: dataclasses.Field) -> Setting | None:
    return f.metadata.get(_METADATA)


def specs(cls: type) -> Iterator[tuple[str, Setting]]:
    """(field name, Setting) of every field of `cls` that is a setting, in declaration order."""
    for f in dataclasses.fields(cls):
        how = spec(f)
        if how is not None:
            yield f.name, how
