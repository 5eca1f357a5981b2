"""trainerctl.yaml: the settings a pipeline would otherwise pass as flags.

Flags win over the file; the file wins over built-in defaults. Unknown fields and values of the
wrong type are errors here, so a typo never silently falls back to a default; values with a
vocabulary or syntax are checked as RenderOptions are made (trainerctl.render.settings).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from trainerctl.bounded_read import load_yaml, read_text, shown_path
from trainerctl.errors import InputError
from trainerctl.safe_text import field_name

DEFAULT_CONFIG_FILE = "trainerctl.yaml"

# top-level field -> expected type(s); nested blocks are checked below or by their owners.
SECTIONS: dict[str, tuple[type, ...]] = {
    "source": (dict,),
    "overlay": (str,),
    "namespace": (str,),
    "platform": (str,),
    "components": (list,),
    "images": (dict,),
    "ownerLabel": (str,),
    "requireRegistry": (str,),
    "requireDigests": (bool,),
    "cacheDir": (str,),
    "remoteMirrors": (list,),
    "manager": (dict,),
}
_SOURCE_FIELDS = ("url", "ref", "path")


@dataclass
class Config:
    """trainerctl.yaml as read (`--config`), and where it was read from."""

    path: Path | None = None
    data: dict[str, Any] = field(default_factory=dict)

    def get(self, key: str, default: Any = None) -> Any:
        return self.data.get(key, default)

    def source(self, key: str) -> str | None:
        return (self.data.get("source") or {}).get(key)


def _type_names(types: tuple[type, ...]) -> str:
    return " or ".join({dict: "a mapping", list: "a list", str: "a string", bool: "true or false"}.get(t, t.__name__)
                       for t in types)


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
        if not isinstance(value, SECTIONS[key]):
            raise InputError(f"{where}: {key}: expected {_type_names(SECTIONS[key])}")
    for key, value in (data.get("source") or {}).items():
        if key not in _SOURCE_FIELDS:
            raise InputError(f"{where}: source.{field_name(key)}: unknown field (known: {', '.join(_SOURCE_FIELDS)})")
        if not isinstance(value, str):
            raise InputError(f"{where}: source.{key}: expected a string")
    for key, value in (data.get("images") or {}).items():
        if not isinstance(key, str) or not isinstance(value, str):
            raise InputError(f"{where}: images.{field_name(key)}: expected KEY: image-reference strings")
    for key in ("components", "remoteMirrors"):
        for item in data.get(key) or []:
            if not isinstance(item, str):
                raise InputError(f"{where}: {key}: expected a list of strings")
    _check_structure(data, where)
    return Config(None, data)


def _check_structure(data: dict, where: str) -> None:
    """What only the file can get wrong; values are checked where they are used
    (RenderOptions, as they are made), naming this file and field."""
    source = data.get("source") or {}
    if "url" in source and "path" in source:
        raise InputError(f"{where}: source: give either url (with ref) or path, not both")
    if "path" in source and "ref" in source:
        raise InputError(f"{where}: source.ref: a local checkout (source.path) has no ref to choose")
    for key in ("overlay", "cacheDir"):
        if key in data and not data[key].strip():
            raise InputError(f"{where}: {key}: expected a non-empty string")


def load_config(path: str | Path | None) -> Config:
    """The given file (which must exist), else ./trainerctl.yaml when present, else empty."""
    if path is None:
        candidate = Path(DEFAULT_CONFIG_FILE)
        if not os.path.lexists(candidate):  # there but not a file (a FIFO, a loop): said by the reader
            return Config()
        path = candidate
    path = Path(path)
    text = read_text(str(path), f"--config {shown_path(str(path))}", "config", expected="YAML settings")
    config = parse_config(text, shown_path(str(path)))
    config.path = path
    return config
