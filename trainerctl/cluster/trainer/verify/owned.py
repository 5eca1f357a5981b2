"""What verify creates: each object carries verify's own label, and verify deletes them again.

Verify owns an object when its name is `trainerctl-verify-WHAT-RUN` and its label
`verify.trainerctl.io/run` is that same RUN, a run id of the form verify makes (eight lower-case
hex digits); anything else carrying the label key is not verify's and is left alone. Only such
objects are deleted, each through the one delete (manager/delete.py: proved again on the live
object, guarded by its uid and resourceVersion): the namespace verify made (and with it all in
it), and verify's TrainJobs in a namespace the user named (their JobSets, Jobs and pods go with
them, through their owner references). A verify that was killed leaves its objects named and
labelled so, and the next one deletes them first (`sweep`). Two verifies at the same moment on
one cluster would sweep each other's: verify is a check an administrator or a pipeline runs, not
a workload.
"""

from __future__ import annotations

import re
import secrets
import time
from dataclasses import dataclass, field

from trainerctl.cluster.client.client import ApiError, Cluster, object_path
from trainerctl.cluster.client.views import Meta, read_each
from trainerctl.cluster.manager.delete import DELETED, REFUSED, Proof, Target, delete
from trainerctl.cluster.manager.listing import answers
from trainerctl.cluster.trainer.verify.views import meta
from trainerctl.errors import TrainerctlError

LABEL = "verify.trainerctl.io/run"  # value: the run's id
TRAINER_GROUP, TRAINER_VERSION = "trainer.kubeflow.org", "v1alpha1"
NAME_PREFIX = "trainerctl-verify"
RUN_ID = re.compile(r"[0-9a-f]{8}")  # run_id()'s form
NAME = re.compile(re.escape(NAME_PREFIX) + r"-[a-z]+-(?P<run>[0-9a-f]{8})")  # Owned.name()'s form
_GONE_SECONDS = 60.0  # how long the end of a run waits for what it deleted to be gone


def run_id() -> str:
    return secrets.token_hex(4)


def _same_run(found: Meta, raw: dict) -> str:
    named = NAME.fullmatch(found.name)
    return "" if named and named["run"] == found.labels.get(LABEL) else "its name does not carry its run id"


def proof(run: str | None = None) -> Proof:
    """What makes an object verify's: run `run`'s, or (None) any run's, a killed one's included."""
    return Proof("verify", label=LABEL, value=run if run else (lambda value: RUN_ID.fullmatch(value) is not None),
                 name=NAME, rule=_same_run)


def namespace_target(name: str) -> Target:
    return Target("", "v1", "namespaces", False, "", name, "Namespace")


def trainjob_target(namespace: str, name: str) -> Target:
    return Target(TRAINER_GROUP, TRAINER_VERSION, "trainjobs", True, namespace, name, "TrainJob")


def trainjobs_path(namespace: str | None, name: str | None = None) -> str:
    return object_path(TRAINER_GROUP, TRAINER_VERSION, "trainjobs", namespace, name)


@dataclass
class Owned:
    """The objects of one run, deleted by `cleanup`."""

    cluster: Cluster
    run: str = field(default_factory=run_id)
    namespaces: list[str] = field(default_factory=list)  # made by this run
    trainjobs: list[tuple[str, str]] = field(default_factory=list)  # (namespace, name) in a user's namespace
    made: dict[Target, dict] = field(default_factory=dict)  # the server's answer to each create

    @property
    def labels(self) -> dict[str, str]:
        return {LABEL: self.run}

    def name(self, what: str) -> str:
        return f"{NAME_PREFIX}-{what}-{self.run}"

    def create_namespace(self) -> str:
        name = self.name("ns")
        body = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": self.labels}}
        self.made[namespace_target(name)] = self.cluster.request("POST", object_path("", "v1", "namespaces", None),
                                                                 body=body)
        self.namespaces.append(name)
        return name

    def create_trainjob(self, body: dict) -> dict:
        meta = body["metadata"]
        created = self.cluster.request("POST", trainjobs_path(meta["namespace"]), body=body)
        if meta["namespace"] not in self.namespaces:
            self.trainjobs.append((meta["namespace"], meta["name"]))
            self.made[trainjob_target(meta["namespace"], meta["name"])] = created
        return created

    def cleanup(self, wait: bool = True) -> list[str]:
        """Delete what this run made; wait (bounded) until it is gone unless interrupted. Lines
        that say what was deleted, or could not be."""
        targets = [trainjob_target(ns, n) for ns, n in self.trainjobs] + [namespace_target(n) for n in self.namespaces]
        mine = proof(self.run)
        done = [_delete(self.cluster, t, mine, self.made.get(t)) for t in targets]
        if wait:
            _wait_gone(self.cluster, [t.path for t in targets if not t.bad_name()])
        self.trainjobs, self.namespaces, self.made = [], [], {}
        return [d for d in done if d]


def sweep(cluster: Cluster, namespace: str | None) -> list[str]:
    """Delete what earlier runs left (verify's own, `proof()`, of any run): their namespaces, and
    their TrainJobs in every namespace, or in `namespace` when TrainJobs may not be listed in all.
    What a list answers is only a lead: each is proved on the live object before it goes."""
    done = []
    anyone = proof()
    selector = {"labelSelector": LABEL}
    try:
        items = answers(cluster.items(object_path("", "v1", "namespaces", None), query=selector), "", LABEL)
        for ns in read_each(lambda raw: meta("Namespace", raw), items, []):
            target = namespace_target(ns.name)
            if not ns.deleting and _ours(target, ns, anyone):
                done.append(_delete(cluster, target, anyone))
    except ApiError as exc:
        if exc.status not in (401, 403):
            raise
    jobs: list = []
    for scope in dict.fromkeys((None, namespace)):  # all namespaces, else the one verify works in
        try:
            jobs = answers(cluster.items(trainjobs_path(scope), query=selector), scope, LABEL)
            break
        except ApiError as exc:
            if exc.status not in (401, 403, 404):
                raise
    for job in read_each(lambda raw: meta("TrainJob", raw), jobs, []):
        target = trainjob_target(job.namespace, job.name)
        if job.namespace and not job.deleting and _ours(target, job, anyone):
            done.append(_delete(cluster, target, anyone))
    return [f"{d} (left by an earlier verify)" for d in done if d]


def _ours(target: Target, listed: Meta, anyone: Proof) -> bool:
    """Whether a listed item could be verify's at all (the live object proves it before its delete):
    an item that cannot costs no request."""
    return not target.bad_name() and not anyone.refuses(target, listed, {})


def _delete(cluster: Cluster, target: Target, mine: Proof, made: dict | None = None) -> str:
    """What became of it, in a line; "" when there was nothing to say: it was gone, or (for what a
    list only suggested) it proved not to be verify's, so it is none of verify's business."""
    what = target.display
    try:
        outcome = delete(cluster, target, mine, known=made)
    except TrainerctlError as exc:  # unreachable now: the next verify deletes it
        return f"could not delete {what}: {exc}"
    if outcome.done == DELETED:
        return f"deleted {what}"
    return f"did not delete {what}: {outcome.why}" if outcome.done == REFUSED and made is not None else ""


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
