"""Tier 2, reconcile (the default): a suspended TrainJob, verify's own. The Trainer controller
must create its JobSet, and JobSet's webhooks must admit it, within the time-out: that proves the
controller runs, watches, and reaches the API server, and that JobSet's half of the install
works. Suspended, so no pod runs. A failure names which did not happen and what the controllers
said about it (their Warning events and last log lines), and the cause when the log names one
(a permission the controller lacks: trainer/controller_log.py)."""

from __future__ import annotations

import time

from trainerctl.cluster.client.client import ApiError, Cluster, object_path
from trainerctl.cluster.client.views import Unreadable
from trainerctl.cluster.trainer import controller_log
from trainerctl.cluster.trainer.verify import controllers, webhooks
from trainerctl.cluster.trainer.verify.owned import TRAINER_GROUP, Owned
from trainerctl.cluster.trainer.verify.result import ERROR, FAIL, OK, TIMEOUT, Result
from trainerctl.cluster.trainer.verify.runtimes import Runtime, forbidden_line, trainjob
from trainerctl.cluster.trainer.verify.views import TrainJob

TIER = "reconcile"
JOBSET_GROUP = "jobset.x-k8s.io"


def jobset_path(namespace: str, name: str) -> str:
    return object_path(JOBSET_GROUP, "v1alpha2", "jobsets", namespace, name)


def check(cluster: Cluster, owned: Owned, runtime: Runtime, namespace: str, timeout: float) -> Result:
    name = owned.name("reconcile")
    what = f"JobSet of a suspended TrainJob on {runtime.display}"
    start = time.monotonic()
    try:
        created = owned.create_trainjob(trainjob(runtime, name, namespace, owned.labels, suspend=True))
    except ApiError as exc:
        failure = webhooks.explain(cluster, exc)
        if failure is not None:
            return Result(TIER, what, FAIL, f"the TrainJob was not admitted: {failure.line()}", failure.details())
        if exc.status in (401, 403):
            return Result(TIER, what, ERROR, forbidden_line(exc, "create", f"TrainJobs in namespace {namespace}"))
        return Result(TIER, what, FAIL, f"the TrainJob could not be created: {exc}")
    deadline = start + timeout
    delay = 0.2
    while True:
        try:
            jobset = cluster.get_or_none(jobset_path(namespace, name))
        except ApiError as exc:
            return Result(TIER, what, ERROR, forbidden_line(exc, "get", f"JobSets in namespace {namespace}"))
        if jobset is not None:
            return Result(TIER, what, OK, f"created JobSet {namespace}/{name}", seconds=time.monotonic() - start)
        if time.monotonic() >= deadline:
            break
        time.sleep(min(delay, max(0.0, deadline - time.monotonic())))
        delay = min(delay * 2, 1.0)
    return _not_created(cluster, what, namespace, name, created, timeout)


def _not_created(cluster: Cluster, what: str, namespace: str, name: str, created: dict, timeout: float) -> Result:
    try:
        uid = TrainJob.read(created).meta.uid
    except Unreadable:  # its events cannot be found; the controller's log still says
        uid = ""
    events = controllers.warnings(cluster, namespace, uid) if uid else []
    lines, pods = controllers.log_lines(cluster, TRAINER_GROUP, name)
    details = [*events, *(f"controller log: {line}" for line in lines)]
    head = f"JobSet {namespace}/{name} was not created within {timeout:g}s"
    failure = controllers.webhook_failure(cluster, lines) or controllers.webhook_down(cluster, JOBSET_GROUP)
    if failure is not None:
        return Result(TIER, what, FAIL, f"{head}: JobSet's admission failed: {failure.line()}",
                      [*failure.details(), *details])
    if not pods:
        down = controllers.webhook_down(cluster, TRAINER_GROUP)
        why = down.line() if down else "no pod backs Trainer's webhook Services"
        return Result(TIER, what, FAIL, f"{head}: the Trainer controller is not running: {why}", details)
    said = controller_log.explainer(cluster)(lines)  # a permission it lacks, an object it cannot read
    if said is not None:
        return Result(TIER, what, FAIL, f"{head}: {said.message}", details)
    return Result(TIER, what, TIMEOUT, f"{head}: the Trainer controller ({', '.join(pods)}) did not create it "
                                       "(its events and last log lines follow)", details)
