"""A command run on a real pseudo-terminal of a given width (stdin, stdout and stderr all on it, as
a person runs it), and the screen it leaves: what a person reads once it has ended, every live
line redrawn in place as a terminal would."""

from __future__ import annotations

import fcntl
import os
import pty
import re
import select
import struct
import subprocess
import termios
import time
from dataclasses import dataclass

# Variables that would make trainerctl print plain lines instead of stage lines.
PLAIN = ("CI", "NO_COLOR", "TERM", "COLUMNS", "LINES")


@dataclass
class Ran:
    code: int
    output: str


def run_in_terminal(cmd: list[str], *, columns: int = 100, env: dict[str, str] | None = None,
                    cwd: str | None = None, timeout: float = 300, stdout=None) -> Ran:
    """`stdout`: a file for stdout instead of the terminal (`-o json > FILE`)."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 50, columns, 0, 0))
    environ = {k: v for k, v in os.environ.items() if k not in PLAIN}
    environ.update({"TERM": "xterm-256color", **(env or {})})
    proc = subprocess.Popen(cmd, stdin=slave, stdout=stdout or slave, stderr=slave, env=environ, cwd=cwd, close_fds=True,
                            start_new_session=True)
    os.close(slave)
    chunks: list[bytes] = []
    deadline = time.monotonic() + timeout
    try:
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                proc.kill()
                raise AssertionError(f"{cmd[:3]} still running after {timeout:g}s:\n"
                                     + b"".join(chunks).decode(errors="replace")[-3000:])
            ready, _, _ = select.select([master], [], [], left)
            if not ready:
                continue
            try:
                chunk = os.read(master, 65536)
            except OSError:  # EIO: every end of the terminal's other side is closed
                break
            if not chunk:
                break
            chunks.append(chunk)
        code = proc.wait(timeout=max(1.0, deadline - time.monotonic()))
    finally:
        os.close(master)
    return Ran(code, b"".join(chunks).decode(errors="replace"))


_CONTROL = re.compile(r"\x1b\[([0-9;?]*)([A-Za-z])|\x1b\][^\x07]*\x07|[\r\n]|[^\x1b\r\n]+")


def screen_lines(output: str) -> list[str]:
    """The lines a terminal shows after `output` (scrolled-off lines included), blank ones left out:
    carriage return, line feed, erase line (CSI K), cursor up (CSI A); colours and the rest dropped."""
    lines, row, col = [""], 0, 0
    for match in _CONTROL.finditer(output):
        text = match.group(0)
        if match.group(2):
            arg, op = match.group(1), match.group(2)
            if op == "K":
                lines[row] = lines[row][:col] if arg in ("", "0") else ""
            elif op == "A":
                row = max(0, row - int(arg or 1))
        elif text == "\r":
            col = 0
        elif text == "\n":
            row += 1
            if row == len(lines):
                lines.append("")
        elif not text.startswith("\x1b"):
            line = lines[row].ljust(col)
            lines[row] = line[:col] + text + line[col + len(text):]
            col += len(text)
    return [line.rstrip() for line in lines if line.strip()]
