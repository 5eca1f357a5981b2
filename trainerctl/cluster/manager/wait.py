"""Honest waits: poll the real conditions, fail fast on terminal failures, time out with a list.

Every waiter returns the resourceVersion it last saw, so the inventory can record the state
after status writers (CRD establishment, the deployment controller) touched the objects.

Objects are judged through their views (client/views): one that does not fit is not ready, and
the unreadable line is the reason given (a controller that wrote it may still fix it).

A wait item may say why it is not ready (`diagnose`, manager/diagnose.py): while waiting, the
progress line carries the cause as soon as one is found; a cause that will not heal (final)
ends the wait at once (RolloutFailed, exit 1); a time-out names each item's cause
(RolloutTimeout, exit 4). Both carry the diagnoses for the caller to print in full. The
containers' logs are read from READ_LOGS_AFTER on (what starts well needs no log read), so a
cause the caller's reader finds there (diagnose.LogCause: a permission the controller lacks, an
object it cannot decode) ends the wait seconds in, not at the time-out.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Callable

from trainerctl.cluster.client.client import ApiError, Cluster, object_path
from trainerctl.cluster.client.pool import parallel_map
from trainerctl.cluster.client.views import (CRD, Deployment, EndpointSlice, Service, Unreadable, condition,
                                             read_each)
from trainerctl.cluster.manager.diagnose import Diagnosis
from trainerctl.errors import TrainerctlError, WaitTimeout

SERVICE_NAME_LABEL = "kubernetes.io/service-name"
DIAGNOSE_SECONDS = 2.0  # how often a waiting item is diagnosed (a few reads each)
NOT_READY_GRACE = 20.0  # a starting controller fails its readiness probe for a while: not a cause yet
READ_LOGS_AFTER = 4.0  # a controller still not ready by then has its log read at each diagnosis


@dataclass
class Pending:
    """One thing we wait for: `check` returns (done, resourceVersion, why-not-yet); `diagnose(logs)`
    says why it is not ready."""

    label: str
    check: Callable[[], tuple[bool, str, str]]
    rv: str = ""
    why: str = ""
    diagnose: Callable[[bool], Diagnosis] | None = None
    diagnosis: Diagnosis | None = None

    def cause(self, waited: float) -> str:
        """The cause's headline once one is known (a readiness failure only after a grace), else ""."""
        causes = [c for c in (self.diagnosis.causes if self.diagnosis else [])
                  if c.kind != "not-ready" or waited >= NOT_READY_GRACE]
        return causes[0].headline() if causes else ""

    def shown(self, waited: float) -> str:
        """The label, with the cause once one is known."""
        cause = self.cause(waited)
        return f"{self.label} ({cause})" if cause else self.label


class RolloutFailed(TrainerctlError):
    """A cause that will not heal by itself: the wait ended before its time-out."""

    def __init__(self, message: str, diagnoses: list[Diagnosis]):
        super().__init__(message)
        self.diagnoses = diagnoses


class RolloutTimeout(WaitTimeout):
    def __init__(self, message: str, diagnoses: list[Diagnosis]):
        super().__init__(message)
        self.diagnoses = diagnoses


def _object_check(cluster: Cluster, path: str, read: Callable[[dict], Any],
                  judge: Callable[[Any], tuple[bool, str]]) -> Callable[[], tuple[bool, str, str]]:
    """A check that reads one object through its view and judges it: (ready, resourceVersion, why not)."""

    def check() -> tuple[bool, str, str]:
        obj = cluster.get_or_none(path)
        if obj is None:
            return False, "", "not found"
        try:
            view = read(obj)
        except Unreadable as exc:
            return False, "", str(exc)
        ok, why = judge(view)
        return ok, view.meta.resource_version, why

    return check


def crd_established(cluster: Cluster, name: str) -> Callable[[], tuple[bool, str, str]]:
    path = object_path("apiextensions.k8s.io", "v1", "customresourcedefinitions", None, name)
    return _object_check(cluster, path, CRD.read, crd_is_established)


def crd_is_established(crd: CRD) -> tuple[bool, str]:
    names = condition(crd.conditions, "NamesAccepted")
    if names.status == "False":
        raise TrainerctlError(f"CustomResourceDefinition {crd.meta.name}: names not accepted: {names.message}")
    est = condition(crd.conditions, "Established")
    if est.status == "True":
        return True, ""
    return False, f"Established={est.status or 'unset'}"


def established_answer(raw: dict | None) -> bool:
    """Whether an apply's answer already shows the CRD Established (an answer that does not fit
    its view is waited for like any other)."""
    try:
        return raw is not None and crd_is_established(CRD.read(raw))[0]
    except Unreadable:
        return False


def deployment_available(cluster: Cluster, namespace: str, name: str) -> Callable[[], tuple[bool, str, str]]:
    return _object_check(cluster, object_path("apps", "v1", "deployments", namespace, name), Deployment.read,
                         deployment_is_available)


def deployment_is_available(dep: Deployment) -> tuple[bool, str]:
    """Rolled out, as `kubectl rollout status` means it, and available: every replica runs the
    current spec and no pod of an older one is left, terminating ones included. An old controller
    still running undoes what an install does next (Trainer 2.2 puts the legacy finalizer back)
    and may still answer webhook calls. A rollout past its progress deadline is a failure, not a wait."""
    status = dep.status
    progressing = condition(dep.conditions, "Progressing")
    if progressing.status == "False" and progressing.reason == "ProgressDeadlineExceeded":
        raise TrainerctlError(
            f"{dep.display}: rollout failed (ProgressDeadlineExceeded): {progressing.message}".rstrip(": "))
    if status.observed_generation < dep.meta.generation:
        return False, "rollout of the new spec not observed yet"
    want, updated = dep.replicas, status.updated
    if updated < want:
        return False, f"{updated} of {want} replica(s) updated"
    old = status.replicas - updated
    terminating = status.terminating  # counted where the API server has the field
    if old > 0 or terminating > 0:
        return False, f"{max(old, 0) + terminating} old replica(s) still running"
    if status.available < updated:
        return False, f"{status.available} of {updated} updated replica(s) available"
    avail = condition(dep.conditions, "Available")
    if avail.status != "True":
        return False, f"Available={avail.status or 'unset'} ({avail.reason or 'no Available condition'})"
    return True, ""


def service_endpoint_ready(cluster: Cluster, namespace: str, service: str, port: int) -> Callable[[], tuple[bool, str, str]]:
    """The check the API server itself makes before calling a webhook: a ready endpoint on the
    EndpointSlice port named like the Service port the webhook targets."""
    svc_path = object_path("", "v1", "services", namespace, service)
    slices_path = object_path("discovery.k8s.io", "v1", "endpointslices", namespace)

    def check() -> tuple[bool, str, str]:
        raw = cluster.get_or_none(svc_path)
        if raw is None:
            return False, "", "Service not found"
        try:
            svc = Service.read(raw)
        except Unreadable as exc:
            return False, "", str(exc)
        port_name = next((p.name for p in reversed(svc.ports) if p.port == port), None)
        if port_name is None:
            return False, "", f"Service has no port {port}"
        unreadable: list[str] = []
        slices = read_each(EndpointSlice.read, cluster.items(
            slices_path, query={"labelSelector": f"{SERVICE_NAME_LABEL}={service}"}), unreadable)
        if any(sl.ready and any(name == port_name and number for name, number in sl.ports) for sl in slices):
            return True, "", ""
        return False, "", "; ".join(["no ready endpoint", *unreadable[:1]])

    return check


def wait_all(items: list[Pending], timeout: float, on_wait: Callable[[list[Pending], float], None] | None = None,
             what: str = "") -> dict[str, str]:
    """Poll until every item is done; returns label -> last resourceVersion seen. `on_wait(the items
    still pending, seconds waited)` after each look that found some."""
    start = time.monotonic()
    deadline = start + timeout
    pending = list(items)
    delay = 0.05
    next_diagnosis = start + DIAGNOSE_SECONDS
    done: dict[str, str] = {}
    while True:
        still = []
        # The items' reads go out together (on a no-op install everything is ready at the first
        # look, and one round trip per item, one after another, was most of the wait).
        for item, (outcome, exc) in zip(pending, parallel_map(_checked, pending)):
            if exc is not None:  # a terminal failure the check itself saw
                if item.diagnose is None:
                    raise exc
                found = _safe(item.diagnose, True)
                raise RolloutFailed(str(exc), [found] if found else []) from None
            ok, rv, why = outcome
            if ok:
                done[item.label] = rv
            else:
                item.why = why
                still.append(item)
        pending = still
        if not pending:
            return done
        now = time.monotonic()
        if now >= next_diagnosis:
            next_diagnosis = now + DIAGNOSE_SECONDS
            _diagnose(pending, now - start)
        if on_wait:
            on_wait(pending, now - start)
        if now >= deadline:
            for item in pending:
                if item.diagnose is not None:
                    item.diagnosis = _safe(item.diagnose, True) or item.diagnosis
            diagnoses = [p.diagnosis for p in pending if p.diagnosis is not None]
            detail = "; ".join(_why(p) for p in pending)
            raise RolloutTimeout(f"timed out after {timeout:g}s waiting for {what or 'readiness'}: {detail}",
                                 diagnoses)
        time.sleep(min(delay, max(0.0, deadline - now)))
        delay = min(delay * 2, 1.0)


def _checked(item: Pending) -> tuple[tuple[bool, str, str] | None, TrainerctlError | None]:
    try:
        return item.check(), None
    except TrainerctlError as exc:
        return None, exc


def _diagnose(pending: list[Pending], waited: float) -> None:
    """Look for each item's cause; end the wait when one is final (it will not heal)."""
    for item in pending:
        if item.diagnose is None:
            continue
        item.diagnosis = _safe(item.diagnose, waited >= READ_LOGS_AFTER) or item.diagnosis
        final = item.diagnosis.final if item.diagnosis else None
        if final is not None:
            full = _safe(item.diagnose, True) or item.diagnosis  # with the crashed container's log lines
            why = FINAL_WHY.get(final.reason) or FINAL_WHY.get(final.kind, "see the cause")
            raise RolloutFailed(f"{item.label}: {final.headline()}, which will not recover by itself "
                                f"({why}); stopped waiting after {waited:.0f}s", [full])


# Why each final cause ends the wait (docs/diagnose.md).
FINAL_WHY = {
    "InvalidImageName": "the reference cannot be parsed, so no pull can succeed",
    "CrashLoopBackOff": "it exited again after each restart",
    "ProgressDeadlineExceeded": "the deployment controller gave up on the rollout",
    "log": "its log names the cause",  # by kind: the reason is the caller's reader's
}


def _safe(diagnose: Callable[[bool], Diagnosis], logs: bool) -> Diagnosis | None:
    """A diagnosis, or None when reading for it failed: looking for a cause never fails a wait."""
    try:
        return diagnose(logs)
    except ApiError:
        return None


def _why(item: Pending) -> str:
    if item.diagnosis and item.diagnosis.causes:
        return f"{item.label}: {item.diagnosis.causes[0].headline()}"
    return f"{item.label} ({item.why})" if item.why else item.label
