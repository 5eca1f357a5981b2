"""A command's Settings, built once: its flags over trainerctl.yaml over the environment over the
defaults, each value checked where it came from, and what follows from several of them derived.

Every value the settings file holds is checked, even one a flag overrides: a bad file is an
error whichever command reads it.
"""

from __future__ import annotations

import os
from types import MappingProxyType
from typing import Any, Mapping

from trainerctl.errors import InputError
from trainerctl.settings import Settings, checks
from trainerctl.settings.config_file import Config, load_config
from trainerctl.settings.spec import Setting, specs


def build(given: Mapping[str, Any], *, defaults: Mapping[str, Any] | None = None, files: bool = True,
          env: Mapping[str, str] | None = None, command: str | None = None) -> Settings:
    """`given`: field -> value of each flag the command line gave (typer's values: a negated
    flag is True when given). `defaults`: a command's own default for a field (status does not
    --wait). `files`: read trainerctl.yaml and the environment (kustomize, a drop-in for kubectl's,
    reads neither). `command`: whose flags were given (origins name a flag as it spells it)."""
    env = os.environ if env is None else env
    if given.get("config") is not None:
        checks.text(given["config"], "--config")
    config = load_config(given.get("config")) if files else Config()
    values: dict[str, Any] = {}
    origins: dict[str, str] = {}
    command_line = set(given)
    for name, how in specs(Settings):
        found = _candidates(name, how, given, config, env if files else {}, command)
        if how.merge:
            merged: dict = {}
            for value, where in found:  # the file's entries first, the flag's over them
                entries = how.check(value, where)
                merged.update(entries)
                origins.update({f"{name}.{key}": f"{where} {key}" for key in entries})
                origins[name] = where
                if where == how.flag_in(command):  # an entry a flag set: a later layer (the render's) keeps it
                    command_line.update(f"{name}.{key}" for key in entries)
            if merged:
                values[name] = MappingProxyType(merged)
            continue
        for value, where in found:  # lowest precedence first; the last one wins
            value = how.check(value, where) if how.check else value
            values[name] = tuple(value) if isinstance(value, list) else value  # Settings holds no list
            origins[name] = where
        if values.get(name) is None:  # a check said "nothing given" (e.g. `source:` with only a ref)
            values.pop(name, None)
            origins.pop(name, None)
        if name not in values and defaults and name in defaults:
            values[name] = defaults[name]
    if config.path is not None:
        values["config"] = str(config.path)
    _derive(values, origins, command_line)
    return Settings(**values, origins=MappingProxyType(origins), command_line=frozenset(command_line))


def _candidates(name: str, how: Setting, given: Mapping[str, Any], config: Config,
                env: Mapping[str, str], command: str | None = None) -> list[tuple[Any, str]]:
    """(value, where) from the file and the flag that set `name`, in that order, else from the
    environment (a variable is only read when nothing above it is given)."""
    found = []
    if how.key and config.get(how.key) is not None:
        found.append((config.get(how.key), config.where(how.key)))
    if name in given:
        value = given[name]
        found.append((not value if how.negate else value, how.flag_in(command)))
    if not found and how.env and env.get(how.env):
        found.append((env[how.env], how.env))
    return found


# Settings that contradict each other when both are on, whoever set them (flag, file or
# environment): one line naming both, exit 2, never one silently winning.
CONFLICTS: tuple[tuple[str, str, str], ...] = (
    ("offline", "refresh", "--offline never asks the git remote, --refresh always does"),
)


def _refuse_conflicts(values: Mapping[str, Any], origins: Mapping[str, str]) -> None:
    for first, second, why in CONFLICTS:
        if values.get(first) and values.get(second) and first in origins and second in origins:
            raise InputError(f"{origins[first]} and {origins[second]}: choose one ({why})")


def _derive(values: dict[str, Any], origins: dict[str, str], command_line: set[str]) -> None:
    """What follows from several settings, decided once, before anything uses them."""
    _refuse_conflicts(values, origins)
    if "channel" in values and ("source" in values or "ref" in values):
        if "channel" in command_line:
            given = [name for name in ("source", "ref") if name in command_line]
            if given:
                raise InputError(f"{origins['channel']} {values['channel']} and {origins[given[0]]}: choose one "
                                 "(a channel is a pinned source)")
            dropped = ("source", "ref")  # the file's source was the file's choice; the flag's channel wins
        else:
            dropped = ("channel",)  # the file's channel; --source or --ref chose another source
        for name in dropped:
            values.pop(name, None)
            origins.pop(name, None)
    source = values.get("source")
    if source is not None and source.path is not None and "ref" in values:
        if "ref" in command_line:
            raise InputError(f"{origins['ref']} {values['ref']}: a local checkout ({origins['source']} "
                             f"{source.path}) has no ref to choose")
        del values["ref"], origins["ref"]  # the file's ref was for the file's git source
    if values.get("update_lock"):
        if "use_lock" in command_line:
            raise InputError("--update-lock and --no-lock: choose one")
        values["use_lock"] = False  # the lock is being replaced, not checked
        origins["use_lock"] = origins["update_lock"]
