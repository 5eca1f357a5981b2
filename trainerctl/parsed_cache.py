"""JSON copies of parsed input, kept under trainerctl's cache dir and keyed by the content parsed.

Reading multi-megabyte YAML (CRD bundles) costs about ten times what reading the same values
back from JSON costs, and the same sources are parsed again on every run: `kustomize`/`render`
of one fetched tree. So a parse is kept as JSON, named by
the sha256 of what was parsed and of how (the caller's tags), and read back next time. Text a
caller computed (the emitter's YAML of a large object) is kept as text, behind a header line that
names its key and length, so a swapped or cut-off entry is never read as a hit.

The rules (docs/trust.md):
- best effort: a missing, unreadable, corrupt or unwritable entry only means parsing again,
  never an error;
- what is stored is a `Storable`, and `put` takes nothing else. A Storable is made only by its
  constructors, each of which walks the value it is made of and refuses one holding a Secret
  object (a mapping whose `kind` is `Secret`, at any depth) or, for a kustomization, anything
  that can carry a Secret's payload (a secretGenerator, a Helm chart's values, an inline
  document). So no Secret's payload reaches the disk here, whatever bytes it would be written as;
  an entry that reads back holding a Secret object (not one this code wrote) is removed unused;
- the folder is the owner's alone (0700, made and opened by trainerctl.cachedir, never through
  a symlink) and each file is 0600, written atomically (trainerctl.trust.safe_write); reads are bounded
  and never follow a symlink (trainerctl.trust.bounded_read).
Callers store only values that JSON gives back exactly as their parse gave them (string keys,
no NaN or infinity, no subclasses carrying more than the dict or list).
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

from trainerctl.cachedir import cache_folder, cached_folder
from trainerctl.errors import InputError
from trainerctl.trust.bounded_read import read_input
from trainerctl.trust.safe_write import remove_quietly, write_atomic

_KINDS = (".json", ".text")
# Keys of a kustomization (any letter case: kustomize decodes its fields as Go's JSON does) whose
# values can hold a Secret's payload or a credential outside any Secret object.
_PAYLOAD_FIELDS = frozenset({"secretgenerator", "helmcharts", "helmchartinflationgenerator", "helmglobals"})


def holds_secret(value: Any) -> bool:
    """Whether `value` holds a Secret object: a mapping whose kind is Secret, at any depth (a
    List's items, an OpenShift Template's objects)."""
    stack = [value]
    pop, push = stack.pop, stack.extend
    while stack:
        item = pop()
        if isinstance(item, dict):
            if item.get("kind") == "Secret":
                return True
            push(item.values())
        elif isinstance(item, list):
            push(item)
    return False


def secret_at_top(docs: list) -> bool:
    """Whether documents read back hold a Secret where one stands as an object (a document, a
    List's item): the cheap check of an entry this code did not write, on every hit."""
    for doc in docs:
        if isinstance(doc, dict):
            items = doc.get("items")
            if doc.get("kind") == "Secret" or (isinstance(items, list) and any(
                    isinstance(i, dict) and i.get("kind") == "Secret" for i in items)):
                return True
    return False


def _may_carry_payload(value: Any) -> bool:
    """Whether a kustomization (or another of kustomize's own files) can carry a Secret's payload
    outside a Secret object: a payload field, or an inline document (a patch, generator or
    transformer written in the file: a string holding a line break, or one that is a flow
    collection, as a one-line JSON patch is)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            if any(isinstance(k, str) and k.lower() in _PAYLOAD_FIELDS for k in item):
                return True
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, str) and ("\n" in item or "\r" in item or item.lstrip()[:1] in ("{", "[")):
            return True
    return False


class Storable:
    """What a ParsedCache stores: the bytes of a value checked, when it was made, to hold no
    Secret. Made only by the constructors below (`documents`, `kustomization`, `text`, `bundle`)."""

    __slots__ = ("data", "suffix")
    _MAKE = object()

    def __init__(self, data: bytes, suffix: str, make: object):
        if make is not Storable._MAKE:
            raise TypeError("a Storable is made by its constructors, which check it holds no Secret")
        self.data, self.suffix = data, suffix

    @classmethod
    def documents(cls, docs: Any, stored: Any = None) -> "Storable | None":
        """Parsed documents (or one object), kept as the JSON of `stored` (default: `docs`), an
        encoding of the same values; None when they hold a Secret or JSON cannot say them exactly."""
        if holds_secret(docs):
            return None
        return cls._json(docs if stored is None else stored)

    @classmethod
    def kustomization(cls, docs: Any, stored: Any = None) -> "Storable | None":
        """Kustomize's own files (a kustomization, a configurations file): as `documents`, and
        None for one that can carry a Secret's payload outside a Secret object."""
        if _may_carry_payload(docs):
            return None
        return cls.documents(docs, stored)

    @classmethod
    def text(cls, key: str, obj: Any, text: str) -> "Storable | None":
        """`text`, the YAML of the object `obj` (an emitter's output), under `key`; None when
        the object holds a Secret or the text is not UTF-8."""
        if holds_secret(obj):
            return None
        try:
            body = text.encode("utf-8")
        except UnicodeEncodeError:
            return None
        return cls(_text_header(key, len(body)) + b"\n" + body, ".text", cls._MAKE)

    @classmethod
    def bundle(cls, new: dict[str, "Storable"], kept: dict[str, str]) -> "Storable":
        """Several JSON entries as one: `new` Storables, and `kept`, parts of the same bundle as
        its reader gave them back (each a Storable when written, and checked again when read)."""
        if not all(isinstance(p, Storable) and p.suffix == ".json" for p in new.values()):
            raise TypeError("a bundle is made of JSON Storables")
        parts = {**kept, **{k: p.data.decode("utf-8") for k, p in new.items()}}
        return cls(json.dumps(parts).encode("utf-8"), ".json", cls._MAKE)

    @classmethod
    def _json(cls, value: Any) -> "Storable | None":
        try:
            text = json.dumps(value, separators=(",", ":"), allow_nan=False)
        except (ValueError, TypeError, RecursionError):
            return None
        return cls(text.encode("utf-8"), ".json", cls._MAKE)


def _text_header(key: str, length: int) -> bytes:
    return f"trainerctl-cache {key} {length}".encode("ascii")


class ParsedCache:
    """One folder of parsed values; the newest `keep` entries are kept (by last use)."""

    def __init__(self, directory: str | Path, keep: int):
        self.dir = Path(directory)
        self.keep = keep
        self._pruned = False  # stale entries are removed once per process, at the first store
        self._held: dict[Path, bytes] | None = None  # see hold()
        self._looked: bool | None = None  # the folder is a real one of ours (cachedir), once looked at

    def hold(self) -> None:
        """Keep what is stored from now on in memory until `flush`: a command that fails before
        then leaves the cache as it found it (a failed command writes nothing)."""
        if self._held is None:
            self._held = {}

    def flush(self) -> None:
        """Write what `hold` kept."""
        held, self._held = self._held, None
        for path, data in (held or {}).items():
            self._store(path, data)

    @staticmethod
    def key(data: bytes, *tags: str) -> str:
        """The entry name of `data` parsed the way `tags` say (flags, format, parser version)."""
        # OpenSSL's SHA-256 (hashlib), not trainerctl.trust.sha256's: keys hash megabytes of CRDs,
        # where it is about twenty times faster, which outweighs loading OpenSSL.
        digest = hashlib.sha256()
        for tag in tags:
            digest.update(tag.encode("utf-8", "surrogatepass") + b"\0")
        digest.update(data)
        return digest.hexdigest()

    def _path(self, key: str, kind: str = ".json") -> Path:
        return self.dir / (key + kind)

    def get(self, key: str) -> Any:
        """The stored value, or None when there is none that can be used."""
        path = self._path(key)
        data = self._read(path)
        if data is None:
            return None
        try:
            return json.loads(data)
        except (ValueError, RecursionError):
            remove_quietly(path)
            return None

    def _folder(self) -> bool:
        """Whether the folder may be read and its entries removed: a real folder of ours, not a
        symlink to one elsewhere (cachedir.cached_folder; a link is removed)."""
        if self._looked is None:
            self._looked = cached_folder(self.dir.parent, self.dir.name) is not None
        return self._looked

    def drop(self, key: str) -> None:
        """Remove the entry under `key` (one found holding what this code never stores)."""
        path = self._path(key)
        if self._held is not None:
            self._held.pop(path, None)
        if self._folder():
            remove_quietly(path)

    def get_text(self, key: str) -> str | None:
        """The text of a `Storable.text` stored under `key`, or None when there is none that can be used."""
        path = self._path(key, ".text")
        data = self._read(path)
        if data is None:
            return None
        header, _, body = data.partition(b"\n")
        if header != _text_header(key, len(body)):
            remove_quietly(path)
            return None
        try:
            return body.decode("utf-8")
        except UnicodeDecodeError:
            remove_quietly(path)
            return None

    def _read(self, path: Path) -> bytes | None:
        if self._held is not None and path in self._held:
            return self._held[path]
        if not self._folder():
            return None
        try:
            data = read_input(str(path), str(path), "cache-file", follow=False)
        except InputError:  # missing (the usual miss), unreadable, too large
            return None
        try:
            os.utime(path)  # last use decides what is kept
        except OSError:
            pass
        return data

    def put(self, key: str, item: Storable | None) -> bool:
        """Store `item` under `key`; False when it was not stored (None: its constructor refused
        the value, or it cannot be written)."""
        if item is None:
            return False
        if not isinstance(item, Storable):
            raise TypeError(f"ParsedCache stores a Storable, not {type(item).__name__}")
        return self._store(self._path(key, item.suffix), item.data)

    def _store(self, path: Path, data: bytes) -> bool:
        if self._held is not None:
            self._held[path] = data
            return True
        try:
            cache_folder(self.dir.parent, self.dir.name)
            self._looked = True
            write_atomic(path, data, mode=0o600)
            if not self._pruned:
                self._pruned = True
                self._prune()
        except OSError:
            return False
        return True

    def _prune(self) -> None:
        entries = []
        with os.scandir(self.dir) as found:
            for entry in found:
                if entry.name.endswith(_KINDS) and entry.is_file(follow_symlinks=False):
                    try:
                        entries.append((entry.stat(follow_symlinks=False).st_mtime, entry.path))
                    except OSError:
                        pass
        entries.sort()
        for _, stale in entries[:-self.keep]:
            remove_quietly(stale)
