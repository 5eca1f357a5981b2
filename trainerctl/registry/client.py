"""Manifest requests to registries: a tag's digest, and whether an image exists.

- Accept names the OCI and Docker indexes and manifests, so a tag resolves to what a runtime pulls
  (a multi-arch image's index digest), never to one platform's manifest.
- HEAD first and its Docker-Content-Digest; a GET and the sha256 of the body when a registry leaves
  the header out (the body must then be a manifest, and match the header when there is one).
- A 401 is met as docker meets it, from its WWW-Authenticate challenge: Bearer gets a token from
  the realm for `repository:NAME:pull` (with the user's credentials, or anonymously), Basic gets the
  user's credentials. Tokens and Basic headers are kept per registry (and scope) for the run.
- Redirects (registry.k8s.io redirects every request) are followed at most 5 times, where
  trainerctl.net.redirects allows (https, or plain http to a host named with --plain-http), and
  without our Authorization header: a new host makes its own challenge.
- 429, 502, 503 and 504 are asked again twice, after Retry-After (at most 2 s each).
- Every request has a deadline and a bounded body (TRAINERCTL_MAX_REGISTRY_RESPONSE), through
  trainerctl.net; every failure is one line naming the image and the registry.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping
from urllib.parse import urlencode, urlsplit

from trainerctl import __version__
from trainerctl.errors import Interrupted, TrainerctlError
from trainerctl.net.proxy import proxy_for
from trainerctl.net.redirects import RedirectRefused, follow, plain_http_allowed
from trainerctl.net.transport import Response, ResponseTooLarge, Transport, Unreachable, retry_after_seconds
from trainerctl.registry.auth import Credential, CredentialStore
from trainerctl.registry.names import DIGEST, Location
from trainerctl.registry.tls import certs_dirs, tls_context
from trainerctl.trust import interrupts, redact
from trainerctl.trust.safe_text import clean

MANIFEST_TYPES = (
    "application/vnd.oci.image.index.v1+json",
    "application/vnd.docker.distribution.manifest.list.v2+json",
    "application/vnd.oci.image.manifest.v1+json",
    "application/vnd.docker.distribution.manifest.v2+json",
)
ACCEPT = ", ".join(MANIFEST_TYPES)
REQUEST_TIMEOUT = 60.0
MAX_REDIRECTS = 5
RETRIES = 2
RETRY_CAP = 2.0
_REDIRECTS = (301, 302, 303, 307, 308)
_RETRIED = (429, 502, 503, 504)
_CHALLENGE_PARAM = re.compile(r'\s*([A-Za-z0-9_-]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s,]*))\s*(?:,|$)')


class RegistryError(TrainerctlError):
    """A registry could not answer for an image (exit 1; `check` reports it as a failed check)."""


class NotFound(RegistryError):
    """The registry says the image (its tag or digest, or its repository) does not exist."""


@dataclass(frozen=True)
class RegistrySettings:
    """How to reach registries: credentials, extra trust, registries served over plain HTTP."""

    config_file: str | None = None  # --registry-config; None: docker's and podman's files
    ca_file: str | None = None  # --registry-ca: a PEM bundle trusted for every registry
    plain_http: frozenset[str] = frozenset()  # --plain-http HOST[:PORT]
    certs_dirs: tuple[Path, ...] | None = None  # None: the certs.d folders containers use

    def checked(self) -> "RegistrySettings":
        """Read what the user named (--registry-config, --registry-ca) now, before any other work:
        a missing or malformed file is one line, exit 2."""
        if self.config_file is not None:
            CredentialStore(self.config_file).files()
        if self.ca_file is not None:
            tls_context("", self.ca_file, [])
        return self


def parse_challenge(header: str) -> tuple[str, dict[str, str]] | None:
    """(scheme, params) of a WWW-Authenticate value, Bearer preferred when several are offered."""
    found: list[tuple[str, dict[str, str]]] = []
    rest = header.strip()
    while rest:
        match = re.match(r"([A-Za-z][A-Za-z0-9_-]*)\s*", rest)
        if not match:
            break
        scheme, rest = match.group(1).lower(), rest[match.end():]
        params: dict[str, str] = {}
        while True:
            param = _CHALLENGE_PARAM.match(rest)
            if not param:
                break
            value = param.group(2) if param.group(2) is not None else param.group(3)
            params[param.group(1).lower()] = re.sub(r"\\(.)", r"\1", value)
            rest = rest[param.end():]
        found.append((scheme, params))
        rest = rest.lstrip(", ")
    for wanted in ("bearer", "basic"):
        for scheme, params in found:
            if scheme == wanted:
                return scheme, params
    return None


def _header_safe(value: str, what: str) -> str:
    if any(c in value for c in "\r\n\0") or not value.isprintable():
        raise RegistryError(f"{what} cannot be sent as a header (it holds a line break or a control character)")
    return value


class Registries:
    """The registries of one run: a transport per host, credentials and tokens kept for the run."""

    def __init__(self, settings: RegistrySettings | None = None, env: Mapping[str, str] | None = None):
        self.settings = settings or RegistrySettings()
        self.credentials = CredentialStore(self.settings.config_file, env)
        self._dirs = list(self.settings.certs_dirs) if self.settings.certs_dirs is not None else certs_dirs(env)
        self._transports: dict[str, Transport] = {}
        self._contexts: dict[str, object] = {}
        self._auth: dict[tuple[str, str], str] = {}  # (host, scope or "") -> Authorization value
        self._lock = threading.Lock()
        interrupts.on_interrupt(self.abort)

    # -- what callers ask -------------------------------------------------------------------
    def digest(self, loc: Location) -> str:
        """The digest `loc` (its tag, or its digest) has at its registry; NotFound if none."""
        resp = self._manifest(loc, "HEAD")
        digest = resp.headers.get("docker-content-digest", "").strip() if 200 <= resp.status < 300 else ""
        if not DIGEST.match(digest):
            resp = self._manifest(loc, "GET")
            digest = self._checked_body_digest(loc, resp)
        if loc.digest and digest != loc.digest:
            raise RegistryError(f"{loc.image}: {loc.api_host} serves it as {digest}, not the digest asked for")
        return digest

    def exists(self, loc: Location) -> bool:
        try:
            self.digest(loc)
        except NotFound:
            return False
        return True

    def abort(self) -> None:
        with self._lock:
            transports = list(self._transports.values())
        for transport in transports:
            transport.abort()

    def close(self) -> None:
        with self._lock:
            transports = list(self._transports.values())
        for transport in transports:
            transport.close()

    # -- the manifest request -------------------------------------------------------------------
    def _scheme(self, host: str) -> str:
        return "http" if host in self.settings.plain_http else "https"

    def _manifest(self, loc: Location, method: str) -> Response:
        url = f"{self._scheme(loc.api_host)}://{loc.api_host}/v2/{loc.repository}/manifests/{loc.reference}"
        scope = f"repository:{loc.repository}:pull"
        for _ in range(MAX_REDIRECTS + 1):
            resp = self._authorized(method, url, scope, loc)
            if resp.status not in _REDIRECTS:
                return self._answer(loc, resp, url, method)
            target = resp.headers.get("location", "").strip()
            if not target:
                raise RegistryError(f"{loc.image}: {urlsplit(url).netloc} answered {resp.status} without a Location")
            try:
                url = follow(url, target, self.settings.plain_http, "--plain-http HOST[:PORT] names a registry "
                                                                     "that may be spoken to over http")
            except RedirectRefused as exc:
                raise RegistryError(f"{loc.image}: {urlsplit(url).netloc} {exc}") from None
        raise RegistryError(f"{loc.image}: more than {MAX_REDIRECTS} redirects from {loc.api_host}")

    def _answer(self, loc: Location, resp: Response, url: str, method: str) -> Response:
        host = urlsplit(url).netloc
        if 200 <= resp.status < 300:
            return resp
        said = _registry_message(resp)
        if method == "HEAD" and resp.status != 404:  # a HEAD has no body to say why: the GET follows
            return resp
        if resp.status == 404:
            raise NotFound(f"{loc.image}: not found at {host}" + (f" ({said})" if said else ""))
        if resp.status == 403:
            raise RegistryError(f"{loc.image}: {host} denied access (403)" + (f": {said}" if said else ""))
        raise RegistryError(f"{loc.image}: {host} answered {resp.status} {clean(resp.reason, 60)}".rstrip()
                            + (f": {said}" if said else ""))

    def _authorized(self, method: str, url: str, scope: str, loc: Location) -> Response:
        host = urlsplit(url).netloc
        headers = [("Accept", ACCEPT), ("User-Agent", f"trainerctl/{__version__}")]
        cached = self._auth.get((host, scope)) or self._auth.get((host, ""))
        resp = self._exchange(method, url, headers + ([("Authorization", cached)] if cached else []), None, loc)
        if resp.status != 401:
            return resp
        challenge = parse_challenge(resp.headers.get("www-authenticate", ""))
        if challenge is None:
            raise RegistryError(f"{loc.image}: {host} answered 401 without a Basic or Bearer challenge")
        kind, params = challenge
        credential = self.credentials.lookup(host, loc.repository)
        if kind == "basic":
            if credential is None or not (credential.username or credential.password):
                raise RegistryError(f"{loc.image}: {host} needs credentials (Basic auth): log in with `docker login "
                                    f"{host}` or `podman login {host}`, or give --registry-config FILE")
            raw = f"{credential.username}:{credential.password}"
            value = "Basic " + base64.b64encode(raw.encode("utf-8")).decode("ascii")
            redact.register(value[6:])
            key = (host, "")
        else:
            value = "Bearer " + self._token(params, scope, credential, loc, host)
            key = (host, scope)
        _header_safe(value, f"the credential for {host}")
        resp = self._exchange(method, url, headers + [("Authorization", value)], None, loc)
        if resp.status == 401:
            who = f"the credentials from {credential.where}" if credential else "anonymous access"
            raise RegistryError(f"{loc.image}: {host} refused {who} (401 after its {kind.capitalize()} challenge)")
        self._auth[key] = value
        return resp

    def _token(self, params: dict[str, str], scope: str, credential: Credential | None, loc: Location,
               host: str) -> str:
        if credential is not None and credential.registry_token:
            return credential.registry_token
        realm = params.get("realm", "")
        parts = urlsplit(realm)
        if not parts.netloc or parts.scheme not in ("https", "http"):
            raise RegistryError(f"{loc.image}: {host} asks for a Bearer token without a usable realm "
                                f"({clean(realm, 200) or 'none'})")
        if not plain_http_allowed(realm, self.settings.plain_http):
            raise RegistryError(f"{loc.image}: {host} sends for a token to {clean(realm, 200)}, which is not https "
                                f"(--plain-http {parts.netloc} allows it)")
        query = [(k, v) for k, v in (("service", params.get("service")), ("scope", params.get("scope") or scope)) if v]
        headers = [("Accept", "application/json"), ("User-Agent", f"trainerctl/{__version__}")]
        who = f"the credentials from {credential.where}" if credential else "anonymous access"
        if credential is not None and credential.identity_token:
            form = urlencode([("grant_type", "refresh_token"), ("client_id", "trainerctl"),
                              ("refresh_token", credential.identity_token), *query]).encode()
            headers.append(("Content-Type", "application/x-www-form-urlencoded"))
            resp = self._exchange("POST", realm, headers, form, loc)
        else:
            if credential is not None and (credential.username or credential.password):
                raw = f"{credential.username}:{credential.password}".encode("utf-8")
                basic = base64.b64encode(raw).decode("ascii")
                redact.register(basic)
                headers.append(("Authorization", _header_safe("Basic " + basic, f"the credential for {host}")))
            separator = "&" if parts.query else "?"
            resp = self._exchange("GET", realm + (separator + urlencode(query) if query else ""), headers, None, loc)
        if resp.status == 401:
            raise RegistryError(f"{loc.image}: the token server {parts.netloc} refused {who} (401)")
        if not 200 <= resp.status < 300:
            said = _registry_message(resp)
            raise RegistryError(f"{loc.image}: the token server {parts.netloc} answered {resp.status}"
                                + (f": {said}" if said else ""))
        try:
            answer = json.loads(resp.body.decode("utf-8"))
        except (UnicodeDecodeError, ValueError, RecursionError):
            answer = None
        # Each of the two names Docker's token spec allows, when present, is a string: a token of
        # another type is no token (never one taken from its other name instead).
        given = {k: answer[k] for k in ("token", "access_token") if answer.get(k) is not None} \
            if isinstance(answer, dict) else {}
        token = given.get("token") or given.get("access_token")
        if not given or not all(isinstance(v, str) for v in given.values()) or not token:
            raise RegistryError(f"{loc.image}: the token server {parts.netloc} did not answer with a token "
                                "(expected JSON with `token` or `access_token`, a string)")
        redact.register(token)
        return _header_safe(token, f"the token from {parts.netloc}")

    # -- one exchange -----------------------------------------------------------------------------
    def _transport(self, scheme: str, host: str) -> Transport:
        key = f"{scheme}://{host}"
        with self._lock:
            transport = self._transports.get(key)
            if transport is None:
                tls = (lambda: self._context(host)) if scheme == "https" else None
                transport = Transport(key, tls=tls, proxy=proxy_for(key, "", "registry"), pool_size=4,
                                      describe=host, peer="the registry", limit="registry-response")
                self._transports[key] = transport
            return transport

    def _context(self, host: str):
        with self._lock:
            context = self._contexts.get(host)
        if context is None:
            context = tls_context(host, self.settings.ca_file, self._dirs)
            with self._lock:
                self._contexts[host] = context
        return context

    def _exchange(self, method: str, url: str, headers: list[tuple[str, str]], body: bytes | None,
                  loc: Location) -> Response:
        parts = urlsplit(url)
        transport = self._transport(parts.scheme, parts.netloc)
        target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        for attempt in range(RETRIES + 1):
            try:
                resp = transport.request(method, target, headers=headers, body=body,
                                         deadline=time.monotonic() + REQUEST_TIMEOUT)
            except Interrupted:
                raise
            except (Unreachable, ResponseTooLarge) as exc:
                raise RegistryError(f"{loc.image}: {exc}") from None
            if resp.status in _RETRIED and attempt < RETRIES:
                wait = retry_after_seconds(resp.headers.get("retry-after"))
                time.sleep(min(RETRY_CAP, 0.5 if wait is None else wait))
                continue
            return resp
        raise AssertionError("unreachable")

    @staticmethod
    def _checked_body_digest(loc: Location, resp: Response) -> str:
        digest = "sha256:" + hashlib.sha256(resp.body).hexdigest()
        try:
            manifest = json.loads(resp.body.decode("utf-8"))
        except (UnicodeDecodeError, ValueError, RecursionError):
            manifest = None
        if not _is_manifest(manifest):
            raise RegistryError(f"{loc.image}: {loc.api_host} answered with something that is not a manifest "
                                f"({len(resp.body)} bytes of {clean(resp.headers.get('content-type', 'no type'), 80)})")
        said = resp.headers.get("docker-content-digest", "").strip()
        if said and said != digest:
            raise RegistryError(f"{loc.image}: {loc.api_host} says the manifest is {clean(said, 100)}, "
                                f"but it hashes to {digest}")
        return digest


def _is_manifest(doc) -> bool:
    """An OCI or Docker image index or manifest, by the types of its fields: schemaVersion 2,
    mediaType a string, manifests and layers lists of mappings (what a runtime pulls by)."""
    if not isinstance(doc, dict) or not any(k in doc for k in ("schemaVersion", "manifests", "layers")):
        return False
    version, media = doc.get("schemaVersion", 2), doc.get("mediaType", "")
    return type(version) is int and version == 2 and isinstance(media, str) and all(
        isinstance(doc.get(k, []), list) and all(isinstance(i, dict) for i in doc.get(k, [])) for k in ("manifests", "layers"))


def _registry_message(resp: Response) -> str:
    """The registry's own words for an error: errors[0] of its JSON, else nothing."""
    try:
        doc = json.loads(resp.body.decode("utf-8")) if resp.body else None
    except (UnicodeDecodeError, ValueError, RecursionError):
        return ""
    errors = doc.get("errors") if isinstance(doc, dict) else None
    first = errors[0] if isinstance(errors, list) and errors and isinstance(errors[0], dict) else {}
    code, message = first.get("code"), first.get("message")
    text = ": ".join(str(x) for x in (code, message) if isinstance(x, str) and x)
    return clean(text, 200)
