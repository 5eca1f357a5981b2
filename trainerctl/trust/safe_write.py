"""Writing files that stay where they belong: atomically, never through a symlink, with a fitting mode.

Every file trainerctl writes (the lock, `--output-dir`, the caches, a params.env work copy) goes
through `write_atomic`: the bytes go to a new temporary file created next to the target
(O_EXCL | O_NOFOLLOW, so nothing planted there is written through), then one rename replaces the
target. A symlink standing where the file should be is replaced by the file, and the file it
pointed to, perhaps outside the directory, is never touched. A reader sees the old or the new
file, never half of one; an interrupted write leaves the old file and no temporary behind.

The folders of trainerctl's cache are made and opened by trainerctl.cachedir, never through a
symlink either; the folders of a user's output (`--output-dir`, `--write-migrated`) are made by
`write_tree`, which refuses a folder that is a symlink rather than write through it.
"""

from __future__ import annotations

import os
from pathlib import Path

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC


def write_atomic(path: str | Path, data: bytes | str, *, mode: int | None = None) -> None:
    """Replace `path` with `data`. `mode` None: a normal file (0666 less the umask); else exactly
    `mode` (0o600 for anything private). Raises OSError; callers turn it into their one line."""
    path = Path(path)
    if isinstance(data, str):
        data = data.encode("utf-8")
    dir_fd = os.open(path.parent if str(path.parent) else ".", _DIR_FLAGS)
    tmp = f".{path.name[:100]}.{os.urandom(6).hex()}.tmp"  # what secrets.token_hex does
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                     0o666 if mode is None else mode, dir_fd=dir_fd)
        try:
            if mode is not None:
                os.fchmod(fd, mode)  # exactly this, whatever the umask
            view = memoryview(data)
            while view:
                written = os.write(fd, view)
                view = view[written:]
        finally:
            os.close(fd)
        os.replace(tmp, path.name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    except BaseException:
        try:
            os.unlink(tmp, dir_fd=dir_fd)
        except OSError:
            pass
        raise
    finally:
        os.close(dir_fd)


def remove_quietly(path: str | Path) -> None:
    """Remove a file (never a directory, never through a symlink: a symlink itself is removed)."""
    try:
        os.unlink(path)
    except OSError:
        pass


class LinkedFolder(OSError):
    """A folder on the way to a file is a symlink: writing there would leave the user's folder."""

    def __init__(self, folder: str):
        super().__init__(f"{folder} is a symlink, expected a folder")
        self.folder = folder


def write_tree(directory: str | Path, files: dict[str, str]) -> list[Path]:
    """Write `files` (relative path -> text) under `directory`, making the folders they need, each
    file with write_atomic. LinkedFolder when a folder between `directory` and a file is a
    symlink (nothing is written through it); OSError otherwise."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for rel, text in files.items():
        path = directory / rel
        linked = linked_folder(directory, path)
        if linked:
            raise LinkedFolder(linked)
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, text)
        written.append(path)
    return written


def linked_folder(directory: Path, path: Path) -> str | None:
    """The first folder between `directory` and `path` that is a symlink, if any."""
    for folder in reversed(list(path.relative_to(directory).parents)[:-1]):
        if (directory / folder).is_symlink():
            return folder.as_posix()
    return None
