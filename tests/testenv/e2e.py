"""The e2e test cluster: the base cluster plus the parts that make workloads run.

On top of etcd and kube-apiserver (tests/testenv/cluster.py) it starts, from the binaries
tests/testenv/build.py builds:

- kube-controller-manager (Deployments, ReplicaSets, Jobs, EndpointSlices, namespaces, garbage
  collection, service accounts, PodDisruptionBudgets, ...) and kube-scheduler;
- kwok with NODES fake nodes; its pod stages (kwok's own "fast" stages) run every pod except
  the process pods, and take Job pods to Succeeded. It also serves the nodes' kubelet API (TLS on
  the pod network's gateway, where the nodes' InternalIP points), so kube-apiserver's pods/log
  reaches it: the logs it serves are the process pods' (tests/testenv/kubelet.py);
- the service proxy (tests/testenv/service_proxy.py): ClusterIP:port -> ready endpoint;
- the process kubelet (tests/testenv/kubelet.py): the real Trainer and JobSet controllers for
  pods whose image it knows, each in its own network namespace (tests/testenv/podnet.py).

It needs root (network namespaces, a bridge, chroot) and iproute2's `ip`.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from tests.testenv.api import Api
from tests.testenv.cluster import ClusterError, TestCluster, _log_tail, kill_group
from tests.testenv.known_images import KNOWN, UNPULLABLE_REGISTRY
from tests.testenv.podnet import PodNetwork

REPO = Path(__file__).resolve().parents[2]
NODES = 3
# Small enough that the scheduler's resource fit decides placement in tests that ask for it.
NODE_CAPACITY = {"cpu": "4", "memory": "16Gi", "pods": "110"}
NODE_LABEL = ("type", "kwok")
# How long a Job pod runs before kwok marks it Succeeded.
JOB_POD_RUN_MS = 3000
READY_TIMEOUT = 90.0
# The nodes' kubelet port (daemonEndpoints), where kwok serves their kubelet API.
KUBELET_PORT = 10250
# Parts started after kube-apiserver, in order; stopped in reverse.
PARTS = ("kube-controller-manager", "kube-scheduler", "kwok", "service-proxy", "kubelet")


def missing_prerequisites() -> str | None:
    """Why this machine cannot run the e2e cluster, or None."""
    if os.geteuid() != 0:
        return "the e2e cluster needs root (network namespaces, a bridge and chroot for the process pods)"
    if shutil.which("ip") is None:
        return "the e2e cluster needs iproute2's `ip` (apt-get install iproute2)"
    return None


def node_name(i: int) -> str:
    return f"kwok-node-{i}"


def kwok_stages(stage_dir: Path) -> str:
    """kwok's own node and pod stages; the pod stages skip process pods (known images and the
    unpullable registry's)."""
    import yaml

    repositories = sorted(r for image in KNOWN for r in image.repositories)
    docs = []
    for path in sorted(stage_dir.glob("*.yaml")):
        stage = yaml.safe_load(path.read_text())
        if stage["spec"]["resourceRef"]["kind"] == "Pod":
            stage["spec"]["selector"].setdefault("matchExpressions", []).append({
                # The image without its tag or digest; gojq, as in kwok's other selector keys.
                "key": '.spec.containers.[].image | sub("[:@][^/]*$"; "")',
                "operator": "NotIn",
                "values": repositories,
            })
            stage["spec"]["selector"]["matchExpressions"].append({
                "key": '.spec.containers.[].image | split("/") | .[0]',
                "operator": "NotIn",
                "values": [UNPULLABLE_REGISTRY],
            })
            if stage["metadata"]["name"] == "pod-complete":
                # kwok's "fast" stage ends a Job pod the moment it runs. Then the scheduler may
                # place a job's second pod where the first just finished, which a distributed
                # job (every node running at once) never allows: Job pods run for a moment.
                stage["spec"]["delay"] = {"durationMilliseconds": JOB_POD_RUN_MS}
        docs.append(stage)
    return yaml.safe_dump_all(docs, sort_keys=False)


class E2ECluster(TestCluster):
    """etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kwok nodes, service proxy and
    the process kubelet; start() returns once nodes are Ready and the controllers have set up the
    `default` namespace (ServiceAccount, root CA ConfigMap)."""

    __test__ = False

    def __init__(self, bin_dir: Path | None = None, e2e_bin_dir: Path | None = None, nodes: int = NODES, **kwargs):
        if e2e_bin_dir is None:
            from tests.testenv.build import ensure_e2e_binaries

            e2e_bin_dir = ensure_e2e_binaries()
        super().__init__(bin_dir=bin_dir, **kwargs)
        self.e2e_bin_dir = Path(e2e_bin_dir)
        self.nodes = nodes
        self.net: PodNetwork | None = None
        self._net_fd: int | None = None
        self.procs: dict[str, subprocess.Popen] = {}

    @property
    def node_names(self) -> list[str]:
        return [node_name(i) for i in range(self.nodes)]

    def start(self) -> "E2ECluster":
        try:
            self.net, self._net_fd = PodNetwork.allocate()
            self.service_cidr = f"127.{100 + self.net.index}.0.0/16"
            self.san_ips = (self.net.gateway,)
            self._prepare()
            self._start_etcd()
            self.start_apiserver()
            self._start_parts()
            self._wait_ready()
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        for name in reversed(PARTS):
            proc = self.procs.pop(name, None)
            if proc is not None:
                kill_group(proc)
        if self.net is not None:
            self.net.teardown()  # the kubelet does this on SIGTERM; not if it was killed
        if self._net_fd is not None:
            os.close(self._net_fd)
            self._net_fd = None
        super().stop()

    def api(self) -> Api:
        return Api.from_kubeconfig(self.admin_kubeconfig)

    def _apiserver_args(self) -> list[str]:
        # pods/log, exec and port-forward go to the node's kubelet endpoint: its InternalIP (kwok
        # also gives each node a Hostname address, which nothing here resolves), over TLS checked
        # against the cluster CA (kwok serves with the API server's certificate, valid for the
        # gateway address).
        return [*super()._apiserver_args(), "--kubelet-preferred-address-types=InternalIP",
                f"--kubelet-certificate-authority={self.ca_file}"]

    def part_log(self, name: str) -> Path:
        return self.log_dir / f"{name}.log"

    # -- parts ----------------------------------------------------------------------------
    def _start_parts(self) -> None:
        kubeconfig, pki, e2e = str(self.admin_kubeconfig), self.pki_dir, self.e2e_bin_dir
        index = self.net.index
        (self.workdir / "kwok.yaml").write_text(kwok_stages(e2e / "kwok-stages"))
        python_env = {**os.environ, "PYTHONPATH": str(REPO)}
        commands = {
            "kube-controller-manager": [
                str(e2e / "kube-controller-manager"), f"--kubeconfig={kubeconfig}", "--secure-port=0",
                "--leader-elect=false", "--use-service-account-credentials=false",
                f"--root-ca-file={pki / 'ca.crt'}", f"--service-account-private-key-file={pki / 'sa.key'}",
                "--cluster-name=testenv", "--controllers=*", "--v=1",
            ],
            "kube-scheduler": [str(e2e / "kube-scheduler"), f"--kubeconfig={kubeconfig}", "--secure-port=0",
                               "--leader-elect=false", "--v=1"],
            "kwok": [
                str(e2e / "kwok"), f"--kubeconfig={kubeconfig}", f"--config={self.workdir / 'kwok.yaml'}",
                "--manage-all-nodes=false", f"--manage-nodes-with-label-selector={NODE_LABEL[0]}={NODE_LABEL[1]}",
                f"--cidr=10.214.{index}.0/24", f"--node-ip={self.net.gateway}",
                # Node leases, as a kubelet renews them. Without a KwokConfiguration in --config the
                # default (40) is never applied and leases are off: the heartbeat stage then comes
                # every 10-20 min, the node lifecycle controller marks every node NotReady after 50 s
                # and the controllers' pods unready with it, and a webhook has no endpoint for 5 s
                # of each minute (a Job's pod creation then backs off for minutes).
                "--node-lease-duration-seconds=40",
                # The nodes' kubelet API (logs of the process pods, through the Logs objects the
                # process kubelet writes), on the gateway, so two clusters' kwoks do not collide.
                f"--node-port={KUBELET_PORT}", f"--server-address={self.net.gateway}:{KUBELET_PORT}",
                f"--tls-cert-file={pki / 'serving.crt'}", f"--tls-private-key-file={pki / 'serving.key'}",
                "--enable-crds=Logs",
            ],
            "service-proxy": [
                sys.executable, "-m", "tests.testenv.service_proxy", f"--kubeconfig={kubeconfig}",
                f"--service-cidr={self.service_cidr}", f"--forward={self.net.gateway}:443=127.0.0.1:{self.port}",
            ],
            "kubelet": [
                sys.executable, "-m", "tests.testenv.kubelet", f"--kubeconfig={kubeconfig}", f"--bin-dir={e2e}",
                f"--workdir={self.workdir}", f"--net-index={index}", "--api-port=443",
            ],
        }
        self._install_kwok_crds()
        for name in PARTS:
            python = commands[name][0] == sys.executable
            self.procs[name] = self._spawn(commands[name], self.part_log(name), env=python_env if python else None,
                                           pass_fds=(self._net_fd,) if name == "kubelet" else ())
        self._create_nodes()

    def _install_kwok_crds(self) -> None:
        import yaml

        api = self.api()
        names = []
        for path in sorted((self.e2e_bin_dir / "kwok-crds").glob("*.yaml")):
            crd = yaml.safe_load(path.read_text())
            api.request("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd)
            names.append(crd["metadata"]["name"])
        deadline = time.monotonic() + READY_TIMEOUT
        for name in names:
            while not any(c.get("type") == "Established" and c.get("status") == "True" for c in (
                    api.request("GET", f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{name}")
                    .get("status") or {}).get("conditions") or []):
                if time.monotonic() > deadline:
                    raise ClusterError(f"kwok's CRD {name} not Established after {READY_TIMEOUT:.0f}s")
                time.sleep(0.1)

    def _create_nodes(self) -> None:
        api = self.api()
        for i, name in enumerate(self.node_names):
            api.request("POST", "/api/v1/nodes", {
                "apiVersion": "v1", "kind": "Node",
                "metadata": {"name": name, "labels": {
                    NODE_LABEL[0]: NODE_LABEL[1], "kubernetes.io/hostname": name, "kubernetes.io/os": "linux",
                    "kubernetes.io/arch": "amd64", "topology.kubernetes.io/zone": f"zone-{i}"}},
                "status": {"capacity": NODE_CAPACITY, "allocatable": NODE_CAPACITY},
            })

    def _wait_ready(self) -> None:
        api = self.api()
        deadline = time.monotonic() + READY_TIMEOUT
        waiting = ""
        while time.monotonic() < deadline:
            for name, proc in self.procs.items():
                if proc.poll() is not None:
                    log = self.part_log(name)
                    raise ClusterError(f"{name} exited with code {proc.returncode}; log {log}:\n{_log_tail(log)}")
            waiting = self._not_ready(api)
            if not waiting:
                return
            time.sleep(0.3)
        raise ClusterError(f"e2e cluster not ready after {READY_TIMEOUT:.0f}s: {waiting}; logs in {self.log_dir}")

    def _not_ready(self, api: Api) -> str:
        nodes = api.request("GET", "/api/v1/nodes").get("items") or []
        ready = {n["metadata"]["name"] for n in nodes
                 if any(c.get("type") == "Ready" and c.get("status") == "True"
                        for c in (n.get("status") or {}).get("conditions") or [])}
        if len(ready) < self.nodes:
            return f"{len(ready)}/{self.nodes} kwok nodes Ready"
        if api.get_or_none("/api/v1/namespaces/default/serviceaccounts/default") is None:
            return "kube-controller-manager has not created the default ServiceAccount"
        if api.get_or_none("/api/v1/namespaces/default/configmaps/kube-root-ca.crt") is None:
            return "kube-controller-manager has not published kube-root-ca.crt"
        return ""

    # -- for tests ------------------------------------------------------------------------
    def pod_processes(self) -> dict[str, int]:
        """"namespace/name" -> pid of each process pod's running binary (from the kubelet's state)."""
        out = {}
        for path in (self.workdir / "run").glob("*.pid"):
            try:
                out[path.stem.replace("_", "/", 1)] = int(path.read_text())
            except (OSError, ValueError):
                pass
        return out
