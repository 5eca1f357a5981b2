"""Where a redirect may lead: the one rule of every client that follows redirects (the registry
client, a kustomization's remote files; the API client follows none, net/transport.py).

A redirect is followed to https, or to plain http on a host the user named for plain HTTP: its
host and port exactly as named (`--plain-http HOST[:PORT]` for registries; for a remote file, the
host of the http:// URL the kustomization or a --remote-mirror names). Never to another scheme,
never to a URL carrying user info, never from https down to http on a host not so named. The
same rule says where plain HTTP may be spoken at all (a registry's token realm). git follows a
source's or a remote base's redirects itself, so the rule is given to it as settings (`git_env`).
"""

from __future__ import annotations

import os
from typing import Collection

from trainerctl.trust.redact import redact_url
from trainerctl.trust.safe_text import clean

_DEFAULT_PORTS = {"http": 80, "https": 443}


class RedirectRefused(Exception):
    """A redirect the rule does not follow; its message says where it led and why not."""


def host_port(netloc: str, scheme: str = "http") -> str:
    """`netloc` as the rule compares hosts: lower-case host, explicit port (`myreg` is `myreg:80`
    over http), no user info."""
    from urllib.parse import urlsplit  # only a build with a remote file, or a registry, gets here

    try:
        parts = urlsplit(f"{scheme}://{netloc.rpartition('@')[2]}")
        port = parts.port
    except ValueError:  # a port that is no number
        return netloc.lower()
    host = (parts.hostname or "").lower()
    if ":" in host:  # IPv6
        host = f"[{host}]"
    return f"{host}:{port if port is not None else _DEFAULT_PORTS.get(scheme, 0)}"


def plain_http_allowed(url: str, plain_http: Collection[str]) -> bool:
    """Whether `url` may be spoken to: https, or http on a host of `plain_http` (HOST[:PORT])."""
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    if parts.scheme == "https":
        return True
    named = {host_port(h) for h in plain_http}
    return parts.scheme == "http" and host_port(parts.netloc) in named


def follow(current: str, location: str, plain_http: Collection[str], hint: str = "") -> str:
    """The absolute URL the redirect from `current` to `location` leads to; RedirectRefused when
    the rule does not follow it (`hint` says how the user could allow plain HTTP)."""
    from urllib.parse import urljoin, urlsplit

    target = urljoin(current, location.strip())
    parts = urlsplit(target)
    shown = clean(redact_url(target), 200)
    try:
        user = parts.username is not None or "@" in parts.netloc
    except ValueError:
        user = True
    if parts.scheme not in ("https", "http") or not parts.netloc:
        raise RedirectRefused(f"redirects to {shown}, which is not an http(s) URL")
    if user:
        raise RedirectRefused(f"redirects to {shown}, which carries user info")
    if not plain_http_allowed(target, plain_http):
        raise RedirectRefused(f"redirects to {shown}, which is not https" + (f" ({hint})" if hint else ""))
    return target


def git_env(url: str) -> dict[str, str]:
    """The rule as git's settings for one fetch of `url` (git's own HTTP client follows
    redirects): from https only to https (the protocols git may use, redirects included); from a
    plain http URL none at all, since the host it names is the only one named for plain HTTP."""
    scheme = url.partition("://")[0].lower() if "://" in url else ""
    if scheme == "https":
        return {"GIT_ALLOW_PROTOCOL": "https"}
    if scheme != "http":
        return {}
    count = os.environ.get("GIT_CONFIG_COUNT", "0")
    index = int(count) if count.isascii() and count.isdigit() else 0
    return {"GIT_CONFIG_COUNT": str(index + 1), f"GIT_CONFIG_KEY_{index}": "http.followRedirects",
            f"GIT_CONFIG_VALUE_{index}": "false"}
