"""A support bundle: what a troubleshooter needs from a cluster, in one .tar.gz, and no secret.

Generic collectors over the API (objects, events, pod logs, nodes) and the archive itself. What
to collect for a given product is the caller's.

What never goes in: a Secret's values (Secrets keep only their key names and sizes), webhook and
conversion caBundles, the last-applied-configuration annotation (it can carry a Secret as
applied), managedFields, and the kubeconfig or anything from it. As a second line, every value
of every Secret read while collecting, and the client's own bearer token, is blanked wherever
it shows up (a log line, an event), in plain and in base64 form.

Read failures (403 for a read-only troubleshooter, a kind not served) are recorded as
"could not read", never fatal: a partial bundle is still worth attaching.
"""

from __future__ import annotations

import base64
import io
import json
import os
import tarfile
import time
from dataclasses import dataclass, field
from typing import Any

import yaml

from trainerctl.cluster.client.client import ApiError, Cluster, object_path
from trainerctl.errors import InputError
from trainerctl.redact import redact

LOG_TAIL_LINES = 500
LOG_LIMIT_BYTES = 1024 * 1024
REDACTED = "<redacted>"
ELIDED = "<elided>"
MIN_SECRET_LENGTH = 6
NODE_IDS = ("machineID", "systemUUID", "bootID")  # shorter values ("true", "1") would blank ordinary words


@dataclass
class Bundle:
    root: str  # the folder every member goes under
    files: dict[str, bytes] = field(default_factory=dict)
    unreadable: list[str] = field(default_factory=list)
    secrets: set[str] = field(default_factory=set)  # values to blank wherever they appear

    def add_text(self, path: str, text: str) -> None:
        self.files[path] = text.encode("utf-8")

    def add_json(self, path: str, data: Any) -> None:
        self.add_text(path, json.dumps(data, indent=2, sort_keys=False, default=str) + "\n")

    def add_yaml(self, path: str, data: Any) -> None:
        self.add_text(path, yaml.safe_dump(data, sort_keys=False))

    def note(self, what: str, exc: BaseException | str) -> None:
        """Record what could not be read and why (one line each, in README.txt and manifest.json)."""
        why = f"HTTP {exc.status} {exc.reason or ''}".strip() if isinstance(exc, ApiError) else str(exc)
        self.unreadable.append(f"{what}: {why}")

    def remember_secret(self, value: str | bytes) -> None:
        text = value.decode("utf-8", "replace") if isinstance(value, bytes) else value
        for piece in {text, text.strip()}:
            if len(piece) >= MIN_SECRET_LENGTH:
                self.secrets.add(piece)
                self.secrets.add(base64.b64encode(piece.encode()).decode())
        for line in text.splitlines():  # a PEM block or a multi-line value may be logged line by line
            if len(line.strip()) >= 16:
                self.secrets.add(line.strip())

    def scrubbed(self, data: bytes) -> bytes:
        """`data` through the run's redaction layer (the client's own credentials, exec plugin
        output, URL passwords), then without the Secret values this bundle met."""
        text = redact(data.decode("utf-8", "replace"))
        if not self.secrets:
            return text.encode("utf-8")
        for secret in sorted(self.secrets, key=len, reverse=True):
            if secret in text:
                text = text.replace(secret, REDACTED)
        return text.encode("utf-8")

    def write(self, path: str) -> None:
        """The .tar.gz at `path`, created with mode 0600 (never over an existing file)."""
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            raise InputError(f"--output {path}: the file exists; choose another name") from None
        except OSError as exc:
            raise InputError(f"--output {path}: {exc.strerror}") from None
        now = time.time()
        with os.fdopen(fd, "wb") as out, tarfile.open(fileobj=out, mode="w:gz") as tar:
            for name in sorted(self.files):
                data = self.scrubbed(self.files[name])
                info = tarfile.TarInfo(f"{self.root}/{name}")
                info.size, info.mode, info.mtime = len(data), 0o600, now
                info.uname = info.gname = ""
                tar.addfile(info, io.BytesIO(data))


# -- sanitising objects ------------------------------------------------------------------------
def sanitize(obj: dict, bundle: Bundle | None = None) -> dict:
    """A copy safe to share: no Secret values (key names and sizes instead), no caBundles, no
    last-applied annotation, no managedFields. Secret values go to `bundle`'s blank list."""
    out = json.loads(json.dumps(obj))
    meta = out.get("metadata") or {}
    meta.pop("managedFields", None)
    annotations = meta.get("annotations") or {}
    if "kubectl.kubernetes.io/last-applied-configuration" in annotations:
        annotations["kubectl.kubernetes.io/last-applied-configuration"] = ELIDED
    if out.get("kind") == "Secret":
        for key in ("data", "stringData"):
            values = out.get(key)
            if not isinstance(values, dict):
                continue
            for name, value in values.items():
                raw = value or ""
                if bundle is not None:
                    bundle.remember_secret(raw)
                    if key == "data":
                        try:
                            bundle.remember_secret(base64.b64decode(raw))
                        except ValueError:
                            pass
            out[key] = {name: f"{REDACTED} ({_size(value, key == 'data')} bytes)" for name, value in values.items()}
    for hook in out.get("webhooks") or []:
        if isinstance(hook, dict) and (hook.get("clientConfig") or {}).get("caBundle"):
            hook["clientConfig"]["caBundle"] = ELIDED
    webhook = ((((out.get("spec") or {}).get("conversion") or {}).get("webhook") or {}).get("clientConfig") or {})
    if webhook.get("caBundle"):
        webhook["caBundle"] = ELIDED
    return out


def _size(value: str | None, b64: bool) -> int:
    if not value:
        return 0
    try:
        return len(base64.b64decode(value)) if b64 else len(value.encode())
    except ValueError:
        return len(value)


def object_file(obj: dict) -> str:
    """objects/<group or core>/<Kind>/<namespace or _cluster>/<name>.yaml"""
    api_version = obj.get("apiVersion", "")
    group = api_version.rpartition("/")[0] or "core"
    meta = obj.get("metadata") or {}
    return f"objects/{group}/{obj.get('kind')}/{meta.get('namespace') or '_cluster'}/{meta.get('name')}.yaml"


# -- collectors -----------------------------------------------------------------------------
def add_object(bundle: Bundle, cluster: Cluster, path: str, what: str) -> dict | None:
    """GET one object into objects/; None (and a note) when it cannot be read."""
    try:
        obj = cluster.get_or_none(path)
    except ApiError as exc:
        bundle.note(what, exc)
        return None
    if obj is None:
        bundle.note(what, "not found")
        return None
    safe = sanitize(obj, bundle)
    bundle.add_yaml(object_file(safe), safe)
    return obj


def events(bundle: Bundle, cluster: Cluster, namespace: str) -> list[dict]:
    """The namespace's events, oldest first, as one JSON file."""
    try:
        items = cluster.request("GET", object_path("", "v1", "events", namespace)).get("items") or []
    except ApiError as exc:
        bundle.note(f"events in namespace {namespace}", exc)
        return []

    def when(e: dict) -> str:
        series = e.get("series") or {}
        return series.get("lastObservedTime") or e.get("lastTimestamp") or e.get("eventTime") or ""

    rows = [{"lastSeen": when(e), "type": e.get("type"), "reason": e.get("reason"),
             "object": f"{(e.get('involvedObject') or {}).get('kind')}/{(e.get('involvedObject') or {}).get('name')}",
             "count": e.get("count") or (e.get("series") or {}).get("count") or 1,
             "source": (e.get("source") or {}).get("component") or e.get("reportingComponent") or "",
             "message": e.get("message") or ""} for e in sorted(items, key=when)]
    bundle.add_json(f"events/{namespace}.json", rows)
    return rows


def pod_logs(bundle: Bundle, cluster: Cluster, pod: dict) -> None:
    """Each container's current and previous log, the last LOG_TAIL_LINES lines (at most
    LOG_LIMIT_BYTES), as logs/<namespace>/<pod>/<container>[.previous].log."""
    meta = pod["metadata"]
    statuses = {c.get("name"): c for c in (pod.get("status") or {}).get("containerStatuses") or []}
    for container in (pod.get("spec") or {}).get("containers") or []:
        name = container["name"]
        base = f"logs/{meta['namespace']}/{meta['name']}/{name}"
        restarted = bool((statuses.get(name) or {}).get("restartCount"))
        for previous in ((False, True) if restarted else (False,)):
            query = {"container": name, "tailLines": str(LOG_TAIL_LINES), "limitBytes": str(LOG_LIMIT_BYTES)}
            if previous:
                query["previous"] = "true"
            try:
                text = cluster.text(object_path("", "v1", "pods", meta["namespace"], meta["name"]) + "/log",
                                    query=query)
            except ApiError as exc:
                bundle.note(f"{'previous ' if previous else ''}log of {meta['namespace']}/{meta['name']} {name}", exc)
                continue
            bundle.add_text(f"{base}{'.previous' if previous else ''}.log", text)


def nodes(bundle: Bundle, cluster: Cluster) -> None:
    """Per node: readiness, schedulability, versions, capacity and taints; no addresses, images or
    machine ids."""
    try:
        items = cluster.request("GET", "/api/v1/nodes").get("items") or []
    except ApiError as exc:
        bundle.note("nodes", exc)
        return
    rows = []
    for node in items:
        status, spec = node.get("status") or {}, node.get("spec") or {}
        ready = next((c.get("status") for c in status.get("conditions") or [] if c.get("type") == "Ready"), "Unknown")
        # nodeInfo holds versions (kubelet, kernel, OS, container engine) and three machine ids.
        info = {k: v for k, v in (status.get("nodeInfo") or {}).items() if k not in NODE_IDS}
        labels = (node.get("metadata") or {}).get("labels") or {}
        rows.append({"name": node["metadata"]["name"], "ready": ready, "unschedulable": bool(spec.get("unschedulable")),
                     "nodeInfo": info, "zone": labels.get("topology.kubernetes.io/zone", ""),
                     "allocatable": status.get("allocatable") or {},
                     "taints": [f"{t.get('key')}={t.get('value', '')}:{t.get('effect')}" for t in spec.get("taints") or []]})
    bundle.add_json("nodes.json", rows)
