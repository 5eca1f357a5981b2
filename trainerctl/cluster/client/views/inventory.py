"""The view of an install's inventory: the ApplySet-style parent ConfigMap the resource manager
writes (manager/inventory_configmap.py says what it means). It lives on the server, which may answer
anything, so it is read like any other object: every field by its type, the JSON inside its data
within the limits of trust/limits.py."""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

from trainerctl.cluster.client.views.field_types import Cursor, Unreadable
from trainerctl.cluster.client.views.meta import Meta
from trainerctl.trust.server_payloads import Undecodable, load_json


@dataclass
class Entry:
    """One member: how to reach it, its stage, and what proves a re-apply would change nothing."""

    api_version: str
    resource: str
    namespaced: bool
    stage: str
    hash: str = ""
    rv: str = ""
    fields: str = ""  # a digest of the fields our apply owned; "" when unknown (older inventories)


_ENTRY_TYPES = {f.name: (bool if f.type == "bool" else str) for f in fields(Entry)}
_REQUIRED = ("api_version", "resource", "namespaced", "stage")
# What the recorded source holds, by type (a newer trainerctl may record more: kept as it is).
_SOURCE_STRINGS = ("url", "ref", "commit", "digest", "overlay", "trainer_version", "path", "file", "channel")


@dataclass(frozen=True)
class InventoryRecord:
    meta: Meta
    source: dict = field(default_factory=dict)
    entries: dict[str, Entry] = field(default_factory=dict)  # Ref key (group/kind/namespace/name) -> Entry
    complete: bool = True

    @classmethod
    def read(cls, raw: Any) -> "InventoryRecord":
        obj = Cursor.of("ConfigMap", raw)
        meta = Meta.read(obj)
        data = obj.mapping("data")
        entries = read_entries(obj, data)
        complete = data.string("complete", "true")
        if complete not in ("true", "false"):
            raise data.fail("complete", "true or false", complete)
        return cls(meta, read_source(obj, data), entries, complete == "true")


def read_entries(obj: Cursor, data: Cursor) -> dict[str, Entry]:
    """The members listed in data.objects (a JSON object: Ref key -> entry), each field by its
    type: the inventory and each history record list them alike."""
    objects = json_object(data, "objects")
    entries = {}
    for key, value in objects.items():
        where = f"{data.where('objects')}[{key[:100]!r}]"
        if key.count("/") < 3:
            raise Unreadable(obj.kind, obj.name, where, "a group/kind/namespace/name key")
        if not isinstance(value, dict):
            raise Unreadable(obj.kind, obj.name, where, "an inventory entry (a mapping)", value)
        entry = Cursor(obj.kind, obj.name, value, where)
        for name in value:
            if name not in _ENTRY_TYPES:
                raise entry.fail(name, f"one of the entry fields {', '.join(_ENTRY_TYPES)}")
        for name in _REQUIRED:
            if value.get(name) is None:
                raise entry.fail(name, "true or false" if _ENTRY_TYPES[name] is bool else "a non-empty string")
        entries[key] = Entry(**{name: entry.boolean(name) if kind is bool else
                                entry.string(name, required=name in _REQUIRED)
                                for name, kind in _ENTRY_TYPES.items()})
    return entries


def read_source(obj: Cursor, data: Cursor) -> dict:
    """The recorded source (data.source, a JSON object), each known field by its type."""
    return _source(Cursor(obj.kind, obj.name, json_object(data, "source"), f"{data.where('source')}"))


def json_object(data: Cursor, key: str) -> dict:
    text = data.string(key, "{}") or "{}"
    try:
        value = load_json(text)
    except Undecodable as exc:
        raise data.fail(key, f"a JSON object ({exc})") from None
    if not isinstance(value, dict):
        raise data.fail(key, "a JSON object", value)
    return value


def _source(source: Cursor) -> dict:
    for key in _SOURCE_STRINGS:
        source.string(key)
    for release in source.mappings("releases"):
        for key in ("name", "version", "repoUrl"):
            release.string(key)
    source.string_map("images")
    return source.data
