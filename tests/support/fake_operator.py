"""A cluster the Go trainer-operator manages, played on the test cluster.

What is simulated, from the operator's source (opendatahub-io/trainer-operator cb10e6d and the
odh-platform-utilities framework it uses):
- its API: `Trainer` `default-trainer` (components.platform.opendatahub.io/v1alpha1, cluster
  scope) with the finalizer `components.platform.opendatahub.io/trainer-cleanup`;
- its Deployment `trainer-operator-controller-manager` (label app.kubernetes.io/name=trainer-operator)
  and its pod, which outlives a scale to 0 by a grace period (the operator runs while it exists);
- its install: every object server-side applied as field manager `trainer-module-controller`,
  labelled `platform.opendatahub.io/part-of: trainer`, annotated with the instance it belongs to
  and owned by the CR (controller ownerReference), as its deploy action does;
- while its pod runs, it puts the cleanup finalizer back on the CR if removed, and deleting the CR
  runs that finalizer, which deletes every labelled object (the trap the hand-over must avoid);
- the garbage collector's part: a CR deleted with orphan propagation releases its dependents; one
  deleted otherwise takes every object still owned by it along.
On the e2e cluster (tests/e2e/test_e2e_migration.py) the real deployment controller, kwok and garbage
collector do their parts, and only the operator's own reconciler (the finalizer) is played here.
`FakeOperator.deleted` lists what the operator or the collector deleted, so a test can assert that
nothing was; `FakeOperator.raced` notes any moment its CR was released while its pod still ran.
"""

from __future__ import annotations

import copy
import threading
import time
from pathlib import Path

from tests.support.actions import session
from tests.support.waiting import Not, wait_until
from trainerctl.cluster.client.client import ApiError, Cluster
from trainerctl.cluster.trainer.go_operator import CLEANUP_FINALIZER, DEPLOYMENT_NAME, TRAINER_CR

GROUP = "components.platform.opendatahub.io"
CR_PATH = f"/apis/{GROUP}/v1alpha1/trainers/{TRAINER_CR}"
OPERATOR_NS = "trainer-operator-system"
DEPLOY_PATH = f"/apis/apps/v1/namespaces/{OPERATOR_NS}/deployments/{DEPLOYMENT_NAME}"
POD_PATH = f"/api/v1/namespaces/{OPERATOR_NS}/pods/{DEPLOYMENT_NAME}-7d9f8-x2k4q"
GRACE_SECONDS = 10  # its terminationGracePeriodSeconds (config/manager/manager.yaml): a pod may take that long
MANAGER = "trainer-module-controller"
OWNER = ("platform.opendatahub.io/part-of", "trainer")


def trainer_crd() -> dict:
    """The Trainer API, as far as the hand-over touches it (the real CRD has a full schema)."""
    return {
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": f"trainers.{GROUP}"},
        "spec": {"group": GROUP, "scope": "Cluster",
                 "names": {"kind": "Trainer", "listKind": "TrainerList", "plural": "trainers", "singular": "trainer"},
                 "versions": [{"name": "v1alpha1", "served": True, "storage": True, "subresources": {"status": {}},
                               "schema": {"openAPIV3Schema": {"type": "object",
                                                              "x-kubernetes-preserve-unknown-fields": True}}}]},
    }


def operator_deployment() -> dict:
    labels = {"control-plane": "controller-manager", "app.kubernetes.io/name": "trainer-operator"}
    return {
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": DEPLOYMENT_NAME, "namespace": OPERATOR_NS, "labels": labels},
        "spec": {"replicas": 1, "selector": {"matchLabels": labels},
                 "template": {"metadata": {"labels": labels},
                              "spec": {"containers": [{"name": "manager", "image": "quay.io/opendatahub/trainer-operator:x"}]}}},
    }


def as_operator_applied(objects: list[dict], cr: dict) -> list[dict]:
    """The objects with what the operator's deploy action adds: instance annotations, controller owner."""
    owner = {"apiVersion": f"{GROUP}/v1alpha1", "kind": "Trainer", "name": TRAINER_CR,
             "uid": cr["metadata"]["uid"], "controller": True, "blockOwnerDeletion": True}
    out = []
    for obj in copy.deepcopy(objects):
        meta = obj.setdefault("metadata", {})
        meta.setdefault("labels", {})[OWNER[0]] = OWNER[1]
        if obj["kind"] not in ("CustomResourceDefinition", "Namespace"):
            meta.setdefault("annotations", {}).update({
                "platform.opendatahub.io/instance.name": TRAINER_CR,
                "platform.opendatahub.io/instance.uid": cr["metadata"]["uid"],
                "platform.opendatahub.io/instance.generation": "1",
                "platform.opendatahub.io/type": "Kubeflow Trainer",
                "platform.opendatahub.io/version": "2.1.0",
            })
            meta["ownerReferences"] = [owner]
        out.append(obj)
    return out


class FakeOperator:
    """The operator's reconciler; on a cluster without controllers, also its pod and the garbage collector."""

    def __init__(self, cluster: Cluster, app_namespace: str, *, plays_controllers_with: str | None = None):
        """`plays_controllers_with`: the admin kubeconfig of a cluster that runs no controllers (the
        base test cluster); the deployment controller, the operator's pod and the garbage collector
        are then played here too. None where the real ones run (the e2e cluster)."""
        self.cluster = cluster
        self.app_namespace = app_namespace
        self.kubeconfig = plays_controllers_with
        self._get = cluster.get_or_none
        self.deleted: list[str] = []
        self.raced: list[str] = []
        self.errors: list[str] = []
        self.cr_uid = ""
        self._last_collect = 0.0
        self._stopping_since = 0.0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def __enter__(self) -> "FakeOperator":
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        if self._thread:
            self._thread.join(5)

    def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                self._tick()
            except Exception as exc:  # keep playing; the test reads .errors
                if len(self.errors) < 20:
                    self.errors.append(repr(exc))
            self._stop.wait(0.1)

    def running(self) -> bool:
        """Its pod exists: a pod that is shutting down still finishes what it reconciles."""
        if self.kubeconfig:
            return self._get(POD_PATH) is not None
        labels = operator_deployment()["spec"]["selector"]["matchLabels"]
        selector = ",".join(f"{k}={v}" for k, v in sorted(labels.items()))
        return bool(self.cluster.request("GET", f"/api/v1/namespaces/{OPERATOR_NS}/pods",
                                         query={"labelSelector": selector}).get("items"))

    def _tick(self) -> None:
        if self.kubeconfig:
            self._play_controllers()
        self._reconcile()

    def _play_controllers(self) -> None:
        from tests.testenv import readiness

        dep = self._get(DEPLOY_PATH)
        if dep is not None:  # the deployment controller: status follows spec.replicas at once ...
            status = dep.get("status") or {}
            want = (dep.get("spec") or {}).get("replicas", 1)
            if status.get("observedGeneration") != dep["metadata"]["generation"] or status.get("replicas") != want:
                readiness.mark_deployment_available(Path(self.kubeconfig), OPERATOR_NS, DEPLOYMENT_NAME)
                dep = self._get(DEPLOY_PATH)
            # ... while the pod takes its termination grace period to go away.
            pod = self._get(POD_PATH)
            if want and pod is None:
                labels = dep["spec"]["selector"]["matchLabels"]
                self.cluster.request("POST", f"/api/v1/namespaces/{OPERATOR_NS}/pods", body={
                    "metadata": {"name": POD_PATH.rsplit("/", 1)[1], "labels": labels},
                    "spec": {"containers": [{"name": "manager", "image": "quay.io/opendatahub/trainer-operator:x"}]}})
                self._stopping_since = 0.0
            elif not want and pod is not None:
                self._stopping_since = self._stopping_since or time.monotonic()
                if time.monotonic() - self._stopping_since > GRACE_SECONDS:
                    self.cluster.request("DELETE", POD_PATH)
        cr = self._get(CR_PATH)  # the garbage collector: orphan, or collect once the owner is gone
        finalizers = (cr or {}).get("metadata", {}).get("finalizers") or []
        if cr is not None and cr["metadata"].get("deletionTimestamp") and "orphan" in finalizers \
                and CLEANUP_FINALIZER not in finalizers:
            self._release(cr["metadata"]["uid"])
            self._set_finalizers(cr, [f for f in finalizers if f != "orphan"])
        elif cr is None and self.cr_uid and time.monotonic() - self._last_collect > 1.0:  # it lists every type
            self._last_collect = time.monotonic()
            self._collect_dependents(self.cr_uid)

    def _reconcile(self) -> None:
        """The operator's own part: keep its cleanup finalizer on the CR, and run it on deletion."""
        running = self.running()
        cr = self._get(CR_PATH)
        if running and self.cr_uid and (cr is None or cr["metadata"].get("deletionTimestamp")
                                        or CLEANUP_FINALIZER not in (cr["metadata"].get("finalizers") or [])):
            # The real operator reacts to that within milliseconds: a hand-over that lets it see
            # this has lost the race, whether or not this slower stand-in got to act on it.
            self.raced.append("the CR was released or deleted while the operator's pod still ran")
        if cr is not None:
            self.cr_uid = cr["metadata"]["uid"]
            finalizers = cr["metadata"].get("finalizers") or []
            if running and not cr["metadata"].get("deletionTimestamp") and CLEANUP_FINALIZER not in finalizers:
                self._set_finalizers(cr, [*finalizers, CLEANUP_FINALIZER])  # its reconciler ensures it
            if cr["metadata"].get("deletionTimestamp") and running and CLEANUP_FINALIZER in finalizers:
                self._cleanup()
                self._set_finalizers(cr, [f for f in finalizers if f != CLEANUP_FINALIZER])

    def _set_finalizers(self, cr: dict, finalizers: list[str]) -> None:
        self.cluster.request("PATCH", CR_PATH, content_type="application/merge-patch+json",
                             body={"metadata": {"finalizers": finalizers or None,
                                                "resourceVersion": cr["metadata"]["resourceVersion"]}})

    def _labelled(self):
        from trainerctl.cluster.trainer.operator_inventory import labelled_objects

        return labelled_objects(session(self.cluster, self.app_namespace, owner_label="=".join(OWNER)).resources)

    def _delete(self, found, why: str) -> None:
        try:
            self.cluster.request("DELETE", found.path, body={"propagationPolicy": "Background"})
            self.deleted.append(f"{why}: {found.ref}")
        except ApiError as exc:
            if exc.status != 404:
                raise

    def _cleanup(self) -> None:
        """The operator's finalizer: runtimes first, then every labelled object (its GC)."""
        found = sorted(self._labelled(), key=lambda f: "Runtime" not in f.ref.kind)
        for f in found:
            if f.ref.kind not in ("CustomResourceDefinition", "Namespace"):
                self._delete(f, "operator cleanup")

    def _release(self, uid: str) -> None:
        for f in self._labelled():
            refs = f.meta.get("ownerReferences") or []
            kept = [r for r in refs if r.get("uid") != uid]
            if len(kept) != len(refs):
                self.cluster.request("PATCH", f.path, content_type="application/merge-patch+json",
                                     body={"metadata": {"ownerReferences": kept or None}})

    def _collect_dependents(self, uid: str) -> None:
        for f in self._labelled():
            if any(r.get("uid") == uid for r in f.meta.get("ownerReferences") or []):
                self._delete(f, "garbage collector")


def operator_apply(cluster: Cluster, namespace: str, objects: list[dict], timeout: float = 60) -> None:
    """Server-side apply as the operator, in its apply order (CRDs, then the rest, runtimes once the
    webhook answers), retrying each object like a reconcile loop would."""
    from tests.support.cluster import apply_raw, wait_established
    from trainerctl.cluster.client.discovery import Discovery
    from trainerctl.cluster.manager.plan import plan
    from trainerctl.cluster.trainer.policy import STAGES

    discovery = Discovery(cluster)
    discovery.add_rendered_crds(objects)
    planned = plan(objects, discovery, namespace, MANAGER, STAGES)
    for spec in STAGES:
        for p in (p for p in planned if p.stage == spec.name):
            def applied(p=p):
                try:
                    return apply_raw(cluster, p.body, MANAGER)
                except ApiError as exc:  # CRD storage or webhook not there yet: the reconcile loop tries again
                    return Not(exc)

            wait_until(applied, timeout, f"{p.ref} to be applied", interval=0.2)
            if p.ref.kind == "CustomResourceDefinition":
                wait_established(cluster, p.ref.name, timeout=timeout)


def labelled(cluster: Cluster, namespace: str) -> dict[str, dict]:
    """Every object with the operator's label, by resource id: its metadata."""
    from trainerctl.cluster.trainer.operator_inventory import labelled_objects

    found = labelled_objects(session(cluster, namespace, owner_label="=".join(OWNER)).resources)
    return {f.ref.key: f.meta for f in found}
