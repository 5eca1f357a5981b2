"""The JobSet stand-in server (tests/support/remotes.py) is out of the test process's reach.

Served from a thread of the pytest process, a long-idle stand-in cut off kubectl's first fetch in
three CI runs. It now runs as a process of its own: nothing the test process does to its own
sockets or threads reaches it, and it never outlives the test process.
"""

from __future__ import annotations

import gc
import os
import socket
import urllib.request

import pytest

from tests.support import remotes


@pytest.fixture
def served(shared_dir, tmp_path):
    r = remotes.start(shared_dir, tmp_path)
    yield r
    r.stop()


def _release_files(shared_dir):
    root = shared_dir / "remote"
    return sorted((p.relative_to(root).as_posix(), p.stat().st_size)
                  for p in (root / "jobset").rglob("*") if p.is_file())


def test_every_release_file_is_served_whole_by_another_process(served, shared_dir):
    assert served._process.pid != os.getpid()
    for rel, size in _release_files(shared_dir):
        with urllib.request.urlopen(f"{served.http_base}/{rel}", timeout=10) as reply:
            assert len(reply.read()) == size, rel


def test_connections_the_test_process_resets_mid_request_leave_the_next_fetch_whole(served, shared_dir):
    """Fifty clients that send half a request and reset, then a collection of what they left:
    the server's own process is unharmed, and the next fetch is served whole."""
    import struct

    port = int(served.http_base.rsplit(":", 1)[1])
    for _ in range(50):
        s = socket.create_connection(("127.0.0.1", port), timeout=5)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        s.sendall(b"GET /")  # half a request, then a reset
        s.close()
    gc.collect()
    rel, size = _release_files(shared_dir)[-1]
    with urllib.request.urlopen(f"{served.http_base}/{rel}", timeout=10) as reply:
        assert len(reply.read()) == size


def test_it_ends_with_stop_and_when_its_input_closes(shared_dir, tmp_path):
    r = remotes.start(shared_dir, tmp_path)
    r.stop()
    assert r._process.poll() is not None
    # A test process that dies without stop() closes the pipe; the server then leaves by itself.
    r = remotes.start(shared_dir, tmp_path / "again")
    r._process.stdin.close()
    assert r._process.wait(timeout=10) is not None
    r._process.stdout.close()
    # Ended by itself, it says how (tests/support/render.py fails the test during which it did).
    assert not remotes.stopped(r) and "its standard input closed" in r.ended()
    r = remotes.start(shared_dir, tmp_path / "killed")
    r._process.kill()
    r._process.wait(timeout=10)
    assert r.ended().endswith("was killed by SIGKILL") and r not in remotes.running()
    r.stop()
