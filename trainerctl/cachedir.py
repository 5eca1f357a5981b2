"""Where trainerctl keeps what it caches: one home folder, one subfolder per cache.

`--cache-dir` (else TRAINERCTL_CACHE_DIR, trainerctl.yaml's `cacheDir`, $XDG_CACHE_HOME/trainerctl,
~/.cache/trainerctl) names the home, and every cache moves with it: fetched sources (repos/,
trees/), the kustomize engine's parses and output (kustomize/), remote bases and files a
kustomization names (remote/), and the parses of large `-f` files (parsed/). docs/trust.md says
what each holds.

The home is the user's (it may be a symlink they made). Every folder under it is trainerctl's,
and is made or opened through `cache_folder` (or `cached_folder` to only look): one component at a
time, relative to the folder above, never through a symlink. A symlink, or anything else that is
not a folder, standing where a cache folder goes is removed (the link itself: what it points to
is left as it was) and a folder made in its place; a folder of another user is refused. Cache
folders are 0700, tightened through the open folder (no chmod ever follows a link). Files in
them are written by safe_write.write_atomic and read by bounded_read.read_input with
follow=False, so neither follows a link out of the cache either.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from trainerctl.errors import InputError

ENV = "TRAINERCTL_CACHE_DIR"


def default_cache_dir() -> Path:
    """The home when no --cache-dir is given. A HOME that is set but empty or relative is refused:
    ~ would be / or the working directory, and caches would land in /.cache or wherever the
    command runs."""
    if os.environ.get(ENV):
        return Path(os.environ[ENV])
    if os.environ.get("XDG_CACHE_HOME"):
        return Path(os.environ["XDG_CACHE_HOME"]) / "trainerctl"
    home = os.environ.get("HOME")
    if home is not None and not os.path.isabs(home):
        said = "empty" if not home.strip() else "not an absolute path"
        raise InputError(f"HOME is {said}, so trainerctl has no cache directory: set HOME or XDG_CACHE_HOME, "
                         f"or name one with --cache-dir or {ENV}")
    return Path(os.path.expanduser("~")) / ".cache" / "trainerctl"


def cache_home(given: str | Path | None = None) -> Path:
    """The home: `given` (--cache-dir), else the default; one line when it cannot be a folder."""
    root = Path(given) if given else default_cache_dir()
    where = f"--cache-dir {root}" if given else (
        f"{ENV} {root}" if os.environ.get(ENV) else f"cache directory {root}")
    if not str(given if given else root).strip():
        raise InputError(f"{where}: expected a directory")
    for path in (root, *root.parents):
        if path.exists():
            if not path.is_dir():
                raise InputError(f"{where}: {path} is a file, not a directory")
            break
    return root


_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC


def cache_folder(home: str | Path | None, *parts: str) -> Path:
    """home/parts…, each part a folder of this user's own, made (0700) when missing; a symlink or
    other non-folder in its place is replaced (module doc). OSError when it cannot be: a folder of
    another user, no room, no permission."""
    found = _walk(home, parts, make=True)
    assert found is not None
    return found


def cached_folder(home: str | Path | None, *parts: str) -> Path | None:
    """home/parts… when every part is a folder of this user's own already; None when one is
    missing, or is a symlink or other non-folder (removed, so the next write makes a real one)
    or another user's. Nothing is made."""
    try:
        return _walk(home, parts, make=False)
    except OSError:
        return None


def _walk(home: str | Path | None, parts: tuple[str, ...], *, make: bool) -> Path | None:
    root = Path(home) if home else default_cache_dir()
    if make:
        root.mkdir(parents=True, exist_ok=True)
    path = root
    fd = os.open(root, _DIR)
    try:
        for part in parts:
            if not part or part in (".", "..") or "/" in part or "\0" in part:
                raise ValueError(f"not a cache folder name: {part!r}")
            path = path / part
            inner = _own(fd, part, path, make)
            os.close(fd)
            fd = inner
            if fd is None:
                return None
    finally:
        if fd is not None:
            os.close(fd)
    return path


def _own(parent: int, name: str, path: Path, make: bool) -> int | None:
    """The open folder `name` in `parent` (made when `make`); None when it is not there to look at."""
    for replaced in (False, True):
        if make:
            try:
                os.mkdir(name, 0o700, dir_fd=parent)
            except FileExistsError:
                pass
        try:
            fd = os.open(name, _DIR | os.O_NOFOLLOW, dir_fd=parent)
        except FileNotFoundError:
            if make:
                raise
            return None
        except OSError as exc:  # ELOOP: a symlink; ENOTDIR: a file, a FIFO, a device
            if exc.errno not in (errno.ELOOP, errno.ENOTDIR) or replaced:
                raise
            os.unlink(name, dir_fd=parent)  # the link itself, never what it points to
            if not make:
                return None
            continue
        info = os.fstat(fd)
        if info.st_uid != os.getuid():
            os.close(fd)
            raise OSError(errno.EPERM, "a cache folder of another user", str(path))
        if stat.S_IMODE(info.st_mode) & 0o077:
            os.fchmod(fd, 0o700)
        return fd
    raise AssertionError("unreachable")
