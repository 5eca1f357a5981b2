"""trainerctl.yaml: the settings a pipeline would otherwise pass as flags.

Its fields are the `key`s of Settings' fields (trainerctl.settings): unknown fields and values of
the wrong type are errors here, so a typo never silently falls back to a default; each value is
then checked by its setting's check as the settings are built, naming this file and field.
"""

from __future__ import annotations

import os
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from trainerctl.errors import InputError
from trainerctl.settings import CONFIG_FILE, Settings
from trainerctl.settings.spec import specs
from trainerctl.trust.bounded_read import read_text, shown_path
from trainerctl.trust.document_bounds import load_yaml
from trainerctl.trust.safe_text import field_name

_SOURCE_FIELDS = ("url", "ref", "path")  # the `source:` block: a git URL and its ref, or a local checkout
# top-level field -> what it holds, from the settings that have a key (`source.ref` lives in `source`)
SECTIONS: dict[str, Any] = {how.key: how.file_type for _, how in specs(Settings) if how.key and "." not in how.key}
_NAMES = {str: "a string", float: "a number", bool: "true or false", list: "a list", dict: "a mapping"}


@dataclass(frozen=True)
class Config:
    """trainerctl.yaml as read (`--config`), and where it was read from."""

    path: Path | None = None
    data: dict[str, Any] = field(default_factory=dict)

    def get(self, key: str) -> Any:
        """The value at `key` (`source.ref`: ref in the source block), None when absent."""
        value: Any = self.data
        for part in key.split("."):
            value = value.get(part) if isinstance(value, dict) else None
        return value

    def where(self, key: str) -> str:
        return f"{shown_path(str(self.path or CONFIG_FILE))}: {key}:"


def _check_type(value: Any, kind: Any, key: str, where: str) -> None:
    """`value` is of `kind`: str, float (any number but a bool), bool, list[str], dict[str, str] or dict."""
    outer, args = typing.get_origin(kind) or kind, typing.get_args(kind)
    numeric = outer is float and isinstance(value, (int, float)) and not isinstance(value, bool)
    if not (numeric or (outer is not float and isinstance(value, outer))):
        raise InputError(f"{where}: {key}: expected {_NAMES[outer]}")
    if outer is list and args and not all(isinstance(item, args[0]) for item in value):
        raise InputError(f"{where}: {key}: expected a list of strings")
    if outer is dict and args:
        for k, v in value.items():
            if not isinstance(k, args[0]) or not isinstance(v, args[1]):
                raise InputError(f"{where}: {key}.{field_name(k)}: expected KEY: image-reference strings")


def parse_config(text: str, where: str) -> Config:
    # load_yaml never quotes the file in its errors, and field_name below never echoes a key
    # that is not a plausible field name: `--config /etc/shadow` must not print its first line.
    data = load_yaml(text, where)
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise InputError(f"{where}: expected a mapping of settings")
    for key, value in data.items():
        if key not in SECTIONS:
            raise InputError(f"{where}: {field_name(key)}: unknown field (known: {', '.join(SECTIONS)})")
        _check_type(value, SECTIONS[key], key, where)
    for key, value in (data.get("source") or {}).items():
        if key not in _SOURCE_FIELDS:
            raise InputError(f"{where}: source.{field_name(key)}: unknown field (known: {', '.join(_SOURCE_FIELDS)})")
        if not isinstance(value, str):
            raise InputError(f"{where}: source.{key}: expected a string")
    source = data.get("source") or {}
    if "url" in source and "path" in source:
        raise InputError(f"{where}: source: give either url (with ref) or path, not both")
    if "path" in source and "ref" in source:
        raise InputError(f"{where}: source.ref: a local checkout (source.path) has no ref to choose")
    if "channel" in data and source:
        raise InputError(f"{where}: channel: a channel is a pinned source: give either channel or source, not both")
    return Config(None, data)


def load_config(path: str | Path | None) -> Config:
    """The given file (which must exist), else ./trainerctl.yaml when present, else empty."""
    if path is None:
        candidate = Path(CONFIG_FILE)
        if not os.path.lexists(candidate):  # there but not a file (a FIFO, a loop): said by the reader
            return Config()
        path = candidate
    path = Path(path)
    text = read_text(str(path), f"--config {shown_path(str(path))}", "config", expected="YAML settings")
    return Config(path, parse_config(text, shown_path(str(path))).data)
