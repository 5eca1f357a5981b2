"""Field specs: which field paths of which kinds a transformer touches, and how to walk them.

The built-in specs are data (data/fieldspecs.json), as in kustomize's builtinpluginconsts; a
kustomization's `configurations` files add to them.
"""

from __future__ import annotations

import functools
import json
import os

from trainerctl.kustomize.errors import KustomizeError
from trainerctl.kustomize.resid import Gvk

TYPE_CHECKING = False  # typing costs a tenth of a kustomize run's start-up
if TYPE_CHECKING:
    from typing import Any, Callable, Iterator

DATA = os.path.join(os.path.dirname(__file__), "data")

SCALAR, MAPPING, SEQUENCE = "scalar", "mapping", "sequence"


def split_path(path: str) -> tuple[str, ...]:
    """kustomize's PathSlice: '/' separates fields, '\\/' is a literal slash."""
    if "\\" not in path:
        return tuple(path.split("/"))
    parts: list[str] = []
    current = ""
    i = 0
    while i < len(path):
        ch = path[i]
        if ch == "\\" and i + 1 < len(path) and path[i + 1] == "/":
            current += "/"
            i += 2
            continue
        if ch == "/":
            parts.append(current)
            current = ""
        else:
            current += ch
        i += 1
    parts.append(current)
    return tuple(parts)


class FieldSpec:
    """Which field (a path of keys) of which kinds a transformer touches (immutable)."""

    __slots__ = ("path", "group", "version", "kind", "create")

    def __init__(self, path: tuple[str, ...], group: str = "", version: str = "", kind: str = "",
                 create: bool = False):
        self.path, self.group, self.version, self.kind, self.create = path, group, version, kind, create

    def _key(self) -> tuple:
        return (self.path, self.group, self.version, self.kind, self.create)

    def __eq__(self, other: object) -> bool:
        return other.__class__ is FieldSpec and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return (f"FieldSpec(path={self.path!r}, group={self.group!r}, version={self.version!r}, "
                f"kind={self.kind!r}, create={self.create!r})")

    @classmethod
    def parse(cls, raw: Any, source: str) -> "FieldSpec":
        if not isinstance(raw, dict) or not isinstance(raw.get("path"), str):
            raise KustomizeError(f"{source}: field spec needs a `path` string, got {raw!r}")
        unknown = set(raw) - {"path", "group", "version", "kind", "create", "behavior"}
        if unknown:
            raise KustomizeError(f"{source}: unknown field spec field(s) {sorted(unknown)}")
        return cls(
            split_path(raw["path"]),
            raw.get("group") or "",
            raw.get("version") or "",
            raw.get("kind") or "",
            bool(raw.get("create", False)),
        )

    @classmethod
    def from_config(cls, raw: dict, source: str) -> "FieldSpec":
        """A spec already read by schema.FIELD_SPEC (a plugin config or configurations file)."""
        return cls(split_path(raw.get("path", "")), raw.get("group", ""), raw.get("version", ""),
                   raw.get("kind", ""), bool(raw.get("create")))

    def as_config(self) -> dict:
        out = {"path": self.path_string}
        out.update({k: v for k, v in (("group", self.group), ("version", self.version),
                                      ("kind", self.kind)) if v})
        if self.create:
            out["create"] = True
        return out

    def selected_by(self, other: "FieldSpec") -> bool:
        """kyaml's Gvk.IsSelected: `other`'s non-empty kind/group/version equal ours."""
        return ((not other.group or other.group == self.group)
                and (not other.version or other.version == self.version)
                and (not other.kind or other.kind == self.kind))

    def applies_to(self, gvk: Gvk) -> bool:
        return gvk.selected_by(self.group, self.version, self.kind)

    @property
    def path_string(self) -> str:
        return "/".join(p.replace("/", "\\/") for p in self.path)


def walk(
    obj: Any, spec: FieldSpec, leaf_kind: str, visit: Callable[[dict, str], None]
) -> None:
    """Call `visit(parent, key)` for every field `spec.path` reaches in `obj`.

    Sequences met on the way are entered element by element. With `spec.create`, missing
    fields are created: mappings on the way and a `leaf_kind` value at the end (scalar leaves
    are created empty for the visitor to fill).
    """
    _walk(obj, spec.path, spec.create, leaf_kind, visit, spec)


def _walk(node, path, create, leaf_kind, visit, spec) -> None:
    if node is None:
        return
    if isinstance(node, list):
        for item in node:
            _walk(item, path, create, leaf_kind, visit, spec)
        return
    if not isinstance(node, dict):
        raise KustomizeError(
            f"field spec {spec.path_string}: expected a mapping or sequence before "
            f"{'/'.join(path)!r}, found {type(node).__name__}"
        )
    name = path[0]
    is_seq = name.endswith("[]")
    if is_seq:
        name = name[:-2]
    if not name:
        raise KustomizeError(f"field spec {spec.path_string}: empty field name")
    last = len(path) == 1
    if name not in node:
        if not create or is_seq:
            return
        if last:
            node[name] = {} if leaf_kind == MAPPING else [] if leaf_kind == SEQUENCE else None
        else:
            node[name] = {}
    elif node[name] is None and create and not last:
        node[name] = {}
    elif node[name] is None and create and last and leaf_kind == MAPPING:
        node[name] = {}
    if last:
        visit(node, name)
    else:
        _walk(node[name], path[1:], create, leaf_kind, visit, spec)


def field_values(obj: Any, spec: FieldSpec) -> Iterator[tuple[dict, str]]:
    """(parent, key) pairs for every existing field `spec.path` reaches."""
    found: list[tuple[dict, str]] = []
    _walk(obj, spec.path, False, SCALAR, lambda parent, key: found.append((parent, key)), spec)
    return iter(found)


@functools.lru_cache(maxsize=1)
def _builtin_raw() -> dict:
    with open(os.path.join(DATA, "fieldspecs.json"), encoding="utf-8") as f:
        return json.load(f)


def builtin(name: str) -> list[FieldSpec]:
    """The built-in specs of one kind: namePrefix, commonLabels, namespace, images, ..."""
    raw = _builtin_raw()
    return [FieldSpec.parse(r, f"built-in {name}") for r in raw.get(name) or []]


def builtin_namereference() -> list[dict]:
    return _builtin_raw()["nameReference"]
