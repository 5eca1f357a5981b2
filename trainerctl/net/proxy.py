"""Which proxy a request to an API server or a registry goes through, by kubectl's rules.

The cluster's `proxy-url` wins (an API server's); else HTTPS_PROXY (HTTP_PROXY for an http server) unless NO_PROXY
matches, as Go's net/http/httpproxy reads them: upper case first, `*` for everything, host names
matching themselves and their subdomains, IP addresses and CIDR ranges, an optional port. Loopback
addresses and localhost never use a proxy.

trainerctl speaks to http:// proxies (CONNECT tunnels); an https:// or socks5:// proxy is refused
with one line rather than bypassed.
"""

from __future__ import annotations

import base64
import ipaddress
import os
from urllib.parse import unquote, urlsplit

from trainerctl.net.transport import Proxy
from trainerctl.errors import InputError
from trainerctl.trust import redact
from trainerctl.trust.safe_text import clean


def _env(*names: str) -> str:
    for name in names:
        value = os.environ.get(name)
        if value:
            return value
    return ""


def _is_loopback(host: str) -> bool:
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def no_proxy_matches(host: str, port: int, no_proxy: str) -> bool:
    host = host.lower().rstrip(".")
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        ip = None
    for entry in (e.strip().lower() for e in no_proxy.split(",")):
        if not entry:
            continue
        if entry == "*":
            return True
        try:
            network = ipaddress.ip_network(entry, strict=False) if "/" in entry else None
        except ValueError:
            network = None
        if network is not None:
            if ip is not None and ip in network:
                return True
            continue
        name, entry_port = entry, None
        if entry.startswith("[") and "]" in entry:
            name, _, rest = entry[1:].partition("]")
            entry_port = rest[1:] if rest.startswith(":") else None
        elif entry.count(":") == 1:
            name, entry_port = entry.split(":")
        if entry_port and entry_port != str(port):
            continue
        try:
            if ip is not None and ip == ipaddress.ip_address(name):
                return True
        except ValueError:
            pass
        name = name.lstrip("*").rstrip(".")
        if name.startswith("."):
            if host.endswith(name) or host == name[1:]:
                return True
        elif host == name or host.endswith("." + name):
            return True
    return False


def proxy_for(server: str, proxy_url: str, where: str) -> Proxy | None:
    """The proxy for `server` (None: connect directly)."""
    target = urlsplit(server)
    host, port = target.hostname or "", target.port or (443 if target.scheme == "https" else 80)
    source = f"{where}: proxy-url"
    if not proxy_url:
        if _is_loopback(host):
            return None
        proxy_url = _env("HTTPS_PROXY", "https_proxy") if target.scheme == "https" else _env("HTTP_PROXY", "http_proxy")
        source = "HTTPS_PROXY" if target.scheme == "https" else "HTTP_PROXY"
        if not proxy_url or no_proxy_matches(host, port, _env("NO_PROXY", "no_proxy")):
            return None
    redact.register_url(proxy_url)
    if "://" not in proxy_url:
        proxy_url = "http://" + proxy_url
    parts = urlsplit(proxy_url)
    shown = redact.redact_url(clean(proxy_url, 200))
    if parts.scheme != "http":
        raise InputError(f"{source} {shown}: trainerctl connects through http:// proxies only "
                         f"(not {clean(parts.scheme, 20)}://)")
    try:
        proxy_port = parts.port or 80
    except ValueError:
        raise InputError(f"{source} {shown}: not a valid proxy URL") from None
    if not parts.hostname:
        raise InputError(f"{source} {shown}: not a valid proxy URL")
    authorization = None
    if parts.username is not None:
        raw = f"{unquote(parts.username)}:{unquote(parts.password or '')}"
        authorization = "Basic " + base64.b64encode(raw.encode("utf-8")).decode()
        redact.register(authorization[6:])
    return Proxy(parts.hostname, proxy_port, authorization)
