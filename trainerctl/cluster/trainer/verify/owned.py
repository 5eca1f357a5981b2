"""What verify creates: each object carries verify's own label, and verify deletes them again.

Only objects with the label are ever deleted: the namespace verify made (and with it all in it),
and verify's TrainJobs in a namespace the user named (their JobSets, Jobs and pods go with them,
through their owner references). A verify that was killed leaves its objects labelled, so the next
one deletes them first (`sweep`). Two verifies at the same moment on one cluster would sweep each
other's: verify is a check an administrator or a pipeline runs, not a workload.
"""

from __future__ import annotations

import secrets
import time
from dataclasses import dataclass, field

from trainerctl.cluster.client.client import ApiError, Cluster, object_path
from trainerctl.cluster.client.views import read_each
from trainerctl.cluster.trainer.verify.views import meta
from trainerctl.errors import TrainerctlError

LABEL = "verify.trainerctl.io/run"  # value: the run's id
TRAINER_GROUP, TRAINER_VERSION = "trainer.kubeflow.org", "v1alpha1"
NAME_PREFIX = "trainerctl-verify"
_GONE_SECONDS = 60.0  # how long the end of a run waits for what it deleted to be gone


def run_id() -> str:
    return secrets.token_hex(4)


def trainjobs_path(namespace: str | None, name: str | None = None) -> str:
    return object_path(TRAINER_GROUP, TRAINER_VERSION, "trainjobs", namespace, name)


@dataclass
class Owned:
    """The objects of one run, deleted by `cleanup`."""

    cluster: Cluster
    run: str = field(default_factory=run_id)
    namespaces: list[str] = field(default_factory=list)  # made by this run
    trainjobs: list[tuple[str, str]] = field(default_factory=list)  # (namespace, name) in a user's namespace

    @property
    def labels(self) -> dict[str, str]:
        return {LABEL: self.run}

    def name(self, what: str) -> str:
        return f"{NAME_PREFIX}-{what}-{self.run}"

    def create_namespace(self) -> str:
        name = self.name("ns")
        self.cluster.request("POST", object_path("", "v1", "namespaces", None), body={
            "apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": self.labels}})
        self.namespaces.append(name)
        return name

    def create_trainjob(self, body: dict) -> dict:
        meta = body["metadata"]
        created = self.cluster.request("POST", trainjobs_path(meta["namespace"]), body=body)
        if meta["namespace"] not in self.namespaces:
            self.trainjobs.append((meta["namespace"], meta["name"]))
        return created

    def cleanup(self, wait: bool = True) -> list[str]:
        """Delete what this run made; wait (bounded) until it is gone unless interrupted. Lines
        that say what was deleted, or could not be."""
        done = []
        for namespace, name in self.trainjobs:
            done.append(_delete(self.cluster, trainjobs_path(namespace, name), f"TrainJob {namespace}/{name}"))
        for name in self.namespaces:
            done.append(_delete(self.cluster, object_path("", "v1", "namespaces", None, name), f"Namespace {name}"))
        if wait:
            paths = [trainjobs_path(ns, n) for ns, n in self.trainjobs] + \
                [object_path("", "v1", "namespaces", None, n) for n in self.namespaces]
            _wait_gone(self.cluster, paths)
        self.trainjobs, self.namespaces = [], []
        return [d for d in done if d]


def sweep(cluster: Cluster, namespace: str | None) -> list[str]:
    """Delete what earlier runs left (verify's label, any run): their namespaces, and their
    TrainJobs in every namespace, or in `namespace` when TrainJobs may not be listed in all."""
    done = []
    selector = {"labelSelector": LABEL}
    try:
        for ns in read_each(lambda raw: meta("Namespace", raw), cluster.items(
                object_path("", "v1", "namespaces", None), query=selector), []):
            if not ns.deleting:
                done.append(_delete(cluster, object_path("", "v1", "namespaces", None, ns.name), f"Namespace {ns.name}"))
    except ApiError as exc:
        if exc.status not in (401, 403):
            raise
    jobs: list = []
    for scope in dict.fromkeys((None, namespace)):  # all namespaces, else the one verify works in
        try:
            jobs = cluster.items(trainjobs_path(scope), query=selector)
            break
        except ApiError as exc:
            if exc.status not in (401, 403, 404):
                raise
    for job in read_each(lambda raw: meta("TrainJob", raw), jobs, []):
        if job.namespace and not job.deleting:
            done.append(_delete(cluster, trainjobs_path(job.namespace, job.name), f"TrainJob {job.display}"))
    return [f"{d} (left by an earlier verify)" for d in done if d]


def _delete(cluster: Cluster, path: str, what: str) -> str:
    try:
        cluster.request("DELETE", path, body={"apiVersion": "v1", "kind": "DeleteOptions",
                                              "propagationPolicy": "Background"})
    except ApiError as exc:
        if exc.status == 404:
            return ""
        return f"could not delete {what}: {exc}"
    except TrainerctlError as exc:  # unreachable now: the next verify deletes it
        return f"could not delete {what}: {exc}"
    return f"deleted {what}"


def _wait_gone(cluster: Cluster, paths: list[str]) -> None:
    deadline = time.monotonic() + _GONE_SECONDS
    pending = list(paths)
    while pending and time.monotonic() < deadline:
        try:
            pending = [p for p in pending if cluster.get_or_none(p) is not None]
        except TrainerctlError:
            return
        if pending:
            time.sleep(0.5)
