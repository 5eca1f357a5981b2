"""One connection to the cluster for the whole run: kubeconfig loading and raw JSON requests.

We talk REST through the kubernetes client's configured urllib3 pool (auth, TLS, proxies, exec
plugins all come from the client) but skip its model classes: installs handle arbitrary kinds
and large CRDs, and the models would only add (de)serialisation cost.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote, urlencode

from trainerctl.cluster.engine import kubeconfig as kubeconfig_file
from trainerctl.cluster.engine.kubeconfig import check_inline_data, check_server
from trainerctl.errors import EXIT_PREFLIGHT, InputError, TrainerctlError

POOL_SIZE = 16  # >= the apply thread pool, so connections are reused rather than discarded


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
    def causes(self) -> list[dict]:
        return list(self.details.get("causes") or [])


class Unreachable(TrainerctlError):
    """The API server did not answer: exit 3 for every command, like a failed preflight."""

    exit_code = EXIT_PREFLIGHT


@dataclass
class Cluster:
    """The API client for one run plus the context it came from."""

    api_client: Any
    context: str
    server: str
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

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

    def text(self, path: str, *, query: dict | None = None, timeout: float = 30.0) -> str:
        """GET a plain-text answer (a pod's log); errors as for request()."""
        return self.call("GET", path, query=query, accept="text/plain, */*", timeout=timeout, raw=True)[1]

    def call(self, method: str, path: str, *, query: dict | None = None, body: Any = None,
             content_type: str = "application/json", accept: str = "application/json",
             timeout: float = 60.0, raw: bool = False) -> tuple[int, Any]:
        """Send one request; returns (HTTP status, decoded JSON body, or the text when raw).

        429 and 503 (throttling, a CRD's storage still initialising) are retried briefly, like
        client-go does; every request we send is safe to repeat (GET, apply, guarded patches).
        """
        import time

        delay = 0.1
        for attempt in range(12):
            try:
                return self._call_once(method, path, query, body, content_type, accept, timeout, raw)
            except ApiError as exc:
                if exc.status not in (429, 503) or attempt == 11:
                    raise
                time.sleep(min(float(exc.retry_after or delay), 2.0))
                delay = min(delay * 2, 1.0)
        raise AssertionError("unreachable")

    def _call_once(self, method: str, path: str, query: dict | None, body: Any, content_type: str, accept: str,
                   timeout: float, raw_text: bool = False) -> tuple[int, Any]:
        import urllib3

        cfg = self.api_client.configuration
        url = cfg.host.rstrip("/") + path
        if query:
            url += "?" + urlencode({k: v for k, v in query.items() if v is not None}, doseq=True)
        headers = {"Accept": accept, "User-Agent": "trainerctl"}
        for setting in cfg.auth_settings().values():
            if setting.get("in") == "header" and setting.get("value"):
                headers[setting["key"]] = setting["value"]
        data = None
        if body is not None:
            data = body if isinstance(body, (bytes, str)) else json.dumps(body, separators=(",", ":"))
            headers["Content-Type"] = content_type
        try:
            resp = self.api_client.rest_client.pool_manager.request(
                method, url, body=data, headers=headers, timeout=urllib3.Timeout(total=timeout),
                # Connection-level retries only (a refused or reset connect is safe to repeat);
                # HTTP statuses are handled in call().
                retries=urllib3.Retry(total=2, connect=2, read=0, redirect=0, status=0, backoff_factor=0.1,
                                     respect_retry_after_header=False, raise_on_status=False),
                preload_content=True,
            )
        except urllib3.exceptions.HTTPError as exc:
            raise Unreachable(
                f"cannot reach the API server {self.server} (context {self.context}): {_root_cause(exc)}"
            ) from None
        raw = resp.data
        if 200 <= resp.status < 300:
            if raw_text:
                return resp.status, raw.decode("utf-8", "replace")
            return resp.status, (json.loads(raw) if raw else {})
        err = _api_error(resp.status, raw, method, path, self.context)
        err.retry_after = resp.headers.get("Retry-After")
        raise err


def _root_cause(exc: BaseException) -> str:
    reason = getattr(exc, "reason", None)
    text = str(reason or exc)
    # urllib3 wraps the socket error in a long repr; the tail is the part a human can act on.
    if ": " in text and "Failed to establish a new connection" in text:
        text = text.rsplit("Failed to establish a new connection: ", 1)[-1].rstrip("')\"")
    return text


def _api_error(status: int, raw: bytes, method: str, path: str, context: str) -> ApiError:
    try:
        payload = json.loads(raw)
    except ValueError:
        payload = {}
    if not isinstance(payload, dict):
        payload = {}
    message = payload.get("message") or raw.decode("utf-8", "replace").strip() or f"HTTP {status}"
    reason = payload.get("reason") or ""
    if status == 401:
        message = (f"the API server rejected the credentials of context {context} (401 Unauthorized): "
                   "the token is expired or invalid; refresh your kubeconfig")
    elif status == 403:
        message = f"forbidden: {message}"
    return ApiError(status, reason, message, payload.get("details"), method, path)


_credential_dirs: list[str] = []


def _credential_dir() -> str:
    """A private (0700) directory for the files the kubernetes client decodes credentials into;
    removed at exit (cleanup_credentials; Ctrl-C and SIGTERM unwind to it too)."""
    import atexit
    import tempfile

    if not _credential_dirs:
        atexit.register(cleanup_credentials)
        _credential_dirs.append(tempfile.mkdtemp(prefix="trainerctl-kubeconfig-"))
    return _credential_dirs[0]


def cleanup_credentials() -> None:
    import shutil
    import sys

    while _credential_dirs:
        shutil.rmtree(_credential_dirs.pop(), ignore_errors=True)
    # The kubernetes client caches the file names by content; they are gone now.
    cached = getattr(sys.modules.get("kubernetes.config.kube_config"), "_temp_files", None)
    if isinstance(cached, dict):
        cached.clear()


def connect(kubeconfig: str | None = None, context: str | None = None) -> Cluster:
    """Load the kubeconfig (or the in-cluster config) into one ApiClient reused for the run."""
    import os

    path = kubeconfig or os.environ.get("KUBECONFIG", "").split(os.pathsep)[0] or os.path.expanduser("~/.kube/config")
    if kubeconfig is not None and not kubeconfig.strip():
        raise InputError("--kubeconfig '': expected a kubeconfig file")
    if context is not None and not context.strip():
        raise InputError("--context '': expected a context name")
    if os.path.isdir(path):
        raise InputError(f"kubeconfig {path}: is a directory, not a kubeconfig file")
    if os.path.exists(path) and not os.environ.get("TRAINERCTL_KUBERNETES_CLIENT"):
        loaded = kubeconfig_file.load(path, context, POOL_SIZE)
        if loaded is not None:
            light_client, context_name = loaded
            return Cluster(light_client, context_name, light_client.configuration.host)

    # The kubernetes client (0.3-0.5 s to import) is only for what the light loader above does
    # not handle: exec plugins, auth providers, proxies, in-cluster config.
    from kubernetes import client, config
    from kubernetes.config.config_exception import ConfigException

    cfg = client.Configuration()
    try:
        if not kubeconfig and not os.path.exists(path) and os.environ.get("KUBERNETES_SERVICE_HOST"):
            config.load_incluster_config(client_configuration=cfg)
            context_name = "in-cluster"
        else:
            if not os.path.exists(path):
                raise InputError(f"kubeconfig {path}: file not found (pass --kubeconfig or set KUBECONFIG)")
            contexts, current = config.list_kube_config_contexts(config_file=path)
            names = [c["name"] for c in contexts]
            context_name = context or (current or {}).get("name")
            if context and context not in names:
                raise InputError(f"kubeconfig {path}: unknown context {context!r} (known: {', '.join(names) or 'none'})")
            if not context_name:
                raise InputError(f"kubeconfig {path}: no current-context set; pass --context")
            check_inline_data(path, context_name)
            config.load_kube_config(config_file=path, context=context_name, client_configuration=cfg,
                                    persist_config=False, temp_file_path=_credential_dir())
    except ConfigException as exc:
        raise InputError(f"kubeconfig {path}: {str(exc).splitlines()[0]}") from None
    except InputError:
        raise
    except Exception as exc:  # yaml errors, missing files named inside the kubeconfig, ...
        raise InputError(f"kubeconfig {path}: {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}") from None
    check_server(cfg.host, f"kubeconfig {path}: context {context_name}")
    cfg.connection_pool_maxsize = POOL_SIZE
    return Cluster(client.ApiClient(cfg), context_name, cfg.host)


def object_path(group: str, version: str, resource: str, namespace: str | None, name: str | None = None) -> str:
    base = f"/api/{version}" if not group else f"/apis/{group}/{version}"
    if namespace:
        base += f"/namespaces/{quote(namespace, safe='')}"
    base += f"/{resource}"
    if name:
        base += f"/{quote(name, safe='')}"
    return base
