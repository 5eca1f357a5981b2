"""JSON copies of parsed input, kept under trainerctl's cache dir and keyed by the content parsed.

Reading multi-megabyte YAML (CRD bundles) costs about ten times what reading the same values
back from JSON costs, and the same sources are parsed again on every run: `install -f` of one
rendered file, `kustomize`/`render` of one fetched tree. So a parse is kept as JSON, named by
the sha256 of what was parsed and of how (the caller's tags), and read back next time. Text a
caller computed (the emitter's YAML of a large object) is kept as text, behind a header line that
names its key and length, so a swapped or cut-off entry is never read as a hit.

The rules (docs/trust.md):
- best effort: a missing, unreadable, corrupt or unwritable entry only means parsing again,
  never an error;
- nothing holding a Secret is stored (a mapping with `kind: Secret` anywhere in the value), and
  an entry that holds one is removed unread: a Secret's payload never reaches the disk here;
- the folder is the owner's alone (0700, never through a symlink) and each file is 0600,
  written atomically (trainerctl.safe_write); reads are bounded (trainerctl.bounded_read).
Callers store only values that JSON gives back exactly as their parse gave them (string keys,
no NaN or infinity, no subclasses carrying more than the dict or list).
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

from trainerctl.bounded_read import read_input
from trainerctl.errors import InputError
from trainerctl.safe_write import private_dir, remove_quietly, write_atomic

# How a Secret's kind reads in the JSON written below (compact separators, ASCII escapes): the
# test is on the text, so it holds at any depth and for any document shape.
SECRET_MARK = '"kind":"Secret"'
# How it reads in YAML as kustomize writes it (block style), for text entries. A description
# that quotes the line also matches: that entry is just not kept.
TEXT_SECRET_MARK = "kind: Secret\n"
_KINDS = (".json", ".text")


def storable_json(value: Any) -> str | None:
    """`value` as the JSON an entry holds, or None when it may not be stored: JSON cannot say it
    exactly (NaN, another type), or it holds a Secret."""
    try:
        text = json.dumps(value, separators=(",", ":"), allow_nan=False)
    except (ValueError, TypeError, RecursionError):
        return None
    return None if SECRET_MARK in text else text


def _text_header(key: str, length: int) -> bytes:
    return f"trainerctl-cache {key} {length}".encode("ascii")


class ParsedCache:
    """One folder of parsed values; the newest `keep` entries are kept (by last use)."""

    def __init__(self, directory: str | Path, keep: int):
        self.dir = Path(directory)
        self.keep = keep
        self._pruned = False  # stale entries are removed once per process, at the first store
        self._held: dict[Path, bytes] | None = None  # see hold()

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
        # OpenSSL's SHA-256 (hashlib), not trainerctl.sha256's: keys hash megabytes of CRDs,
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
        data = self._read(path, SECRET_MARK.encode())  # an older trainerctl stored one: not any more
        if data is None:
            return None
        try:
            return json.loads(data)
        except (ValueError, RecursionError):
            remove_quietly(path)
            return None

    def get_text(self, key: str) -> str | None:
        """The text stored by put_text under `key`, or None when there is none that can be used."""
        path = self._path(key, ".text")
        data = self._read(path, TEXT_SECRET_MARK.encode())
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

    def _read(self, path: Path, secret_mark: bytes) -> bytes | None:
        if self._held is not None and path in self._held:
            return self._held[path]
        try:
            data = read_input(str(path), str(path), "cache-file")
        except InputError:  # missing (the usual miss), unreadable, too large
            return None
        if secret_mark in data:
            remove_quietly(path)
            return None
        try:
            os.utime(path)  # last use decides what is kept
        except OSError:
            pass
        return data

    def put(self, key: str, value: Any) -> bool:
        """Store `value`; False when it was not stored (it holds a Secret, or cannot be written)."""
        text = storable_json(value)
        if text is None:
            return False
        return self._store(self._path(key), text.encode("utf-8"))

    def put_text(self, key: str, text: str) -> bool:
        """Store `text` (the caller's output, which it knows holds no Secret); False when it was
        not stored (it reads like a Secret's YAML, is not UTF-8, or cannot be written)."""
        if TEXT_SECRET_MARK in text:
            return False
        try:
            body = text.encode("utf-8")
        except UnicodeEncodeError:
            return False
        return self._store(self._path(key, ".text"), _text_header(key, len(body)) + b"\n" + body)

    def _store(self, path: Path, data: bytes) -> bool:
        if self._held is not None:
            self._held[path] = data
            return True
        try:
            private_dir(self.dir)
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
