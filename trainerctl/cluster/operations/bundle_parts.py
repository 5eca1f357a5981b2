"""Collecting a support bundle's parts from the server: each part under its own deadline, each
object through its view, each failure one line in the bundle's "could not read" list.

A bundle is most wanted when the cluster is broken, so no part may cost the others: a part that
does not answer within trust/limits.py's "bundle-part-time" (an endless or dripping container log,
a silent API server), that answers too much, or whose objects do not fit their views (a
container without a name, a Node without metadata.name) is noted and skipped, and collecting
goes on. Ctrl-C still ends the command. Generic: what to collect for a product is the caller's
(trainer/support.py); the archive and what never goes into it are operations/bundle_archive.py's.
"""

from __future__ import annotations

from typing import Any, Callable, TypeVar

from trainerctl.cluster.client.client import ApiError, Cluster, object_path
from trainerctl.cluster.client.views import Event, Node, Pod, by_time, condition, read_each
from trainerctl.cluster.operations import bundle_archive
from trainerctl.errors import Interrupted, TrainerctlError
from trainerctl.trust.limits import seconds_for

T = TypeVar("T")


def part(bundle: bundle_archive.Bundle, cluster: Cluster, what: str, collect: Callable[[Cluster], T], default: Any = None) -> T:
    """`collect(cluster)` with the part's own deadline; a failure is noted under `what`, and
    `default` returned."""
    scoped = cluster.within(seconds_for("bundle-part-time"), f"collecting {what}")
    try:
        return collect(scoped)
    except Interrupted:
        raise
    except TrainerctlError as exc:
        bundle.note(what, exc)
        return default


def listed(bundle: bundle_archive.Bundle, cluster: Cluster, path: str, read: Callable[[dict], T], what: str,
           query: dict | None = None) -> list[T] | None:
    """A list read into views; each item that does not fit is noted and skipped. None (noted)
    when the list cannot be read at all."""
    try:
        items = cluster.items(path, query=query)
    except ApiError as exc:
        bundle.note(what, exc)
        return None
    skipped: list[str] = []
    found = read_each(read, items, skipped)
    for line in skipped:
        bundle.note(what, line)
    return found


def events(bundle: bundle_archive.Bundle, cluster: Cluster, namespace: str) -> None:
    """The namespace's events, oldest first, as events/<namespace>.json."""
    found = listed(bundle, cluster, object_path("", "v1", "events", namespace), Event.read,
                   f"events in namespace {namespace}")
    if found is None:
        return
    rows = [{"lastSeen": e.last_seen.isoformat() if e.last_seen else "", "type": e.type, "reason": e.reason,
             "object": f"{e.involved.kind}/{e.involved.name}", "count": e.times, "source": e.source,
             "message": e.message} for e in sorted(found, key=by_time)]
    bundle.add_json(f"events/{bundle_archive.member_part(namespace)}.json", rows)


def pod_logs(bundle: bundle_archive.Bundle, cluster: Cluster, pod: Pod) -> None:
    """Each container's current log, and its previous one when it restarted: the last
    LOG_TAIL_LINES lines (the server is asked for at most LOG_LIMIT_BYTES; more than the "log"
    limit is refused whatever it sends), each read a part of its own, as
    logs/<namespace>/<pod>/<container>[.previous].log (the Pod view keeps each name a Kubernetes
    name; bundle.member_part checks each part again, as for every member name)."""
    restarts = {s.name: s.restarts for s in pod.statuses}
    for container in pod.containers:
        for previous in ((False, True) if restarts.get(container.name) else (False,)):
            what = f"{'previous ' if previous else ''}log of {pod.namespace}/{pod.name} {container.name}"
            query = {"container": container.name, "tailLines": str(bundle_archive.LOG_TAIL_LINES),
                     "limitBytes": str(bundle_archive.LOG_LIMIT_BYTES), **({"previous": "true"} if previous else {})}
            path = object_path("", "v1", "pods", pod.namespace, pod.name) + "/log"
            text = part(bundle, cluster, what, lambda c: _log(bundle, c, path, query, what))
            if text is not None:
                bundle.add_text(f"logs/{bundle_archive.member_part(pod.namespace)}/{bundle_archive.member_part(pod.name)}/"
                                f"{bundle_archive.member_part(container.name, 'label')}{'.previous' if previous else ''}.log", text)


def _log(bundle: bundle_archive.Bundle, cluster: Cluster, path: str, query: dict, what: str) -> str | None:
    try:
        return cluster.text(path, query=query)
    except ApiError as exc:
        bundle.note(what, exc)
        return None


def nodes(bundle: bundle_archive.Bundle, cluster: Cluster) -> None:
    """Per node: readiness, schedulability, versions, capacity and taints; no addresses, images or
    machine ids."""
    found = listed(bundle, cluster, "/api/v1/nodes", Node.read, "nodes")
    if found is None:
        return
    rows = [{"name": node.meta.name, "ready": condition(node.conditions, "Ready").status or "Unknown",
             "unschedulable": node.unschedulable,
             # nodeInfo holds versions (kubelet, kernel, OS, container engine) and three machine ids.
             "nodeInfo": {k: v for k, v in node.node_info.items() if k not in bundle_archive.NODE_IDS},
             "zone": node.meta.labels.get("topology.kubernetes.io/zone", ""), "allocatable": node.allocatable,
             "taints": [f"{t.key}={t.value}:{t.effect}" for t in node.taints]} for node in found]
    bundle.add_json("nodes.json", rows)
