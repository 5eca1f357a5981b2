"""Run the test cluster by hand.

    python -m tests.testenv up       # build if needed, start, print the admin kubeconfig path
    python -m tests.testenv status   # print the admin kubeconfig path if running (exit 1 if not)
    python -m tests.testenv down     # stop it and remove its work dir

Typical use: ``export KUBECONFIG=$(python -m tests.testenv up)``.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

from tests.testenv.build import BuildError, cache_root, ensure_binaries
from tests.testenv.cluster import ClusterError, TestCluster, _group_alive, kill_group

STATE_FILE = cache_root() / "up.json"


def _info(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def _load_state() -> dict | None:
    try:
        return json.loads(STATE_FILE.read_text())
    except (OSError, ValueError):
        return None


def _ours(pid: int, bin_dir: str) -> bool:
    """Only signal a pid that still runs one of our binaries (pids get reused)."""
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0].decode()
    except OSError:
        return False
    return cmdline.startswith(bin_dir)


def _running(state: dict) -> bool:
    return all(_ours(pid, state["bin_dir"]) and _group_alive(pid) for pid in state["pids"])


def up() -> int:
    state = _load_state()
    if state and _running(state):
        _info(f"testenv: already running at {state['server']}")
        print(state["admin_kubeconfig"])
        return 0
    if state:
        down()
    bin_dir = ensure_binaries(log=_info)
    cluster = TestCluster(bin_dir=bin_dir, keep_workdir=True, outlive_parent=True)
    cluster.start()
    state = {
        "server": cluster.server,
        "workdir": str(cluster.workdir),
        "bin_dir": str(bin_dir),
        "pids": [cluster.apiserver_proc.pid, cluster.etcd_proc.pid],
        "admin_kubeconfig": str(cluster.admin_kubeconfig),
        "restricted_kubeconfig": str(cluster.restricted_kubeconfig),
    }
    STATE_FILE.parent.mkdir(parents=True, exist_ok=True)
    STATE_FILE.write_text(json.dumps(state, indent=2))
    _info(f"testenv: kube-apiserver at {cluster.server}; logs in {cluster.log_dir}")
    _info(f"testenv: restricted user kubeconfig: {cluster.restricted_kubeconfig}")
    _info("testenv: stop with `python -m tests.testenv down`")
    print(cluster.admin_kubeconfig)
    return 0


def down() -> int:
    state = _load_state()
    if not state:
        _info("testenv: not running")
        return 0
    for pid in state["pids"]:  # apiserver first, then etcd
        if _ours(pid, state["bin_dir"]):
            kill_group(pid)
    shutil.rmtree(state["workdir"], ignore_errors=True)
    STATE_FILE.unlink(missing_ok=True)
    _info("testenv: stopped")
    return 0


def status() -> int:
    state = _load_state()
    if state and _running(state):
        print(state["admin_kubeconfig"])
        return 0
    _info("testenv: not running")
    return 1


def main(argv: list[str]) -> int:
    commands = {"up": up, "down": down, "status": status}
    if len(argv) != 1 or argv[0] not in commands:
        _info(f"usage: python -m tests.testenv {{{'|'.join(commands)}}}")
        return 2
    try:
        return commands[argv[0]]()
    except (BuildError, ClusterError) as exc:
        _info(f"error: {exc}")
        return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
