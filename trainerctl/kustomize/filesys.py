"""The files a build reads (kustomize's `filesys`): one small interface, the disk behind it,
rooted and read-only, and an in-memory layer that can sit over the disk.

Paths are absolute, lexically clean POSIX strings. The interface does not follow symlinks on
its own: `lstat` reports a link and its target, and the load restrictor (loader.py) resolves
them one hop at a time, so the same rules hold whether a file is on disk or in memory.

Reads are bounded: only a regular file is read (a FIFO, device or socket is refused by name,
never waited on) and no file may be larger than `max_file_bytes()`.
"""

from __future__ import annotations

import os
import posixpath
import stat

from trainerctl.trust.limits import LIMITS, limit_for

# kustomize sets no limit; ours keeps a mistaken path (a disk image, /dev/zero behind a link)
# from exhausting memory. The largest Kubernetes manifests (CRD bundles) are a few MB. One limit
# for every file of manifests, -f's included (limits.LIMITS["file"]).
MAX_FILE_ENV = LIMITS["file"].env

FILE, DIR, LINK, OTHER = "file", "dir", "link", "other"


class FsError(Exception):
    """A file that cannot be read as asked; the message names no path (the caller adds it)."""


class Entry:
    """What lstat found at a path."""

    __slots__ = ("kind", "target", "what")

    def __init__(self, kind: str, target: str = "", what: str = ""):
        self.kind = kind  # FILE, DIR, LINK or OTHER (a FIFO, device or socket)
        self.target = target  # where a LINK points, as written
        self.what = what  # for OTHER: "a FIFO", "a device", "a socket"

    def __eq__(self, other: object) -> bool:
        return (other.__class__ is Entry
                and (self.kind, self.target, self.what) == (other.kind, other.target, other.what))

    def __hash__(self) -> int:
        return hash((self.kind, self.target, self.what))

    def __repr__(self) -> str:
        return f"Entry(kind={self.kind!r}, target={self.target!r}, what={self.what!r})"


class FileSystem:
    """The interface a build reads through (what DiskFS and OverlayFS implement)."""

    def lstat(self, path: str) -> Entry | None:
        """What is at `path` itself (a link is not followed); None when nothing is."""
        raise NotImplementedError

    def read(self, path: str) -> bytes:
        """The bytes of the regular file at `path` (never a link), within the size limit."""
        raise NotImplementedError


def max_file_bytes() -> int:
    return limit_for("file")


def too_large(limit: int) -> FsError:
    return FsError(f"larger than {limit} bytes (raise {MAX_FILE_ENV} to allow more)")


def _other(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "not a regular file"


def within(path: str, root: str) -> bool:
    return root == "/" or path == root or path.startswith(root + "/")


class DiskFS(FileSystem):
    """The real filesystem under `root`, read-only; anything outside `root` does not exist."""

    def __init__(self, root: str = "/"):
        self.root = root

    def lstat(self, path: str) -> Entry | None:
        if not within(path, self.root):
            return None
        try:
            st = os.lstat(path)
        except (FileNotFoundError, NotADirectoryError):
            return None
        except OSError as exc:
            raise FsError(exc.strerror or str(exc)) from None
        mode = st.st_mode
        if stat.S_ISREG(mode):
            return Entry(FILE)
        if stat.S_ISDIR(mode):
            return Entry(DIR)
        if stat.S_ISLNK(mode):
            try:
                return Entry(LINK, os.readlink(path))
            except OSError as exc:
                raise FsError(exc.strerror or str(exc)) from None
        return Entry(OTHER, what=_other(mode))

    def read(self, path: str) -> bytes:
        if not within(path, self.root):
            raise FsError("no such file")
        limit = max_file_bytes()
        # O_NONBLOCK: opening a FIFO must not wait for a writer (it is refused below anyway);
        # O_NOFOLLOW: the path was resolved by the caller, a link here is a race and refused.
        flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
        try:
            fd = os.open(path, flags)
        except OSError as exc:
            raise FsError(exc.strerror or str(exc)) from None
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                raise FsError(f"{_other(st.st_mode)}, not a regular file")
            if st.st_size > limit:
                raise too_large(limit)
            chunks, size = [], 0
            while True:
                chunk = os.read(fd, min(limit + 1 - size, 1 << 20) or 1)
                if not chunk:
                    break
                chunks.append(chunk)
                size += len(chunk)
                if size > limit:  # grew while we read it
                    raise too_large(limit)
            return b"".join(chunks)
        except OSError as exc:
            raise FsError(exc.strerror or str(exc)) from None
        finally:
            os.close(fd)


class OverlayFS(FileSystem):
    """Files held in memory, layered over another filesystem (read-only to the build).

    An in-memory file replaces whatever the lower filesystem has at its path; `hide` makes a
    lower path absent. The directories that lead to an in-memory file exist. `labels` name
    in-memory files in messages (they have no place on disk a user could open).
    """

    def __init__(self, lower: FileSystem | None = None):
        self.lower: FileSystem = lower if lower is not None else DiskFS()
        self.files: dict[str, bytes] = {}
        self.dirs: set[str] = set()
        self.hidden: set[str] = set()
        self.labels: dict[str, str] = {}

    def add_file(self, path: str, data: bytes, label: str | None = None) -> None:
        path = _clean_abs(path)
        self._check_parents(path)
        self.files[path] = data
        self.hidden.discard(path)
        if label:
            self.labels[path] = label
        parent = posixpath.dirname(path)
        while parent not in self.dirs and parent != "/":
            self.dirs.add(parent)
            parent = posixpath.dirname(parent)

    def hide(self, path: str) -> None:
        path = _clean_abs(path)
        self.files.pop(path, None)
        self.hidden.add(path)

    def _check_parents(self, path: str) -> None:
        """An in-memory file must sit under real directories: a link among its parents would
        give the same directory two contents."""
        parent = posixpath.dirname(path)
        while parent != "/":
            entry = None if parent in self.dirs else self.lower.lstat(parent)
            if entry is not None and entry.kind != DIR:
                raise ValueError(f"{path}: {parent} is not a directory on the lower filesystem")
            parent = posixpath.dirname(parent)

    def lstat(self, path: str) -> Entry | None:
        if path in self.files:
            return Entry(FILE)
        if path in self.dirs:
            return Entry(DIR)
        if path in self.hidden:
            return None
        return self.lower.lstat(path)

    def read(self, path: str) -> bytes:
        data = self.files.get(path)
        if data is not None:
            limit = max_file_bytes()
            if len(data) > limit:
                raise too_large(limit)
            return data
        if path in self.hidden:
            raise FsError("no such file")
        return self.lower.read(path)

    def label(self, path: str) -> str | None:
        return self.labels.get(path)


def _clean_abs(path: str) -> str:
    if not path.startswith("/"):
        raise ValueError(f"{path}: expected an absolute path")
    return posixpath.normpath(path).replace("//", "/")
