"""A real etcd + kube-apiserver on 127.0.0.1 for tests (no kubelet, no controllers).

Both run in their own process groups with logs in the cluster's work dir; stop() kills the groups
so nothing is left behind even when a test run is interrupted.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import socket
import ssl
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

START_TIMEOUT = 120.0
STOP_TIMEOUT = 15.0
ADMIN_USER = "testenv-admin"
RESTRICTED_USER = "testenv-restricted"


class ClusterError(RuntimeError):
    """etcd or kube-apiserver did not start (message carries the tail of its log)."""


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _log_tail(path: Path, lines: int = 25) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


def kill_group(proc_or_pid: subprocess.Popen | int, timeout: float = STOP_TIMEOUT) -> None:
    """SIGTERM the process group led by this process, SIGKILL it if it does not exit in time."""
    pid = proc_or_pid if isinstance(proc_or_pid, int) else proc_or_pid.pid
    try:
        os.killpg(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if isinstance(proc_or_pid, subprocess.Popen):
            if proc_or_pid.poll() is not None:
                break
        elif not _group_alive(pid):
            break
        time.sleep(0.1)
    try:
        os.killpg(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    if isinstance(proc_or_pid, subprocess.Popen):
        proc_or_pid.wait()


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A zombie (exited, not yet reaped by a parent that is gone) still counts for killpg.
    try:
        state = Path(f"/proc/{pgid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        return state != "Z"
    except (OSError, IndexError):
        return True


def _die_with_parent() -> None:
    """In the child before exec: die when the parent dies (Linux), even by SIGKILL.

    SIGKILL, not SIGTERM: kube-apiserver hangs in graceful shutdown once etcd is gone.
    """
    try:
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # 1 = PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def _kubeconfig(server: str, ca_file: Path, user: str, token: str) -> str:
    # JSON is valid YAML; kubeconfig loaders (kubectl, kubernetes client) accept it.
    return json.dumps(
        {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{"name": "testenv", "cluster": {"server": server, "certificate-authority": str(ca_file)}}],
            "users": [{"name": user, "user": {"token": token}}],
            "contexts": [{"name": user, "context": {"cluster": "testenv", "user": user}}],
            "current-context": user,
        },
        indent=2,
    )


class TestCluster:
    """etcd + kube-apiserver with an admin and a restricted (no RBAC grants) user."""

    __test__ = False  # not a pytest test class despite the name

    def __init__(self, bin_dir: Path | None = None, workdir: Path | None = None, keep_workdir: bool = False,
                 outlive_parent: bool = False, service_cidr: str = "127.100.0.0/16", san_ips: tuple[str, ...] = ()):
        """outlive_parent=False ties etcd and kube-apiserver to this process: if it is killed
        (CI time-out, kill -9) they go too. `python -m tests.testenv up` sets it True.

        service_cidr must stay in 127.0.0.0/8 (see _apiserver_args); san_ips are extra addresses the
        API server's certificate is valid for (where pods in their own network namespaces reach it)."""
        if bin_dir is None:
            from tests.testenv.build import ensure_binaries

            bin_dir = ensure_binaries()
        self.bin_dir = Path(bin_dir)
        self._own_workdir = workdir is None
        self.workdir = Path(workdir) if workdir else Path(tempfile.mkdtemp(prefix="trainerctl-testenv-"))
        self.keep_workdir = keep_workdir
        self.outlive_parent = outlive_parent
        self.service_cidr = service_cidr
        self.san_ips = tuple(san_ips)
        self.pki_dir = self.workdir / "pki"
        self.log_dir = self.workdir / "logs"
        self.etcd_data = self.workdir / "etcd-data"
        self.etcd_port = 0
        self.etcd_peer_port = 0
        self.port = 0
        self.admin_token = secrets.token_hex(16)
        self.restricted_token = secrets.token_hex(16)
        self.etcd_proc: subprocess.Popen | None = None
        self.apiserver_proc: subprocess.Popen | None = None
        self.admin_kubeconfig = self.workdir / "admin.kubeconfig"
        self.restricted_kubeconfig = self.workdir / "restricted.kubeconfig"
        self.ca_file = self.pki_dir / "ca.crt"

    @property
    def server(self) -> str:
        return f"https://127.0.0.1:{self.port}"

    @property
    def etcd_url(self) -> str:
        return f"http://127.0.0.1:{self.etcd_port}"

    # -- lifecycle ---------------------------------------------------------------------------

    def start(self) -> "TestCluster":
        """Start etcd and kube-apiserver and wait until /readyz is ok; stops both if that fails."""
        try:
            self._prepare()
            self._start_etcd()
            self.start_apiserver()
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        """Stop kube-apiserver then etcd (process groups) and remove the work dir unless kept."""
        self.stop_apiserver()
        if self.etcd_proc is not None:
            kill_group(self.etcd_proc)
            self.etcd_proc = None
        if self._own_workdir and not self.keep_workdir:
            shutil.rmtree(self.workdir, ignore_errors=True)

    def start_apiserver(self) -> None:
        """Start kube-apiserver on the cluster's port against the running etcd; wait for /readyz."""
        if self.apiserver_proc is not None and self.apiserver_proc.poll() is None:
            return
        log = self.log_dir / "kube-apiserver.log"
        self.apiserver_proc = self._spawn([str(self.bin_dir / "kube-apiserver"), *self._apiserver_args()], log)
        self._wait(self.apiserver_proc, log, self._apiserver_ready, "kube-apiserver")

    def stop_apiserver(self) -> None:
        if self.apiserver_proc is not None:
            kill_group(self.apiserver_proc)
            self.apiserver_proc = None

    def restart_apiserver(self) -> None:
        """Stop and start kube-apiserver on the same port and etcd (data survives)."""
        self.stop_apiserver()
        self.start_apiserver()

    def __enter__(self) -> "TestCluster":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    # -- clients -----------------------------------------------------------------------------

    def api_client(self, restricted: bool = False):
        """A kubernetes.client.ApiClient for the admin (or the restricted) user."""
        from kubernetes import config

        path = self.restricted_kubeconfig if restricted else self.admin_kubeconfig
        return config.new_client_from_config(config_file=str(path))

    def get(self, path: str, token: str | None = None) -> bytes:
        """GET a raw API path (e.g. /openapi/v2) as the admin unless another token is given."""
        request = urllib.request.Request(self.server + path, headers={"Authorization": f"Bearer {token or self.admin_token}"})
        with urllib.request.urlopen(request, context=self._ssl_context(), timeout=30) as response:
            return response.read()

    # -- internals ---------------------------------------------------------------------------

    def _prepare(self) -> None:
        for directory in (self.pki_dir, self.log_dir, self.etcd_data):
            directory.mkdir(parents=True, exist_ok=True)
        subprocess.run([str(self.bin_dir / "pki"), "--dir", str(self.pki_dir), f"--san-ips={','.join(self.san_ips)}"],
                       check=True, capture_output=True)
        ports: set[int] = set()
        while len(ports) < 3:
            ports.add(free_port())
        self.etcd_port, self.etcd_peer_port, self.port = sorted(ports)
        # Static token file: token,user,uid,"groups". system:masters bypasses RBAC; the restricted
        # user only gets what every authenticated user has (discovery), so writes give 403.
        (self.pki_dir / "tokens.csv").write_text(
            f'{self.admin_token},{ADMIN_USER},1000,"system:masters"\n'
            f"{self.restricted_token},{RESTRICTED_USER},1001\n"
        )
        self.admin_kubeconfig.write_text(_kubeconfig(self.server, self.ca_file, ADMIN_USER, self.admin_token))
        self.restricted_kubeconfig.write_text(
            _kubeconfig(self.server, self.ca_file, RESTRICTED_USER, self.restricted_token)
        )

    def _apiserver_args(self) -> list[str]:
        pki = self.pki_dir
        return [
            f"--etcd-servers={self.etcd_url}",
            "--bind-address=127.0.0.1",
            "--advertise-address=127.0.0.1",
            f"--secure-port={self.port}",
            f"--tls-cert-file={pki / 'serving.crt'}",
            f"--tls-private-key-file={pki / 'serving.key'}",
            f"--cert-dir={pki}",
            f"--token-auth-file={pki / 'tokens.csv'}",
            "--authorization-mode=RBAC",
            "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
            f"--service-account-key-file={pki / 'sa.pub'}",
            f"--service-account-signing-key-file={pki / 'sa.key'}",
            # ClusterIPs in loopback: the apiserver dials a webhook Service's ClusterIP, so an
            # installed webhook configuration fails fast (connection refused) and no request ever
            # leaves this machine.
            f"--service-cluster-ip-range={self.service_cidr}",
            # Explicitly: without it this build resolves webhook Services through their
            # EndpointSlices, whose addresses may not be loopback.
            "--enable-aggregator-routing=false",
            # The endpoint reconciler refuses a loopback advertise address; nothing here needs
            # the `kubernetes` Service's endpoints.
            "--endpoint-reconciler-type=none",
            "--allow-privileged=true",
            "--profiling=false",
            "--v=1",
        ]

    def _start_etcd(self) -> None:
        log = self.log_dir / "etcd.log"
        self.etcd_proc = self._spawn(
            [
                str(self.bin_dir / "etcd"),
                f"--data-dir={self.etcd_data}",
                f"--listen-client-urls={self.etcd_url}",
                f"--listen-peer-urls=http://127.0.0.1:{self.etcd_peer_port}",
            ],
            log,
        )
        self._wait(self.etcd_proc, log, self._etcd_ready, "etcd")

    def _spawn(self, cmd: list[str], log: Path, env: dict[str, str] | None = None,
               pass_fds: tuple[int, ...] = ()) -> subprocess.Popen:
        with open(log, "ab") as out:
            # Own session → own process group, so kill_group reaches every child and Ctrl-C in
            # the terminal does not race our orderly stop.
            return subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                    start_new_session=True, cwd=self.workdir, env=env, pass_fds=pass_fds,
                                    preexec_fn=None if self.outlive_parent else _die_with_parent)

    def _wait(self, proc: subprocess.Popen, log: Path, ready, name: str) -> None:
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                raise ClusterError(f"{name} exited with code {proc.returncode}; log {log}:\n{_log_tail(log)}")
            if ready():
                return
            time.sleep(0.2)
        raise ClusterError(f"{name} not ready after {START_TIMEOUT:.0f}s; log {log}:\n{_log_tail(log)}")

    def _etcd_ready(self) -> bool:
        try:
            with urllib.request.urlopen(self.etcd_url + "/health", timeout=2) as response:
                return json.loads(response.read()).get("health") == "true"
        except (OSError, ValueError):
            return False

    def _ssl_context(self) -> ssl.SSLContext:
        return ssl.create_default_context(cafile=str(self.ca_file))

    def _apiserver_ready(self) -> bool:
        try:
            return self.get("/readyz").strip() == b"ok"
        except (OSError, urllib.error.URLError, ssl.SSLError):
            return False
