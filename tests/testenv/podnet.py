"""Pod networking for process pods: one Linux bridge per cluster, one network namespace per pod.

Several real controllers listen on the same ports (:9443 webhooks, :8081 probes, :8443 metrics),
as they would in their own pods, so each process pod gets its own network namespace with a veth
into the cluster's bridge and an address from the cluster's /24. The host end of the bridge is
the gateway; pods reach the API server there (the service proxy forwards gateway:443 to it).

Two test sessions may run clusters at once, so everything is numbered by a cluster index that is
held by an flock on /run/trainerctl-testenv/net-<index>.lock for as long as the cluster lives:
bridge `tcbr<i>`, namespaces `tc<i>-<n>`, pod subnet 10.213.<i>.0/24 and service CIDR
127.<100+i>.0.0/16 (see E2ECluster). Whatever a dead session left under a free index is removed
before the index is reused.
"""

from __future__ import annotations

import fcntl
import os
import subprocess
from pathlib import Path

LOCK_DIR = Path("/run/trainerctl-testenv")
MAX_INDEX = 150  # 127.<100+i> must stay below 127.255


class NetError(RuntimeError):
    pass


def ip(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    proc = subprocess.run(["ip", *args], capture_output=True, text=True)
    if check and proc.returncode != 0:
        raise NetError(f"`ip {' '.join(args)}` failed: {proc.stderr.strip()}")
    return proc


class PodNetwork:
    def __init__(self, index: int):
        self.index = index
        self.bridge = f"tcbr{index}"
        self.prefix = f"10.213.{index}"
        self.gateway = f"{self.prefix}.1"
        self.netns_prefix = f"tc{index}-"

    # -- the cluster's part ---------------------------------------------------------------
    @classmethod
    def allocate(cls) -> tuple["PodNetwork", int]:
        """Take a free index (its lock fd is returned: keep it open, or hand it to the process
        that owns the network) and create the bridge."""
        LOCK_DIR.mkdir(parents=True, exist_ok=True)
        for index in range(1, MAX_INDEX + 1):
            fd = os.open(LOCK_DIR / f"net-{index}.lock", os.O_RDWR | os.O_CREAT, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                continue
            net = cls(index)
            net.teardown()  # leftovers of a session that died without cleaning up
            net.setup()
            return net, fd
        raise NetError(f"no free test cluster network index (all {MAX_INDEX} locked in {LOCK_DIR})")

    def setup(self) -> None:
        ip("link", "add", self.bridge, "type", "bridge")
        ip("addr", "add", f"{self.gateway}/24", "dev", self.bridge)
        ip("link", "set", self.bridge, "up")

    def teardown(self) -> None:
        for name in self.namespaces():
            ip("netns", "del", name, check=False)
        if Path(f"/sys/class/net/{self.bridge}").exists():
            ip("link", "del", self.bridge, check=False)

    def namespaces(self) -> list[str]:
        try:
            return sorted(n for n in os.listdir("/run/netns") if n.startswith(self.netns_prefix))
        except FileNotFoundError:
            return []

    # -- one pod --------------------------------------------------------------------------
    def add_pod(self, host: int) -> tuple[str, str]:
        """Create namespace tc<i>-<host> with address 10.213.<i>.<host>; returns (netns path, ip)."""
        name = f"{self.netns_prefix}{host}"
        address = f"{self.prefix}.{host}"
        outside, inside = f"tcv{self.index}x{host}", f"tcp{self.index}x{host}"
        ip("netns", "del", name, check=False)
        # A namespace is destroyed asynchronously once its last process is gone, and its veth
        # with it: a pair of the same name may still be there from the pod that had this address.
        for link in (outside, inside):
            if Path(f"/sys/class/net/{link}").exists():
                ip("link", "del", link, check=False)
        ip("netns", "add", name)
        try:
            ip("link", "add", outside, "type", "veth", "peer", "name", inside)
            ip("link", "set", inside, "netns", name)
            ip("link", "set", outside, "master", self.bridge, "up")
            ip("-n", name, "link", "set", "lo", "up")
            ip("-n", name, "link", "set", inside, "name", "eth0")
            ip("-n", name, "addr", "add", f"{address}/24", "dev", "eth0")
            ip("-n", name, "link", "set", "eth0", "up")
            ip("-n", name, "route", "add", "default", "via", self.gateway)
        except NetError:
            self.remove_pod(host)
            ip("link", "del", outside, check=False)
            raise
        return f"/run/netns/{name}", address

    def remove_pod(self, host: int) -> None:
        # Deleting the namespace deletes its veth end, and with it the host end.
        ip("netns", "del", f"{self.netns_prefix}{host}", check=False)


# -- what a pod's kernel answers, read without connecting ---------------------------------------
_LISTEN = "0A"  # TCP_LISTEN in /proc/net/tcp


def listening(address: str, port: int) -> bool | None:
    """Whether anything in the process pod that has `address` listens on TCP `port` (on all its
    addresses or that one): what its kernel answers a SYN with, a SYN-ACK or a reset (connection
    refused). Read from /proc, so no connection reaches the pod's server (a TLS server logs one
    that closes before its handshake). None when `address` is no process pod's (its namespace
    tc<i>-<host> does not exist)."""
    parts = address.split(".")
    if len(parts) != 4 or parts[:2] != ["10", "213"]:
        return None
    try:
        netns = os.stat(f"/run/netns/tc{int(parts[2])}-{int(parts[3])}").st_ino
    except (OSError, ValueError):
        return None
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            if os.stat(f"/proc/{pid}/ns/net").st_ino != netns:
                continue
            return listens(Path(f"/proc/{pid}/net"), address, port)
        except OSError:  # the process ended meanwhile
            continue
    return False  # nothing runs in the pod's namespace: its kernel refuses


def listens(net: Path, address: str, port: int) -> bool:
    """Whether /proc/<pid>/net (tcp, tcp6) holds a listening socket on `port` that a connection to
    `address` reaches: bound to any address, or to that one."""
    v4 = "".join(f"{int(b):02X}" for b in reversed(address.split(".")))
    wanted = {"00000000", v4, "0" * 32, "0000000000000000FFFF0000" + v4}
    for name in ("tcp", "tcp6"):
        try:
            lines = (net / name).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            local, state = fields[1], fields[3]
            host, _, hex_port = local.rpartition(":")
            if state == _LISTEN and int(hex_port, 16) == port and host in wanted:
                return True
    return False
