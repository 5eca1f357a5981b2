"""The Go operator trainerctl replaces (opendatahub-io/trainer-operator): is it still in charge, and
the hand-over that stops it without losing what it installed.

The operator reconciles one cluster-scoped CR, `Trainer` `default-trainer`
(components.platform.opendatahub.io/v1alpha1), into the app namespace its `spec.appNamespace`
names. Two traps make the obvious hand-over ("delete the CR") destroy the install:

- the CR carries the finalizer `components.platform.opendatahub.io/trainer-cleanup`; while the
  operator runs, deleting the CR makes it delete every labelled object (controller, webhooks,
  runtimes);
- the operator sets itself as controller owner of what it deploys (ownerReferences to the CR),
  so deleting the CR with the default propagation lets the garbage collector delete them too.

So the hand-over is: stop the operator (scale its Deployment to 0 and wait until no pod is left),
release what it owns (drop ownerReferences to the CR), remove the cleanup finalizer, then delete
the CR with orphan propagation. An operator installed by OLM would be scaled back up by OLM, and a
CR owned by another controller (a DataScienceCluster) would come back; those are refused with the
step to take by hand first. Every check happens before the first write.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from trainerctl.cluster.manager.apply import get_meta
from trainerctl.cluster.manager.delete import REFUSED, Outcome, Proof, Target, delete
from trainerctl.cluster.client.client import ApiError, Cluster, object_path
from trainerctl.cluster.client.views import Deployment, Meta, Pod, read_each
from trainerctl.cluster.client.views.field_types import DNS_LABEL, LABEL_NAME, Cursor
from trainerctl.cluster.manager.report import ObjectResult
from trainerctl.errors import InputError, PreflightError, WaitTimeout

TRAINER_API = ("components.platform.opendatahub.io/v1alpha1", "Trainer")
TRAINER_CR = "default-trainer"
CLEANUP_FINALIZER = "components.platform.opendatahub.io/trainer-cleanup"
TRAINER_CR_TARGET = Target("components.platform.opendatahub.io", "v1alpha1", "trainers", False, "", TRAINER_CR,
                           "Trainer")
TRAINER_CR_PATH = TRAINER_CR_TARGET.path
DEFAULT_APP_NAMESPACE = "opendatahub"
# Its reconciler applies as trainer-module-controller; CRDs go out as platform.opendatahub.io.
FIELD_MANAGERS = ("trainer-module-controller", "platform.opendatahub.io")
# How its Deployment is found: its kustomize config labels it so (config/manager/manager.yaml)
# and names it trainer-operator-controller-manager; OLM keeps both.
DEPLOYMENT_SELECTOR = "app.kubernetes.io/name=trainer-operator"
DEPLOYMENT_NAME = "trainer-operator-controller-manager"
REPLICAS_ANNOTATION = "trainerctl.io/operator-replicas-before-hand-over"
HAND_OVER_FLAG = "--take-over-operator"
GUIDE = "docs/migration-operator.md#migrating-from-the-go-trainer-operator"


@dataclass
class OperatorDeployment:
    namespace: str
    name: str
    replicas: int
    ready: int
    olm_owner: str = ""  # "ClusterServiceVersion NAME in NAMESPACE" when OLM manages it

    @property
    def display(self) -> str:
        return f"Deployment {self.namespace}/{self.name}"


@dataclass(frozen=True)
class TrainerCR:
    """The view of the operator's CR: what the hand-over and the namespace choice read."""

    meta: Meta
    app_namespace: str  # where the operator installed Trainer (a namespace: a Kubernetes name)

    @classmethod
    def read(cls, raw: Any) -> "TrainerCR":
        obj = Cursor.of(TRAINER_API[1], raw)
        app = obj.mapping("spec").string("appNamespace", rule=LABEL_NAME, expected=DNS_LABEL)
        return cls(Meta.read(obj), app or DEFAULT_APP_NAMESPACE)


@dataclass
class OperatorState:
    """`cr`: the Trainer CR as the API answered it, when it exists; read through its view (an
    answer that does not fit is views.Unreadable, exit 3: it may be the operator's, in charge)."""

    cr: dict | None = None
    deployments: list[OperatorDeployment] = field(default_factory=list)
    trainer: TrainerCR | None = field(init=False, default=None)

    def __post_init__(self) -> None:
        self.trainer = TrainerCR.read(self.cr) if self.cr is not None else None

    @property
    def present(self) -> bool:
        return self.cr is not None or bool(self.deployments)

    @property
    def can_write(self) -> bool:
        return self.cr is not None or any(d.ready > 0 for d in self.deployments)

    @property
    def app_namespace(self) -> str | None:
        return self.trainer.app_namespace if self.trainer is not None else None

    def why(self) -> str:
        reasons = []
        if self.trainer is not None:
            deleting = " (being deleted)" if self.trainer.meta.deleting else ""
            reasons.append(f"its Trainer {TRAINER_CR} exists{deleting}")
        for d in self.deployments:
            if d.ready:
                reasons.append(f"{d.display} has {d.ready} ready replica(s)")
        return "; ".join(reasons)

    def refusal(self) -> str:
        return (f"the Go trainer-operator can still write to this cluster ({self.why()}): re-run with "
                f"{HAND_OVER_FLAG} to stop it and hand over safely (see {GUIDE})")


def _olm_owner(meta: Meta) -> str:
    for ref in meta.owners:
        if ref.kind == "ClusterServiceVersion":
            return f"ClusterServiceVersion {ref.name} in {meta.namespace}"
    if meta.labels.get("olm.owner.kind") == "ClusterServiceVersion":
        return f"ClusterServiceVersion {meta.labels.get('olm.owner')} in {meta.labels.get('olm.owner.namespace')}"
    return ""


def find_deployments(cluster: Cluster) -> list[OperatorDeployment]:
    """The operator's Deployment(s), in any namespace; none when we may not list Deployments
    cluster-wide (its CR, readable by anyone who may install Trainer, still tells). One that does
    not fit its view ends the command (views.Unreadable, exit 3): it may be the operator, running."""
    path = object_path("apps", "v1", "deployments", None)
    seen: dict[tuple[str, str], Deployment] = {}
    for query in ({"labelSelector": DEPLOYMENT_SELECTOR}, {"fieldSelector": f"metadata.name={DEPLOYMENT_NAME}"}):
        try:
            items = cluster.items(path, query=query)
        except ApiError as exc:
            if exc.status in (401, 403):
                return []
            raise
        for item in items:
            dep = Deployment.read(item)
            seen[(dep.meta.namespace, dep.meta.name)] = dep
    return [OperatorDeployment(ns, name, dep.replicas, dep.status.ready, _olm_owner(dep.meta))
            for (ns, name), dep in sorted(seen.items())]


def read_cr(cluster: Cluster) -> dict | None:
    """The operator's CR; None when it (or its API) does not exist. A fixed path, so it can be read
    together with the other first reads of a run instead of after discovery."""
    return cluster.get_or_none(TRAINER_CR_PATH)


def check_namespace(state: OperatorState, namespace: str) -> None:
    app = state.app_namespace
    if app and app != namespace:
        raise InputError(f"-n {namespace}: the operator installed Trainer into {app} (Trainer {TRAINER_CR} "
                         f"spec.appNamespace); install into the same namespace to take it over: -n {app}")


def check_hand_over(state: OperatorState) -> None:
    """Refuse, before any write, what trainerctl cannot stop safely by itself."""
    for d in state.deployments:
        if d.olm_owner and d.replicas > 0:
            raise PreflightError(f"{d.display} is installed by OLM ({d.olm_owner}), which would scale it back up: "
                                 "uninstall the operator first (delete its Subscription and ClusterServiceVersion; "
                                 f"the Trainer CR and what it installed stay), then re-run with {HAND_OVER_FLAG}")
    cr = state.trainer
    if cr is not None and not cr.meta.deleting:
        for ref in cr.meta.owners:
            if ref.controller:
                raise PreflightError(
                    f"Trainer {TRAINER_CR} is managed by {ref.kind} {ref.name}, which would recreate "
                    f"it: stop the operator, then have {ref.kind} stop managing Trainer, then re-run with "
                    f"{HAND_OVER_FLAG} (see {GUIDE})")


def _pods_left(cluster: Cluster, dep: Deployment) -> int:
    """Pods of the Deployment that still exist, terminating ones included: a pod shutting down
    can still finish a reconcile, so "stopped" means gone (and a pod we cannot read counts as
    there). -1 when we may not list pods."""
    if not dep.selector.match_labels:
        return -1
    selector = ",".join(f"{k}={v}" for k, v in sorted(dep.selector.match_labels.items()))
    try:
        items = cluster.items(object_path("", "v1", "pods", dep.meta.namespace), query={"labelSelector": selector})
    except ApiError as exc:
        if exc.status in (401, 403):
            return -1
        raise
    unreadable: list[str] = []
    pods = read_each(Pod.read, items, unreadable)
    return sum(1 for p in pods if p.phase not in ("Succeeded", "Failed")) + len(unreadable)


def _wait_stopped(cluster: Cluster, d: OperatorDeployment, deadline: float, timeout: float) -> None:
    path = object_path("apps", "v1", "deployments", d.namespace, d.name)
    delay = 0.05
    while True:
        dep = Deployment.read(cluster.request("GET", path))
        left = max(dep.status.replicas, dep.status.ready, dep.status.terminating)
        if dep.status.observed_generation >= dep.meta.generation and left == 0:
            left = max(_pods_left(cluster, dep), 0)
            if left == 0:
                return
        if time.monotonic() > deadline:
            raise WaitTimeout(f"timed out after {timeout:g}s waiting for the operator's {d.display} to stop "
                              f"({left} pod(s) left); nothing else was changed, re-run to continue")
        time.sleep(delay)
        delay = min(delay * 2, 1.0)


def _drop_owner(cluster: Cluster, path: str, meta: dict, uid: str) -> None:
    """One guarded patch; read again and retry when something wrote in between."""
    for attempt in range(5):
        refs = meta.get("ownerReferences") or []
        kept = [r for r in refs if r.get("uid") != uid]
        if len(kept) == len(refs):
            return
        patch = [{"op": "test", "path": "/metadata/resourceVersion", "value": meta.get("resourceVersion", "")},
                 {"op": "replace", "path": "/metadata/ownerReferences", "value": kept} if kept
                 else {"op": "remove", "path": "/metadata/ownerReferences"}]
        try:
            cluster.request("PATCH", path, body=patch, content_type="application/json-patch+json")
            return
        except ApiError as exc:
            if exc.status == 404:
                return
            if attempt == 4 or exc.status not in (409, 422, 500):
                raise
        fresh = get_meta(cluster, path)
        if fresh is None:
            return
        meta = fresh.get("metadata") or {}


def release_owned(cluster: Cluster, found: list, uid: str, dry_run: bool) -> int:
    """Drop ownerReferences to the CR from the objects found (labelled); returns how many had one."""
    owned = [f for f in found if any(r.get("uid") == uid for r in f.meta.get("ownerReferences") or [])]
    if not dry_run:
        for f in owned:
            _drop_owner(cluster, f.path, f.meta, uid)
    return len(owned)


def _delete_cr(cluster: Cluster, state: OperatorState, deadline: float, timeout: float) -> None:
    path = TRAINER_CR_PATH
    meta = state.trainer.meta
    if CLEANUP_FINALIZER in meta.finalizers:
        kept = [f for f in meta.finalizers if f != CLEANUP_FINALIZER]
        cluster.request("PATCH", path, content_type="application/json-patch+json", body=[
            {"op": "test", "path": "/metadata/resourceVersion", "value": meta.resource_version},
            {"op": "replace", "path": "/metadata/finalizers", "value": kept}])
    if not meta.deleting:
        # The CR whose checks passed (check_hand_over), that very one (its uid), and no other.
        uid = meta.uid
        done = delete(cluster, TRAINER_CR_TARGET, Proof(f"Trainer {TRAINER_CR}", uid=uid), propagation="Orphan") \
            if uid else Outcome(REFUSED, "the server gave no uid")
        if done.done == REFUSED:
            raise PreflightError(f"Trainer {TRAINER_CR} not deleted: {done.why}; re-run with {HAND_OVER_FLAG} to "
                                 "judge it again")
    delay = 0.05
    while True:
        cr = get_meta(cluster, path)
        if cr is None:
            return
        if time.monotonic() > deadline:
            left = ", ".join((cr.get("metadata") or {}).get("finalizers") or []) or "none"
            raise WaitTimeout(f"timed out after {timeout:g}s waiting for Trainer {TRAINER_CR} to be deleted "
                              f"(finalizers left: {left}); the operator is stopped, re-run to continue")
        time.sleep(delay)
        delay = min(delay * 2, 1.0)


def hand_over(cluster: Cluster, state: OperatorState, found: list, *, field_manager: str, timeout: float,
              dry_run: bool) -> list[ObjectResult]:
    """Stop the operator and delete its CR without letting it (or the GC) delete anything else.

    `found`: the labelled objects (uninstall.Found) whose ownerReferences may point at the CR.
    Returns one result per step for the report.
    """
    check_hand_over(state)
    results: list[ObjectResult] = []
    deadline = time.monotonic() + timeout
    for d in state.deployments:
        if d.replicas == 0 and d.ready == 0:
            continue
        r = ObjectResult("Deployment", d.name, d.namespace, "apps", "handover", "configured",
                         f"the operator, scaled from {d.replicas} to 0 replicas")
        if not dry_run:
            path = object_path("apps", "v1", "deployments", d.namespace, d.name)
            cluster.request("PATCH", path, content_type="application/merge-patch+json",
                            query={"fieldManager": field_manager},
                            body={"metadata": {"annotations": {REPLICAS_ANNOTATION: str(d.replicas)}},
                                  "spec": {"replicas": 0}})
            _wait_stopped(cluster, d, deadline, timeout)
        results.append(r)
    if state.trainer is not None:
        released = release_owned(cluster, found, state.trainer.meta.uid, dry_run)
        r = ObjectResult("Trainer", TRAINER_CR, "", TRAINER_API[0].split("/")[0], "handover", "deleted",
                         f"cleanup finalizer removed first; {released} object(s) it owned released, none deleted")
        if not dry_run:
            _delete_cr(cluster, state, deadline, timeout)
        results.append(r)
    return results
