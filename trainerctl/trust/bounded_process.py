"""A program trainerctl starts (an exec credential plugin): its output read within a limit and a
deadline, and the program, with everything it started in its process group, killed when either
passes or when we end."""

from __future__ import annotations

import os
import selectors
import signal
import subprocess
import sys
import time

from trainerctl.errors import TrainerctlError
from trainerctl.trust.limits import LIMITS, human_size, limit_for


def kill_process_tree(proc: subprocess.Popen, group: bool) -> None:
    """Kill a program we started and, when it was started as the leader of its own process group
    (`group`: Popen(process_group=0)), everything left in that group, even once the leader has
    exited: what it started must not outlive us either. Safe from a signal handler."""
    if group:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
            return
        except (ProcessLookupError, PermissionError):
            pass
    try:
        proc.kill()
    except OSError:
        pass


def read_process(proc: subprocess.Popen, limit: str, timeout: float, what: str,
                 error: type[TrainerctlError] = TrainerctlError, group: bool = False) -> tuple[bytes, bytes]:
    """stdout (at most the `limit` input's bytes) and stderr (its first 64 KiB) of a program that
    hands over a credential (an exec plugin, a docker credential helper), within `timeout`;
    killed otherwise, with its process group when it leads one (`group`). `what` names it in the
    one line `error` carries."""
    out, err = bytearray(), bytearray()
    most = limit_for(limit)
    deadline = time.monotonic() + timeout
    sel = selectors.DefaultSelector()
    try:
        for stream in (proc.stdout, proc.stderr):
            if stream is not None:
                sel.register(stream, selectors.EVENT_READ)
        while sel.get_map():
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise error(f"{what} did not finish within {timeout:.0f}s")
            for key, _ in sel.select(min(remaining, 1.0)):
                chunk = os.read(key.fileobj.fileno(), 65536)
                if not chunk:
                    sel.unregister(key.fileobj)
                    continue
                if key.fileobj is proc.stdout:
                    out += chunk
                    if len(out) > most:
                        raise error(f"{what} wrote more than {human_size(most)} "
                                    f"(raise it with {LIMITS[limit].env}=SIZE)")
                elif len(err) < 65536:
                    err += chunk
        proc.wait(max(0.1, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        raise error(f"{what} did not finish within {timeout:.0f}s") from None
    finally:
        sel.close()
        if proc.poll() is None or (group and sys.exc_info()[0] is not None):
            kill_process_tree(proc, group)  # on a failure, also what it left running in its group
            proc.wait()
        for stream in (proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()
    return bytes(out), bytes(err)
