"""Walk a manifests tree once: refuse symlinks that leave it, compute its digest, optionally copy it.

The digest covers every file's relative path, executable bit and content, and every symlink's
target, in sorted path order, so it identifies the tree independently of where it lies on disk.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
from pathlib import Path

from trainerctl.errors import InputError

DIGEST_PREFIX = "sha256:"


def check_link_target(root: Path, link_rel: str, target: str) -> None:
    """Refuse a symlink at `link_rel` (relative to root) whose `target` points outside root."""
    if os.path.isabs(target):
        raise InputError(f"{root / link_rel}: symlink to absolute path {target!r} is not allowed")
    resolved = os.path.normpath(os.path.join(os.path.dirname(link_rel), target))
    if resolved == ".." or resolved.startswith("../") or resolved.startswith("/"):
        raise InputError(f"{root / link_rel}: symlink to {target!r} points outside the manifests tree")


def _file_digest(path: str) -> str:
    """sha256 of a file, read in chunks: a huge file in a source costs time, never memory.
    O_NONBLOCK: a file swapped for a FIFO since it was listed is not waited on."""
    h = hashlib.sha256()
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise InputError(f"{path}: not a regular file, directory or symlink")
        while chunk := os.read(fd, 1 << 20):
            h.update(chunk)
    finally:
        os.close(fd)
    return h.hexdigest()


def walk_tree(root: Path, copy_to: Path | None = None) -> str:
    """Return the digest of the tree at root; with copy_to, also copy it there (symlinks kept).

    Files are hard-linked into copy_to when it is on the same filesystem (ten times faster than
    copying on a typical overlay filesystem); whoever edits the copy must therefore replace a file
    (write + rename, as params_env does) and never write into it in place. A cache file changed
    that way anyway would be caught by the next render's digest check.
    """
    if not root.is_dir():
        raise InputError(f"{root}: not a directory")
    digest = hashlib.sha256()
    try:
        _walk(root, "", digest, copy_to)
    except OSError as exc:  # an unreadable file in the source, or no room for the work copy
        where = exc.filename if exc.filename and not (copy_to and str(exc.filename).startswith(str(copy_to))) \
            else root
        raise InputError(f"{where}: {exc.strerror}") from None
    return DIGEST_PREFIX + digest.hexdigest()


def _walk(root: Path, rel: str, digest: "hashlib._Hash", copy_to: Path | None) -> None:
    directory = root / rel if rel else root
    if copy_to is not None:
        (copy_to / rel).mkdir(parents=True, exist_ok=True)
    with os.scandir(directory) as it:
        entries = sorted(it, key=lambda e: e.name)
    for entry in entries:
        path_rel = f"{rel}/{entry.name}" if rel else entry.name
        if entry.is_symlink():
            target = os.readlink(entry.path)
            check_link_target(root, path_rel, target)
            digest.update(b"l " + path_rel.encode() + b"\0" + target.encode() + b"\n")
            if copy_to is not None:
                os.symlink(target, copy_to / path_rel)
        elif entry.is_dir():
            _walk(root, path_rel, digest, copy_to)
        elif entry.is_file(follow_symlinks=False):
            executable = bool(entry.stat(follow_symlinks=False).st_mode & stat.S_IXUSR)
            digest.update(
                (b"x " if executable else b"f ")
                + path_rel.encode()
                + b"\0"
                + _file_digest(entry.path).encode()
                + b"\n"
            )
            if copy_to is not None:
                dst = copy_to / path_rel
                try:
                    os.link(entry.path, dst)
                except OSError:  # another filesystem, or links not allowed: copy
                    shutil.copyfile(entry.path, dst, follow_symlinks=False)
                    if executable:
                        shutil.copymode(entry.path, dst)
        else:
            raise InputError(f"{entry.path}: not a regular file, directory or symlink")
