"""Events as a kubelet records them (core/v1, source kubelet on the pod's node).

Repeats of the same event (same object, type, reason and message) are folded into one Event
whose count and lastTimestamp grow, as client-go's event correlator does; the count is written
back at most every FLUSH_SECONDS so a probe that fails every second does not flood the API server.
"""

from __future__ import annotations

import secrets
import time
from dataclasses import dataclass
from datetime import datetime, timezone

from tests.testenv.api import Api, ApiError

FLUSH_SECONDS = 5.0


def _now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass
class _Seen:
    namespace: str
    name: str
    count: int
    written_count: int
    written_at: float


class Recorder:
    def __init__(self, api: Api, component: str = "kubelet"):
        self.api = api
        self.component = component
        self.seen: dict[tuple, _Seen] = {}

    def pod_event(self, pod: dict, type_: str, reason: str, message: str, container: str | None = None) -> None:
        meta = pod["metadata"]
        involved = {"apiVersion": "v1", "kind": "Pod", "namespace": meta["namespace"], "name": meta["name"],
                    "uid": meta["uid"]}
        if container:
            involved["fieldPath"] = f"spec.containers{{{container}}}"
        self.event(involved, type_, reason, message, pod["spec"].get("nodeName", ""))

    def event(self, involved: dict, type_: str, reason: str, message: str, host: str) -> None:
        key = (involved["uid"], involved.get("fieldPath"), type_, reason, message)
        seen = self.seen.get(key)
        ns = involved["namespace"]
        try:
            if seen is None:
                name = f"{involved['name']}.{secrets.token_hex(8)}"
                stamp = _now()
                self.api.request("POST", f"/api/v1/namespaces/{ns}/events", {
                    "apiVersion": "v1", "kind": "Event", "metadata": {"name": name, "namespace": ns},
                    "involvedObject": involved, "type": type_, "reason": reason, "message": message,
                    "source": {"component": self.component, "host": host}, "count": 1,
                    "firstTimestamp": stamp, "lastTimestamp": stamp,
                    "reportingComponent": self.component, "reportingInstance": host})
                self.seen[key] = _Seen(ns, name, 1, 1, time.monotonic())
                return
            seen.count += 1
            self.flush(key)
        except ApiError as exc:
            if exc.status not in (403, 404, 409):  # a namespace going away: nothing to record into
                raise

    def flush(self, key: tuple) -> None:
        seen = self.seen[key]
        if seen.count == seen.written_count or time.monotonic() - seen.written_at < FLUSH_SECONDS:
            return
        try:
            self.api.request("PATCH", f"/api/v1/namespaces/{seen.namespace}/events/{seen.name}",
                             {"count": seen.count, "lastTimestamp": _now()},
                             content_type="application/merge-patch+json")
        except ApiError as exc:
            if exc.status != 404:  # the Event expired or its namespace went: start a new one next time
                raise
            del self.seen[key]
            return
        seen.written_count, seen.written_at = seen.count, time.monotonic()

    def flush_all(self) -> None:
        """Write back counts that grew since their last write (called once per kubelet pass)."""
        for key in list(self.seen):
            self.flush(key)

    def forget(self, uid: str) -> None:
        for key in [k for k in self.seen if k[0] == uid]:
            del self.seen[key]
