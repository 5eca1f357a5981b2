"""Honest waits: poll the real conditions, fail fast on terminal failures, time out with a list.

Every waiter returns the resourceVersion it last saw, so the inventory can record the state
after status writers (CRD establishment, the deployment controller) touched the objects.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable

from trainerctl.cluster.engine.client import Cluster, object_path
from trainerctl.errors import TrainerctlError, WaitTimeout

SERVICE_NAME_LABEL = "kubernetes.io/service-name"


@dataclass
class Pending:
    """One thing we wait for: `check` returns (done, resourceVersion, why-not-yet)."""

    label: str
    check: Callable[[], tuple[bool, str, str]]
    rv: str = ""
    why: str = ""


def _object_check(cluster: Cluster, path: str,
                  judge: Callable[[dict], tuple[bool, str]]) -> Callable[[], tuple[bool, str, str]]:
    """A check that reads one object and judges it: (ready, resourceVersion, why not)."""

    def check() -> tuple[bool, str, str]:
        obj = cluster.get_or_none(path)
        if obj is None:
            return False, "", "not found"
        ok, why = judge(obj)
        return ok, obj["metadata"].get("resourceVersion", ""), why

    return check


def crd_established(cluster: Cluster, name: str) -> Callable[[], tuple[bool, str, str]]:
    path = object_path("apiextensions.k8s.io", "v1", "customresourcedefinitions", None, name)
    return _object_check(cluster, path, crd_is_established)


def crd_is_established(crd: dict) -> tuple[bool, str]:
    conds = {c.get("type"): c for c in (crd.get("status") or {}).get("conditions") or []}
    names = conds.get("NamesAccepted")
    if names and names.get("status") == "False":
        raise TrainerctlError(f"CustomResourceDefinition {crd['metadata']['name']}: names not accepted: "
                              f"{names.get('message', '')}")
    est = conds.get("Established")
    if est and est.get("status") == "True":
        return True, ""
    return False, f"Established={est.get('status') if est else 'unset'}"


def deployment_available(cluster: Cluster, namespace: str, name: str) -> Callable[[], tuple[bool, str, str]]:
    return _object_check(cluster, object_path("apps", "v1", "deployments", namespace, name),
                         deployment_is_available)


def deployment_is_available(dep: dict) -> tuple[bool, str]:
    """Rolled out, as `kubectl rollout status` means it, and available: every replica runs the
    current spec and no pod of an older one is left, terminating ones included. An old controller
    still running undoes what an install does next (Trainer 2.2 puts the legacy finalizer back)
    and may still answer webhook calls. A rollout past its progress deadline is a failure, not a wait."""
    meta, spec, status = dep.get("metadata") or {}, dep.get("spec") or {}, dep.get("status") or {}
    conds = {c.get("type"): c for c in status.get("conditions") or []}
    progressing = conds.get("Progressing") or {}
    if progressing.get("status") == "False" and progressing.get("reason") == "ProgressDeadlineExceeded":
        raise TrainerctlError(
            f"Deployment {meta.get('namespace')}/{meta.get('name')}: rollout failed "
            f"(ProgressDeadlineExceeded): {progressing.get('message', '')}".rstrip(": "))
    if status.get("observedGeneration", 0) < meta.get("generation", 0):
        return False, "rollout of the new spec not observed yet"
    want = spec.get("replicas", 1)
    updated = status.get("updatedReplicas") or 0
    if updated < want:
        return False, f"{updated} of {want} replica(s) updated"
    old = (status.get("replicas") or 0) - updated
    terminating = status.get("terminatingReplicas") or 0  # counted where the API server has the field
    if old > 0 or terminating > 0:
        return False, f"{max(old, 0) + terminating} old replica(s) still running"
    available = status.get("availableReplicas") or 0
    if available < updated:
        return False, f"{available} of {updated} updated replica(s) available"
    avail = conds.get("Available") or {}
    if avail.get("status") != "True":
        reason = avail.get("reason") or "no Available condition"
        return False, f"Available={avail.get('status', 'unset')} ({reason})"
    return True, ""


def service_endpoint_ready(cluster: Cluster, namespace: str, service: str, port: int) -> Callable[[], tuple[bool, str, str]]:
    """The check the API server itself makes before calling a webhook: a ready endpoint on the
    EndpointSlice port named like the Service port the webhook targets."""
    svc_path = object_path("", "v1", "services", namespace, service)
    slices_path = object_path("discovery.k8s.io", "v1", "endpointslices", namespace)

    def check() -> tuple[bool, str, str]:
        svc = cluster.get_or_none(svc_path)
        if svc is None:
            return False, "", "Service not found"
        port_name = None
        for p in (svc.get("spec") or {}).get("ports") or []:
            if p.get("port") == port:
                port_name = p.get("name") or ""
        if port_name is None:
            return False, "", f"Service has no port {port}"
        slices = cluster.request("GET", slices_path, query={"labelSelector": f"{SERVICE_NAME_LABEL}={service}"})
        for sl in slices.get("items") or []:
            if not any((p.get("name") or "") == port_name and p.get("port") for p in sl.get("ports") or []):
                continue
            for ep in sl.get("endpoints") or []:
                if (ep.get("conditions") or {}).get("ready") is not False and ep.get("addresses"):
                    return True, "", ""
        return False, "", "no ready endpoint"

    return check


def wait_all(items: list[Pending], timeout: float, on_wait: Callable[[str, float], None] | None = None,
             what: str = "") -> dict[str, str]:
    """Poll until every item is done; returns label -> last resourceVersion seen."""
    start = time.monotonic()
    deadline = start + timeout
    pending = list(items)
    delay = 0.05
    done: dict[str, str] = {}
    while True:
        still = []
        for item in pending:
            ok, rv, why = item.check()
            if ok:
                done[item.label] = rv
            else:
                item.why = why
                still.append(item)
        pending = still
        if not pending:
            return done
        now = time.monotonic()
        if on_wait:
            on_wait(", ".join(p.label for p in pending), now - start)
        if now >= deadline:
            detail = "; ".join(f"{p.label} ({p.why})" if p.why else p.label for p in pending)
            raise WaitTimeout(f"timed out after {timeout:g}s waiting for {what or 'readiness'}: {detail}")
        time.sleep(min(delay, max(0.0, deadline - now)))
        delay = min(delay * 2, 1.0)
