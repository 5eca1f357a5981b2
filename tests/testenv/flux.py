"""The real Flux controllers on the e2e cluster: source-controller and kustomize-controller.

Built by tests/testenv/build.py (ensure_flux_binaries) from their released modules, with the CRDs
of those same modules. They run as processes on this machine with the cluster's admin kubeconfig,
as they run in a pod with their service account: source-controller fetches git sources and serves
the artifacts on a loopback port, kustomize-controller downloads them from there, builds and
applies. No notification-controller: they record Kubernetes Events only.
"""

from __future__ import annotations

import json
import os
import time
import urllib.request
from pathlib import Path

import yaml

from tests.testenv.api import Api, ApiError
from tests.testenv.cluster import ClusterError, _log_tail, free_port, kill_group

NAMESPACE = "flux-system"
CONTROLLERS = ("source-controller", "kustomize-controller")
READY_TIMEOUT = 90.0
# How soon a Kustomization whose dependency is not ready yet looks again (Flux's default is 30s;
# `flux install` users lower it the same way).
REQUEUE_DEPENDENCY = "5s"


class FluxControllers:
    """start() installs the CRDs, creates flux-system and waits until both controllers are ready."""

    def __init__(self, cluster, bin_dir: Path):
        self.cluster = cluster
        self.bin_dir = Path(bin_dir)
        self.workdir = Path(cluster.workdir) / "flux"
        self.procs: dict = {}
        self.health: dict[str, int] = {}

    def crds(self) -> list[dict]:
        return [yaml.safe_load(p.read_text()) for p in sorted((self.bin_dir / "crds").glob("*.yaml"))]

    def start(self) -> "FluxControllers":
        api = self.cluster.api()
        try:
            self._install_crds(api)
            try:
                api.request("POST", "/api/v1/namespaces",
                            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}})
            except ApiError as exc:
                if exc.status != 409:
                    raise
            self._spawn()
            self._wait_ready()
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        for name in reversed(CONTROLLERS):
            proc = self.procs.pop(name, None)
            if proc is not None:
                kill_group(proc)

    def log(self, name: str) -> Path:
        return self.cluster.log_dir / f"{name}.log"

    def _install_crds(self, api: Api) -> None:
        for crd in self.crds():
            name = crd["metadata"]["name"]
            api.request("PATCH", f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{name}",
                        crd, query={"fieldManager": "flux-install", "force": "true"},
                        content_type="application/apply-patch+yaml")
        deadline = time.monotonic() + READY_TIMEOUT
        for crd in self.crds():
            path = f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{crd['metadata']['name']}"
            while not any(c.get("type") == "Established" and c.get("status") == "True"
                          for c in (api.request("GET", path).get("status") or {}).get("conditions") or []):
                if time.monotonic() > deadline:
                    raise ClusterError(f"Flux CRD {crd['metadata']['name']} not Established")
                time.sleep(0.2)

    def _spawn(self) -> None:
        storage = self.workdir / "storage"
        storage.mkdir(parents=True, exist_ok=True)
        artifacts = f"127.0.0.1:{free_port()}"
        env = {**os.environ, "KUBECONFIG": str(self.cluster.admin_kubeconfig), "RUNTIME_NAMESPACE": NAMESPACE}
        common = ["--enable-leader-election=false", "--events-addr=", "--log-level=debug", "--log-encoding=json"]
        args = {
            "source-controller": [f"--storage-path={storage}", f"--storage-addr={artifacts}",
                                  f"--storage-adv-addr={artifacts}"],
            "kustomize-controller": [f"--requeue-dependency={REQUEUE_DEPENDENCY}"],
        }
        for name in CONTROLLERS:
            self.health[name] = free_port()
            cmd = [str(self.bin_dir / name), *common, f"--metrics-addr=127.0.0.1:{free_port()}",
                   f"--health-addr=127.0.0.1:{self.health[name]}", *args[name]]
            self.procs[name] = self.cluster._spawn(cmd, self.log(name), env=env)

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + READY_TIMEOUT
        pending = list(CONTROLLERS)
        while pending:
            for name in list(pending):
                proc = self.procs[name]
                if proc.poll() is not None:
                    raise ClusterError(f"{name} exited with code {proc.returncode}; log {self.log(name)}:\n"
                                       f"{_log_tail(self.log(name))}")
                try:
                    with urllib.request.urlopen(f"http://127.0.0.1:{self.health[name]}/readyz", timeout=2) as reply:
                        if reply.status == 200:
                            pending.remove(name)
                except OSError:
                    pass
            if time.monotonic() > deadline:
                raise ClusterError(f"{', '.join(pending)} not ready after {READY_TIMEOUT:.0f}s; logs in "
                                   f"{self.cluster.log_dir}")
            time.sleep(0.3)

    # -- for tests ------------------------------------------------------------------------
    def log_records(self, name: str) -> list[dict]:
        out = []
        for line in self.log(name).read_text(errors="replace").splitlines():
            try:
                out.append(json.loads(line))
            except ValueError:
                pass
        return out
