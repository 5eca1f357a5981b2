"""The test cluster's service proxy refuses as kube-proxy does: a Service port with no ready
endpoint, or whose every endpoint refuses (a targetPort nobody listens on), refuses the
connection itself, so kube-apiserver reports "connection refused" for a webhook behind it, as on
a real cluster; an endpoint that listens again is forwarded to again."""

from __future__ import annotations

import asyncio
import socket
from pathlib import Path

from tests.testenv.podnet import listens
from tests.testenv.service_proxy import Proxy, _answers


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def _dial(port: int) -> str:
    """'refused', 'closed' (accepted, then closed with nothing said) or what the far end sent."""
    try:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
    except ConnectionRefusedError:
        return "refused"
    try:
        data = await asyncio.wait_for(reader.read(100), 5)
    except ConnectionResetError:
        data = b""
    writer.close()
    return data.decode() or "closed"


async def _hello(reader, writer) -> None:
    writer.write(b"hello")
    await writer.drain()
    writer.close()


def test_a_port_nobody_serves_is_refused_and_forwarded_to_again_once_it_listens():
    async def scenario() -> list[str]:
        service, empty, backend = _free_port(), _free_port(), _free_port()
        proxy = Proxy({})
        routes = {("127.0.0.1", service): [("127.0.0.1", backend)], ("127.0.0.1", empty): []}
        await proxy.apply(routes)
        seen = [await _dial(empty)]  # no endpoint at all: never listened on
        # The first dial is accepted before the proxy learns the endpoint refuses (closed, the API
        # server's EOF); from then on the port is refused, as kube-proxy's DNAT to it would be.
        seen += [await _dial(service), await _dial(service)]
        await proxy.apply(routes)  # the next poll: still refusing, still not listened on
        seen.append(await _dial(service))
        server = await asyncio.start_server(_hello, "127.0.0.1", backend)
        answering = await asyncio.to_thread(lambda: frozenset(b for b in set(proxy.refusing) if _answers(b)))
        await proxy.apply(routes, answering)
        seen.append(await _dial(service))
        server.close()
        for s in proxy.servers.values():
            s.close()
        return seen

    assert asyncio.run(scenario()) == ["refused", "closed", "refused", "refused", "hello"]


def test_a_listening_socket_is_found_in_proc_without_connecting():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
        assert not listens(Path("/proc/self/net"), "127.0.0.1", port)  # bound, not listening
        s.listen()
        assert listens(Path("/proc/self/net"), "127.0.0.1", port)
        assert not listens(Path("/proc/self/net"), "10.0.0.1", port)  # bound to loopback: not reached there
    with socket.socket(socket.AF_INET6) as s:
        s.bind(("::", 0))
        s.listen()
        assert listens(Path("/proc/self/net"), "10.0.0.1", s.getsockname()[1])  # any address, v4 too
