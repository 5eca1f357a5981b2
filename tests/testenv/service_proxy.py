"""A loopback service proxy: ClusterIP:port reaches a ready endpoint's address:targetPort.

The test cluster's ClusterIPs are loopback addresses (a per-cluster 127.x.0.0/16), so this process
can listen on exactly the address kube-apiserver dials for a webhook Service, with no iptables. It
reads Services and the EndpointSlices that kube-controller-manager writes, and forwards each
connection to a ready endpoint, as kube-proxy would; when an endpoint refuses (a pod that just
died but is still listed as ready), it tries the next one.

Like kube-proxy, a Service port with no ready endpoint refuses connections (kube-proxy's REJECT
rule), and so does one whose every endpoint refuses (kube-proxy's DNAT sends the SYN to the pod,
whose kernel refuses it: a targetPort nobody listens on). This proxy accepts before it dials, so
it must know before a connection comes: an endpoint of a process pod is looked up in the pod's
own sockets when it appears, and while it refuses (podnet.listening: no connection, so nothing
in the pod's log). A port whose every endpoint refuses is not listened on, so the kernel refuses
for it. An endpoint this proxy cannot look into, that refuses a dial anyway (a pod that just
died), costs that one connection (accepted, then closed: the client sees EOF); the port is then
not listened on until the endpoint accepts again (a connect, each poll) or the endpoints change.

It also forwards the pod network's gateway:443 to kube-apiserver, which listens on 127.0.0.1 only:
that is where process pods reach the API server (KUBERNETES_SERVICE_HOST).

    python -m tests.testenv.service_proxy --kubeconfig admin.kubeconfig --service-cidr 127.101.0.0/16 \
        --forward 10.213.1.1:443=127.0.0.1:6443
"""

from __future__ import annotations

import argparse
import asyncio
import ipaddress
import random
import signal
import socket
import sys
import threading
import time

from tests.testenv.api import Api
from tests.testenv.podnet import listening

POLL_SECONDS = 0.3
CONNECT_TIMEOUT = 1.0

Key = tuple[str, int]


def desired_routes(services: list[dict], slices: list[dict], cidr: ipaddress.IPv4Network) -> dict[Key, list[Key]]:
    """(clusterIP, port) -> ready (address, port) endpoints, from Service and EndpointSlice lists."""
    by_service: dict[tuple[str, str], list[dict]] = {}
    for sl in slices:
        meta = sl.get("metadata") or {}
        name = (meta.get("labels") or {}).get("kubernetes.io/service-name")
        if name and sl.get("addressType") == "IPv4":
            by_service.setdefault((meta.get("namespace", ""), name), []).append(sl)
    routes: dict[Key, list[Key]] = {}
    for svc in services:
        meta, spec = svc.get("metadata") or {}, svc.get("spec") or {}
        cluster_ip = spec.get("clusterIP")
        try:
            if not cluster_ip or ipaddress.ip_address(cluster_ip) not in cidr:
                continue
        except ValueError:  # "None" (headless)
            continue
        for port in spec.get("ports") or []:
            if port.get("protocol", "TCP") != "TCP":
                continue
            backends: list[Key] = []
            for sl in by_service.get((meta.get("namespace", ""), meta.get("name", "")), []):
                for sp in sl.get("ports") or []:
                    if (sp.get("name") or "") != (port.get("name") or "") or not sp.get("port"):
                        continue
                    for ep in sl.get("endpoints") or []:
                        if (ep.get("conditions") or {}).get("ready") is False:
                            continue
                        backends.extend((addr, sp["port"]) for addr in ep.get("addresses") or [])
            routes[(cluster_ip, port["port"])] = sorted(set(backends))
    return routes


class Proxy:
    def __init__(self, static: dict[Key, list[Key]]):
        self.static = static
        self.routes: dict[Key, list[Key]] = dict(static)
        self.servers: dict[Key, asyncio.base_events.Server] = {}
        self.loop: asyncio.AbstractEventLoop | None = None
        self.refusing: set[Key] = set()  # endpoints known to refuse (changed in the loop only)
        self.seen: set[Key] = set()  # endpoints looked up already (the poll thread's)

    def _listening(self) -> list[Key]:
        """The ports to listen on: those with an endpoint not known to refuse (see the module doc)."""
        return [key for key, backends in self.routes.items()
                if key in self.static or any(b not in self.refusing for b in backends)]

    async def apply(self, routes: dict[Key, list[Key]], answering: frozenset[Key] = frozenset(),
                    refused: frozenset[Key] = frozenset()) -> None:
        """Listen for `routes`; `answering`: endpoints that listen again; `refused`: new ones that do not."""
        self.routes = {**routes, **self.static}
        live = {b for backends in self.routes.values() for b in backends}
        self.refusing = {b for b in self.refusing | refused if b in live and b not in answering}
        wanted = self._listening()
        for key in list(self.servers):
            if key not in wanted:
                self.servers.pop(key).close()
        for key in wanted:
            if key not in self.servers:
                try:
                    self.servers[key] = await asyncio.start_server(
                        lambda r, w, key=key: self.handle(key, r, w), host=key[0], port=key[1], reuse_address=True)
                except OSError as exc:
                    _log(f"cannot listen on {key[0]}:{key[1]}: {exc}")

    async def handle(self, key: Key, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        backends = list(self.routes.get(key) or [])
        random.shuffle(backends)
        upstream = None
        failures = []
        refused: list[Key] = []
        for host, port in backends:
            try:
                upstream = await asyncio.wait_for(asyncio.open_connection(host, port), CONNECT_TIMEOUT)
                break
            except (OSError, asyncio.TimeoutError) as exc:
                failures.append(f"{host}:{port} ({exc or type(exc).__name__})")
                if isinstance(exc, ConnectionRefusedError):
                    refused.append((host, port))
        if upstream is None:
            # Accepted already, so closed; the next connections are refused (see the module doc).
            _log(f"{key[0]}:{key[1]}: no endpoint answers: {', '.join(failures) or 'none is ready'}")
            writer.close()
            if refused and len(refused) == len(backends):
                self.refusing.update(refused)
                await self.apply({k: v for k, v in self.routes.items() if k not in self.static})
            return
        up_reader, up_writer = upstream
        await asyncio.gather(_pipe(reader, up_writer), _pipe(up_reader, writer))

    async def serve(self, refresh) -> None:
        self.loop = asyncio.get_running_loop()
        await self.apply({})
        stop = asyncio.Event()
        for sig in (signal.SIGTERM, signal.SIGINT):
            self.loop.add_signal_handler(sig, stop.set)

        def poll() -> None:
            while not stop.is_set():
                try:
                    routes = refresh()
                    live = {b for backends in routes.values() for b in backends}
                    refused = frozenset(b for b in live - self.seen if listening(*b) is False)
                    self.seen = live
                    answering = frozenset(b for b in set(self.refusing) if _answers(b))
                    asyncio.run_coroutine_threadsafe(self.apply(routes, answering, refused), self.loop).result()
                except Exception as exc:  # the API server restarting, say: keep the last routes
                    _log(f"refresh failed: {exc}")
                time.sleep(POLL_SECONDS)

        threading.Thread(target=poll, daemon=True).start()
        await stop.wait()
        for server in self.servers.values():
            server.close()


def _answers(backend: Key) -> bool:
    """Whether an endpoint that refused listens now: looked up in its pod, else connected to."""
    found = listening(*backend)
    if found is not None:
        return found
    try:
        socket.create_connection(backend, timeout=CONNECT_TIMEOUT).close()
    except OSError:
        return False
    return True


def _log(msg: str) -> None:
    print(f"{time.strftime('%Y-%m-%dT%H:%M:%S', time.gmtime())} service-proxy: {msg}", file=sys.stderr, flush=True)


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    except (OSError, asyncio.IncompleteReadError):
        pass
    finally:
        try:
            writer.close()
        except OSError:
            pass


def _key(text: str) -> Key:
    host, port = text.rsplit(":", 1)
    return host, int(port)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="service_proxy")
    parser.add_argument("--kubeconfig", required=True)
    parser.add_argument("--service-cidr", required=True)
    parser.add_argument("--forward", action="append", default=[], help="LISTEN_IP:PORT=TARGET_IP:PORT")
    args = parser.parse_args(argv)
    cidr = ipaddress.ip_network(args.service_cidr)
    static = {_key(a): [_key(b)] for a, b in (f.split("=", 1) for f in args.forward)}
    api = Api.from_kubeconfig(args.kubeconfig)

    def refresh() -> dict[Key, list[Key]]:
        services = api.request("GET", "/api/v1/services").get("items") or []
        slices = api.request("GET", "/apis/discovery.k8s.io/v1/endpointslices").get("items") or []
        return desired_routes(services, slices, cidr)

    asyncio.run(Proxy(static).serve(refresh))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
