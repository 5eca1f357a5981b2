"""Run the test cluster by hand.

    python -m tests.testenv up       # build if needed, start, print the admin kubeconfig path
    python -m tests.testenv up --e2e # the e2e cluster: + controller manager, scheduler, kwok nodes,
                                     #   service proxy and the process kubelet (needs root)
    python -m tests.testenv status   # print the admin kubeconfig path if running (exit 1 if not)
    python -m tests.testenv down     # stop it and remove its work dir

Typical use: ``export KUBECONFIG=$(python -m tests.testenv up)``.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

from tests.testenv.build import BuildError, cache_root, ensure_binaries, ensure_e2e_binaries
from tests.testenv.cluster import ClusterError, TestCluster, _group_alive, kill_group

STATE_FILE = cache_root() / "up.json"


def _info(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def _load_state() -> dict | None:
    try:
        return json.loads(STATE_FILE.read_text())
    except (OSError, ValueError):
        return None


def _ours(pid: int, markers: list[str]) -> bool:
    """Only signal a pid that still runs one of our programs (pids get reused)."""
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return False
    return any(cmdline.startswith(m) or f" {m}" in cmdline for m in markers)


def _markers(state: dict) -> list[str]:
    return [state["bin_dir"], *([state["e2e_bin_dir"], "tests.testenv."] if state.get("e2e_bin_dir") else [])]


def _running(state: dict) -> bool:
    return all(_ours(pid, _markers(state)) and _group_alive(pid) for pid in state["pids"])


def up(e2e: bool = False) -> int:
    state = _load_state()
    if state and _running(state) and bool(state.get("e2e_bin_dir")) == e2e:
        _info(f"testenv: already running at {state['server']}")
        print(state["admin_kubeconfig"])
        return 0
    if state:
        down()
    bin_dir = ensure_binaries(log=_info)
    if e2e:
        from tests.testenv.e2e import E2ECluster, missing_prerequisites

        reason = missing_prerequisites()
        if reason:
            raise ClusterError(reason)
        e2e_bin_dir = ensure_e2e_binaries(log=_info)
        cluster = E2ECluster(bin_dir=bin_dir, e2e_bin_dir=e2e_bin_dir, keep_workdir=True, outlive_parent=True)
    else:
        cluster = TestCluster(bin_dir=bin_dir, keep_workdir=True, outlive_parent=True)
    cluster.start()
    parts = [p.pid for p in reversed(list(getattr(cluster, "procs", {}).values()))]
    state = {
        "server": cluster.server,
        "workdir": str(cluster.workdir),
        "bin_dir": str(bin_dir),
        "e2e_bin_dir": str(cluster.e2e_bin_dir) if e2e else "",
        # Stopped in this order: the e2e parts (kubelet first), kube-apiserver, etcd.
        "pids": [*parts, cluster.apiserver_proc.pid, cluster.etcd_proc.pid],
        "admin_kubeconfig": str(cluster.admin_kubeconfig),
        "restricted_kubeconfig": str(cluster.restricted_kubeconfig),
    }
    if e2e:
        state["net_index"] = cluster.net.index
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
    for pid in state["pids"]:  # e2e parts (kubelet first), then apiserver, then etcd
        if _ours(pid, _markers(state)):
            kill_group(pid)
    if state.get("net_index"):
        from tests.testenv.podnet import PodNetwork

        PodNetwork(state["net_index"]).teardown()
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
    e2e = argv[1:] == ["--e2e"] and argv[0] == "up"
    if not argv or argv[0] not in commands or (len(argv) > 1 and not e2e):
        _info(f"usage: python -m tests.testenv {{{'|'.join(commands)}}}  (up --e2e: the e2e cluster)")
        return 2
    try:
        return up(e2e=True) if e2e else commands[argv[0]]()
    except (BuildError, ClusterError) as exc:
        _info(f"error: {exc}")
        return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
