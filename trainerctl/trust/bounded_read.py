"""Reading input from outside: only what is a file, never more than its limit, one line if not.

Every reader of a file a user or a source names (kubeconfig, token file, CA and client
certificates, lock, config, `-f`, stdin, params.env) goes through `read_input`, and the HTTP
client bounds API responses with `limit_for("api-response")`. So /dev/zero, a FIFO, a socket, a
symlink loop or a 5,000-character path each end in one line and exit 2, never in a hang, an
out-of-memory kill or a traceback.

What counts as a file: a regular file. Streams are read where a user hands one over on purpose:
`-` (stdin) where a flag allows it, and `/dev/fd/N`, `/dev/stdin`, `/proc/self/fd/N` (the paths a
shell's process substitution `<(cmd)` gives), as kubectl reads them too. A named FIFO, a device
or a socket anywhere else is refused (kubectl would block on a FIFO, or read /dev/zero forever).

Limits are generous for real inputs and can be raised per input with an environment variable
(limits.py). Documents read from those files are bounded by document_bounds.py, what an API
server sends by limits.py and server_payloads.py, and a program we start by bounded_process.py.
"""

from __future__ import annotations

import errno
import os
import re
import stat
import sys

from trainerctl.errors import InputError
from trainerctl.trust.limits import limit_for, too_large

_STREAM_PATH = re.compile(r"^/(dev/fd/\d+|dev/stdin|proc/self/fd/\d+)$")


def shown_path(path: str) -> str:
    """A path as messages show it: control characters escaped, and a very long path shortened
    (the message stays one readable line)."""
    text = "".join(c if c.isprintable() else f"\\x{ord(c):02x}" if ord(c) < 256 else f"\\u{ord(c):04x}"
                   for c in str(path))
    return text if len(text) <= 160 else f"{text[:80]}…{text[-60:]} ({len(text)} characters)"


def _kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISLNK(mode):
        return "a symlink"
    return "not a regular file"


def os_problem(exc: OSError) -> str:
    """What an OSError on an input path means, in words (no errno, no Python names)."""
    return {
        errno.ENOENT: "file not found",
        errno.EISDIR: "is a directory, not a file",
        errno.ELOOP: "too many levels of symbolic links (a symlink loop?)",
        errno.ENAMETOOLONG: "the path is too long",
        errno.EACCES: "permission denied",
        errno.EPERM: "permission denied",
        errno.ENOTDIR: "a part of the path is not a directory",
        errno.ENXIO: "not a regular file (a socket or a device without a reader)",
    }.get(exc.errno, (exc.strerror or str(exc)).lower())


def read_input(path: str, label: str, limit: str, *, stdin: bool = False, follow: bool = True) -> bytes:
    """The bytes of the file at `path`, for the message prefix `label` (e.g. "--config x.yaml").

    `stdin`: "-" means standard input. `follow=False`: a symlink at `path` is refused, not read
    through (a file of trainerctl's cache: trainerctl.cachedir). Raises InputError (one line,
    exit 2) for anything that is not a readable file of at most the limit.
    """
    max_bytes = limit_for(limit)
    if stdin and path == "-":
        if sys.stdin is None:
            raise InputError(f"{label}: standard input is closed")
        if sys.stdin.isatty():
            raise InputError(f"{label}: standard input is a terminal; pipe the input in, or name a file")
        return _read_fd(sys.stdin.fileno(), label, limit, max_bytes)
    if not isinstance(path, str) or not path or "\0" in path:
        raise InputError(f"{label}: expected a file path")
    stream_ok = follow and bool(_STREAM_PATH.match(path))
    try:
        before = os.stat(path) if follow else os.lstat(path)
        if not stat.S_ISREG(before.st_mode) and not (stream_ok and (stat.S_ISFIFO(before.st_mode)
                                                                     or stat.S_ISSOCK(before.st_mode)
                                                                     or stat.S_ISCHR(before.st_mode))):
            raise InputError(f"{label}: {_kind(before.st_mode)}; expected a regular file")
        fd = os.open(path, os.O_RDONLY | os.O_NOCTTY | os.O_CLOEXEC | (0 if stream_ok else os.O_NONBLOCK)
                     | (0 if follow else os.O_NOFOLLOW))
    except OSError as exc:
        raise InputError(f"{label}: cannot read: {os_problem(exc)}") from None
    try:
        mode = os.fstat(fd).st_mode
        if not stream_ok and not stat.S_ISREG(mode):  # swapped between stat and open
            raise InputError(f"{label}: {_kind(mode)}; expected a regular file")
        if stream_ok and os.isatty(fd):
            raise InputError(f"{label}: a terminal; pipe the input in, or name a file")
        return _read_fd(fd, label, limit, max_bytes)
    finally:
        os.close(fd)


def _read_fd(fd: int, label: str, limit: str, max_bytes: int) -> bytes:
    data = bytearray()
    try:
        while True:
            chunk = os.read(fd, min(1 << 20, max_bytes + 1 - len(data)))
            if not chunk:
                return bytes(data)
            data += chunk
            if len(data) > max_bytes:
                raise InputError(f"{label}: {too_large(limit, max_bytes)}")
    except BlockingIOError:
        raise InputError(f"{label}: not a regular file (nothing to read without waiting)") from None
    except OSError as exc:
        raise InputError(f"{label}: cannot read: {os_problem(exc)}") from None


def read_text(path: str, label: str, limit: str, *, stdin: bool = False, expected: str = "text") -> str:
    """read_input decoded as UTF-8 (a byte-order mark is dropped, as YAML allows)."""
    data = read_input(path, label, limit, stdin=stdin)
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(f"{label}: not UTF-8 text (byte {exc.start}); expected {expected}") from None
