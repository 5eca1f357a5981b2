"""A container's log shim, as conmon or containerd-shim is: it owns the container's stdout and
stderr and writes them to the container's log file in the CRI format the kubelet's log reader
(and kwok's, which is the same code) parses: `<RFC 3339 nano time> <stream> <F|P> <line>`.

    python logshim.py CRI_FILE PLAIN_FILE STDOUT_FD STDERR_FD

A second, plain copy goes to PLAIN_FILE (the per-pod log a person reads under logs/pods/). It
exits when both pipes are closed, that is when the container and its children are gone.
Standard library only, started with -S: one runs per container start.
"""

from __future__ import annotations

import os
import selectors
import sys
import time

MAX_LINE = 16 * 1024  # the CRI runtimes' partial-line limit


def stamp() -> bytes:
    now = time.time_ns()
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(now // 1_000_000_000)).encode() + \
        b".%09dZ" % (now % 1_000_000_000)


def main(argv: list[str]) -> int:
    cri_path, plain_path, out_fd, err_fd = argv[0], argv[1], int(argv[2]), int(argv[3])
    streams = {out_fd: b"stdout", err_fd: b"stderr"}
    pending = {out_fd: b"", err_fd: b""}
    selector = selectors.DefaultSelector()
    for fd in streams:
        selector.register(fd, selectors.EVENT_READ)
    with open(cri_path, "ab", buffering=0) as cri, open(plain_path, "ab", buffering=0) as plain:
        def emit(fd: int, line: bytes, full: bool) -> None:
            cri.write(b"%s %s %s %s\n" % (stamp(), streams[fd], b"F" if full else b"P", line))
            plain.write(line + (b"\n" if full else b""))

        open_fds = set(streams)
        while open_fds:
            for key, _ in selector.select():
                fd = key.fd
                chunk = os.read(fd, 65536)
                if not chunk:
                    if pending[fd]:
                        emit(fd, pending[fd], True)
                    selector.unregister(fd)
                    os.close(fd)
                    open_fds.discard(fd)
                    continue
                data = pending[fd] + chunk
                *lines, rest = data.split(b"\n")
                for line in lines:
                    while len(line) > MAX_LINE:
                        emit(fd, line[:MAX_LINE], False)
                        line = line[MAX_LINE:]
                    emit(fd, line, True)
                while len(rest) > MAX_LINE:
                    emit(fd, rest[:MAX_LINE], False)
                    rest = rest[MAX_LINE:]
                pending[fd] = rest
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
