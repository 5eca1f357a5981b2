"""The view of one install-history record: a ConfigMap per revision that operations/install_history.py
writes after each install or rollback. It lives on the server, where anyone allowed to edit a
ConfigMap in the namespace can change or truncate it, so every field is read by its type and a
record that does not fit is one `unreadable ConfigMap ...` line naming the field."""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass, field
from typing import Any

from trainerctl.cluster.client.views.field_types import INT32, Cursor
from trainerctl.cluster.client.views.inventory import Entry, json_object, read_entries, read_source
from trainerctl.cluster.client.views.meta import Meta

ACTIONS = ("install", "rollback")
# How a render was asked for, by the type each field holds (a rollback renders it again).
_RENDER_STRINGS = ("overlay", "platform", "ownerLabel", "namespace", "requireRegistry")
_RENDER_LISTS = ("components", "remoteMirrors", "set")
_RENDER_BOOLS = ("requireDigests", "ha")
_RENDER_FIELDS = (*_RENDER_STRINGS, *_RENDER_LISTS, *_RENDER_BOOLS, "images", "manager")


@dataclass(frozen=True)
class HistoryRecord:
    meta: Meta
    revision: int
    time: _dt.datetime
    who: str
    version: str  # trainerctl's
    action: str  # install or rollback
    description: str = ""
    rollback_to: int | None = None  # the revision a rollback rendered again
    source: dict = field(default_factory=dict)
    render: dict = field(default_factory=dict)  # how the render was asked for; {} for -f FILE
    entries: dict[str, Entry] = field(default_factory=dict)
    object_count: int = 0  # the inventory's size, also when its entries were left out (too large)

    @classmethod
    def read(cls, raw: Any) -> "HistoryRecord":
        obj = Cursor.of("ConfigMap", raw)
        meta = Meta.read(obj)
        data = obj.mapping("data")
        revision = _number(data, "revision", 1, required=True)
        if not meta.name.endswith(f".v{revision}"):
            raise obj.mapping("metadata").fail("name", f"a name ending in .v{revision} (the revision in "
                                                       f"{data.where('revision')})", meta.name)
        when = data.time("time")
        if when is None:
            raise data.fail("time", "an RFC 3339 time with a zone (e.g. 2026-08-21T09:40:12Z)")
        action = data.string("action", required=True)
        if action not in ACTIONS:
            raise data.fail("action", f"one of {', '.join(ACTIONS)}", action)
        rollback_to = _number(data, "rollbackTo", 1) if action == "rollback" else None
        entries = read_entries(obj, data)
        count = _number(data, "objectCount", 0)
        return cls(meta, revision, when, data.string("who"), data.string("version", required=True), action,
                   data.string("description"), rollback_to, read_source(obj, data), _render(obj, data), entries,
                   len(entries) if count is None else count)


def _number(data: Cursor, key: str, low: int, *, required: bool = False) -> int | None:
    """A whole number written as a string (ConfigMap data holds strings only)."""
    text = data.string(key, required=required, expected=f"a whole number {low}..{INT32}")
    if not text:
        return None
    if not text.isascii() or not text.isdigit() or len(text) > 10 or not low <= int(text) <= INT32:
        raise data.fail(key, f"a whole number {low}..{INT32}", text)
    return int(text)


def _render(obj: Cursor, data: Cursor) -> dict:
    render = Cursor(obj.kind, obj.name, json_object(data, "render"), data.where("render"))
    for key in render.data:
        if key not in _RENDER_FIELDS:
            raise render.fail(key, f"one of the recorded render fields {', '.join(_RENDER_FIELDS)}")
    for key in _RENDER_STRINGS:
        render.string(key)
    for key in _RENDER_LISTS:
        render.strings(key)
    for key in _RENDER_BOOLS:
        render.boolean(key)
    render.string_map("images")
    render.mapping("manager")
    return render.data
