"""One connection to the cluster for the whole run: raw JSON requests to an untrusted server.

The kubeconfig is read as kubectl reads it (client/kubeconfig_files.py), credentials come from
client/credentials.py, and bytes travel through net/transport.py, which bounds every exchange
in time and size. This module adds the API's rules on top:
- a 2xx answer must be a JSON object (a list is an object with `items`); null, [], a string, HTML
  or a truncated body is one line, exit 1, naming the request;
- 429 and 503 are retried briefly, honouring Retry-After in both of its forms (seconds, or an
  HTTP date), capped, like client-go; every request we send is safe to repeat;
- a 3xx is never followed (credentials stay with the server they were meant for);
- the server's own words (Status.message, or the body) are cleaned of control characters and cut
  to a sane length before anything prints them;
- every command has a deadline (TRAINERCTL_COMMAND_TIMEOUT, default one hour) beyond the time-out
  of each request (trust/limits.py's "request-time"), and a part of a command can have its own
  (`within`: each part of a support bundle); a container log is read within the "log" and
  "log-time" limits;
- a list read in pages (`pages`) ends within MAX_LIST_PAGES pages, and a continue token the server
  gives twice ends it at once: how many requests a list costs is never the server's to decide.
"""

from __future__ import annotations

import json
import dataclasses
import os
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Iterator
from urllib.parse import quote, urlencode

from trainerctl.cluster.client import kubeconfig_files
from trainerctl.cluster.client.api_shape import check_body
from trainerctl.cluster.client.credentials import Credentials
from trainerctl.net.proxy import proxy_for
from trainerctl.trust import redact
from trainerctl.trust import interrupts
from trainerctl.trust.document_bounds import MAX_DEPTH, too_deep
from trainerctl.trust.limits import seconds_for
from trainerctl.net.transport import (RequestTimeout, Response, ResponseTooLarge, Transport, Unreachable,
                                      retry_after_seconds)
from trainerctl.errors import InputError, TrainerctlError, WaitTimeout
from trainerctl.trust.safe_text import clean

POOL_SIZE = 16  # >= the apply thread pool, so connections are reused rather than discarded
RETRY_AFTER_CAP = 2.0  # seconds; a server asking for longer is asked again sooner, then given up on
RETRIES = 12
DEFAULT_COMMAND_TIMEOUT = 3600.0
COMMAND_TIMEOUT_ENV = "TRAINERCTL_COMMAND_TIMEOUT"
LIST_PAGE = 500  # objects asked for per page of a list (as kubectl's --chunk-size)
MAX_LIST_PAGES = 1000  # pages of one list (500,000 objects) before trainerctl stops reading it (docs/trust.md)

__all__ = ["ApiError", "BadResponse", "Cluster", "RequestTimeout", "Unreachable", "connect",
           "object_path", "retry_after_seconds"]


class ApiError(TrainerctlError):
    """A non-2xx answer from the API server, with the parts callers branch on."""

    def __init__(self, status: int, reason: str, message: str, details: dict | None = None,
                 method: str = "", path: str = ""):
        super().__init__(message)
        self.status = status
        self.reason = reason
        self.details = details or {}
        self.method = method
        self.path = path
        self.retry_after: str | None = None

    @property
    def causes(self) -> list[dict[str, str]]:
        """The Status's details.causes (metav1.StatusCause: type, message, field, all strings); a
        cause of another shape says nothing trainerctl can read, and the error's message stands."""
        causes = self.details.get("causes")
        keys = ("type", "message", "field")
        return [{k: c.get(k) or "" for k in keys} for c in causes if isinstance(c, dict) and
                all(isinstance(c.get(k) or "", str) for k in keys)] if isinstance(causes, list) else []


class BadResponse(TrainerctlError):
    """A 2xx answer that is not what the API promises (exit 1: the server misbehaved)."""


def _command_timeout() -> float:
    raw = os.environ.get(COMMAND_TIMEOUT_ENV, "").strip()
    if not raw:
        return DEFAULT_COMMAND_TIMEOUT
    try:
        value = float(raw)
    except ValueError:
        value = -1
    if not (0 < value < float("inf")):
        raise InputError(f"{COMMAND_TIMEOUT_ENV} {clean(raw, 40)!r}: expected a number of seconds")
    return value


@dataclass
class Cluster:
    """The API client for one run plus the context it came from."""

    transport: Transport
    credentials: Credentials | None
    context: str
    server: str  # as messages show it (no password)
    deadline: float = field(default_factory=lambda: time.monotonic() + _command_timeout())
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _pause: threading.Event = field(default_factory=threading.Event, repr=False)
    part: str = ""  # set by within(): what the deadline is for, when it is not the command's
    # Logs given up on (endless, dripping, too large), by pod path, container and previous: shared
    # by every part of the command (within() copies the reference), so no log costs its limit twice.
    _given_up: dict = field(default_factory=dict, repr=False)

    def within(self, seconds: float, what: str) -> "Cluster":
        """The same connection for one part of the command, whose requests all end by `seconds`
        from now (or the command's deadline, if sooner): a slow part is given up, the rest goes on."""
        deadline = time.monotonic() + seconds
        if deadline >= self.deadline:
            return self
        return dataclasses.replace(self, deadline=deadline, part=f"{what} ({seconds:g}s)")

    def request(self, method: str, path: str, **kwargs: Any) -> dict:
        """Send one request; returns the decoded JSON body (empty dict for no body)."""
        return self.call(method, path, **kwargs)[1]

    def get_or_none(self, path: str, **kwargs: Any) -> dict | None:
        """GET one object or list; None when the API server answers 404 (the object, or its API, is not there)."""
        try:
            return self.request("GET", path, **kwargs)
        except ApiError as exc:
            if exc.status == 404:
                return None
            raise

    def items(self, path: str, *, query: dict | None = None) -> list:
        """GET a list whose items the caller reads through their views (client/views): the list is
        checked here, each item by its view, so one item that does not fit costs only itself."""
        return self.call("GET", path, query=query, items_checked=False)[1].get("items") or []

    def pages(self, path: str, *, query: dict | None = None, page: int = LIST_PAGE, **kwargs: Any) -> Iterator[dict]:
        """Each page of a list (`limit`/`continue`), as call() decodes it (`kwargs`: accept,
        items_checked). BadResponse when the server gives a continue token twice or the list goes on
        past MAX_LIST_PAGES pages: a server that never ends a list cannot make a command loop."""
        token, given = None, set()
        for _ in range(MAX_LIST_PAGES):
            answer = self.call("GET", path, query={**(query or {}), "limit": str(page), "continue": token},
                               **kwargs)[1]
            yield answer
            token = (answer.get("metadata") or {}).get("continue")
            if not token:
                return
            if token in given:
                raise BadResponse(f"GET {clean(path, 200)}: {self.server} gave the same continue token twice: the "
                                  "list would never end")
            given.add(token)
        raise BadResponse(f"GET {clean(path, 200)}: the list of {self.server} did not end within {MAX_LIST_PAGES} "
                          f"pages of {page}; trainerctl reads no more of it")

    def text(self, path: str, *, query: dict | None = None) -> str:
        """GET a plain-text answer, a container's log, within the "log" and "log-time" limits
        (whatever tailLines or limitBytes the query asks the server for); errors as for request().
        A log those limits ended (an endless or dripping one) is not asked for again by this
        command: the status, the diagnosis and the support bundle all read the same logs, and each
        read would cost the whole limit again."""
        key = (path, (query or {}).get("container"), (query or {}).get("previous"))
        if key in self._given_up:
            raise type(self._given_up[key])(f"{self._given_up[key]} (earlier in this command; not asked again)")
        try:
            return self.call("GET", path, query=query, accept="text/plain, */*", timeout=seconds_for("log-time"),
                             raw=True, limit="log")[1]
        except (RequestTimeout, ResponseTooLarge) as exc:
            if time.monotonic() < self.deadline:  # the log's own limit ended it, not the part's or command's
                self._given_up[key] = exc
            raise

    def call(self, method: str, path: str, *, query: dict | None = None, body: Any = None,
             content_type: str = "application/json", accept: str = "application/json",
             timeout: float | None = None, raw: bool = False, limit: str = "api-response",
             items_checked: bool = True) -> tuple[int, Any]:
        """Send one request; returns (HTTP status, decoded JSON body, or the text when raw).
        `timeout`: seconds for each attempt (default: the "request-time" limit); `limit`: the
        trust/limits.py limit on the answer's bytes; `items_checked=False`: see items()."""
        delay = 0.1
        refreshed = False
        timeout = seconds_for("request-time") if timeout is None else timeout
        for attempt in range(RETRIES):
            try:
                return self._call_once(method, path, query, body, content_type, accept, timeout, raw, limit,
                                       items_checked)
            except ApiError as exc:
                if exc.status == 401 and not refreshed and self.credentials is not None and self.credentials.forget():
                    refreshed = True  # an exec plugin's credential may have expired early: ask once more
                    continue
                if exc.status not in (429, 503) or attempt == RETRIES - 1:
                    raise
                wait = retry_after_seconds(exc.retry_after)
                self._sleep(min(delay if wait is None else wait, RETRY_AFTER_CAP))
                delay = min(delay * 2, 1.0)
        raise AssertionError("unreachable")

    def _sleep(self, seconds: float) -> None:
        if time.monotonic() + seconds > self.deadline:
            raise self._deadline_passed()
        if self._pause.wait(seconds) or interrupts.interrupted():
            raise KeyboardInterrupt

    def _deadline_passed(self) -> WaitTimeout:
        if self.part:
            return WaitTimeout(f"{self.part} did not finish in time talking to {self.server}")
        return WaitTimeout(f"the command did not finish within {COMMAND_TIMEOUT_ENV} "
                           f"({_command_timeout():.0f}s) talking to {self.server}")

    def abort(self) -> None:
        self._pause.set()
        self.transport.abort()
        if self.credentials is not None:
            self.credentials.abort()

    def resume(self) -> None:
        """After abort(): requests go out again, for what an interrupted command must still undo
        (the process still leaves within interrupts.GRACE_SECONDS)."""
        self.transport.resume()

    def _call_once(self, method: str, path: str, query: dict | None, body: Any, content_type: str, accept: str,
                   timeout: float, raw_text: bool = False, limit: str = "api-response",
                   items_checked: bool = True) -> tuple[int, Any]:
        now = time.monotonic()
        if now >= self.deadline:
            raise self._deadline_passed()
        target = path
        if query:
            target += "?" + urlencode({k: v for k, v in query.items() if v is not None}, doseq=True)
        headers = [("Accept", accept), ("User-Agent", "trainerctl")]
        if self.credentials is not None:
            headers += self.credentials.headers()
        data = None
        if body is not None:
            data = body if isinstance(body, bytes) else (
                body.encode("utf-8") if isinstance(body, str) else json.dumps(body, separators=(",", ":")).encode())
            headers.append(("Content-Type", content_type))
        resp = self.transport.request(method, target, headers=headers, body=data,
                                      deadline=min(now + timeout, self.deadline), limit=limit)
        if 200 <= resp.status < 300:
            if raw_text:
                return resp.status, resp.body.decode("utf-8", "replace")
            return resp.status, decode_body(resp, method, path, self.server, items_checked)
        err = _api_error(resp, method, path, self.context, self.server)
        err.retry_after = resp.headers.get("retry-after")
        raise err


def decode_body(resp: Response, method: str, path: str, server: str, items_checked: bool = True) -> dict:
    """A 2xx body: empty, or one JSON object of bounded nesting."""
    raw = resp.body
    if not raw.strip():
        return {}
    what = f"{method} {clean(path, 200)}: the answer of {server}"
    try:
        payload = json.loads(raw)
    except RecursionError:
        raise BadResponse(f"{what} is nested deeper than {MAX_DEPTH} levels") from None
    except ValueError:
        kind = resp.headers.get("content-type", "").split(";")[0].strip() or "no content type"
        raise BadResponse(f"{what} is not JSON ({clean(kind, 60)}, {len(raw)} bytes); is the kubeconfig's server "
                          "an API server?") from None
    if not isinstance(payload, dict):
        raise BadResponse(f"{what} is JSON {type(payload).__name__ if payload is not None else 'null'}, not an "
                          "object as the API promises")
    if too_deep(payload):
        raise BadResponse(f"{what} is nested deeper than {MAX_DEPTH} levels")
    return check_body(payload, what, items=items_checked)


def _api_error(resp: Response, method: str, path: str, context: str, server: str) -> ApiError:
    status, raw = resp.status, resp.body
    try:
        payload = json.loads(raw) if raw.strip() else {}
    except (ValueError, RecursionError):
        payload = {}
    if not isinstance(payload, dict):
        payload = {}
    message = payload.get("message")
    if not isinstance(message, str) or not message.strip():
        text = raw[:4000].decode("utf-8", "replace").strip()
        message = text if text and "<html" not in text[:200].lower() else f"HTTP {status} {resp.reason}".strip()
    message = clean(message)
    reason = payload.get("reason") if isinstance(payload.get("reason"), str) else ""
    details = payload.get("details") if isinstance(payload.get("details"), dict) else None
    if status == 401:
        message = (f"the API server rejected the credentials of context {clean(context, 100)} (401 Unauthorized): "
                   "the token is expired or invalid; refresh your kubeconfig")
    elif status == 403:
        message = f"forbidden: {message}"
    elif 300 <= status < 400:
        where = resp.headers.get("location", "")
        message = (f"{method} {clean(path, 200)}: {server} answered {status} (a redirect"
                   f"{' to ' + redact.redact_url(clean(where, 200)) if where else ''}); trainerctl does not follow "
                   "redirects: put the API server's own URL in the kubeconfig")
    return ApiError(status, clean(reason, 100), message, details, method, path)


def connect(kubeconfig: str | None = None, context: str | None = None, *, stdin_in_use: bool = False) -> Cluster:
    """The cluster of the kubeconfig context (or the pod's service account), for one run.

    Reads only the kubeconfig: token files, certificates and exec plugins are read or run at
    the first request, after the command has checked its own input."""
    selected = kubeconfig_files.load(kubeconfig, context)
    server = selected.cluster.server
    shown = redact.redact_url(clean(server, 200))
    credentials = Credentials(selected, stdin_in_use=stdin_in_use)
    https = selected.secure
    transport = Transport(server, tls=credentials.tls_context if https else None,
                          server_hostname=selected.cluster.tls_server_name or None,
                          proxy=proxy_for(server, selected.cluster.proxy_url, selected.where),
                          pool_size=POOL_SIZE, describe=f"{shown} (context {clean(selected.context, 100)})")
    cluster = Cluster(transport, credentials, selected.context, shown)
    interrupts.on_interrupt(cluster.abort)
    return cluster


def object_path(group: str, version: str, resource: str, namespace: str | None, name: str | None = None) -> str:
    base = f"/api/{version}" if not group else f"/apis/{group}/{version}"
    if namespace:
        base += f"/namespaces/{quote(namespace, safe='')}"
    base += f"/{resource}"
    if name:
        base += f"/{quote(name, safe='')}"
    return base
