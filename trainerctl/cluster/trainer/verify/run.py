"""Tier 4, run (`--run`): a tiny CPU TrainJob on the runtime (`--runtime`), its image overridable
(`--run-image`, for air-gapped clusters), runs to completion. Each phase it reaches is a result
with how long it took; the phase it does not reach fails with the cause its pods or Jobs give:
the image cannot be pulled, the container crashes, the pod cannot be scheduled, a ResourceQuota
or Pod Security refuses the pods."""

from __future__ import annotations

import time
from typing import Callable

from trainerctl.cluster.client.client import ApiError, Cluster, object_path
from trainerctl.cluster.client.views import Event, Pod, by_time, condition, read_each
from trainerctl.cluster.manager import diagnose
from trainerctl.cluster.trainer.verify.owned import Owned, trainjobs_path
from trainerctl.cluster.trainer.verify.reconcile import jobset_path
from trainerctl.cluster.trainer.verify.result import FAIL, OK, TIMEOUT, Result
from trainerctl.cluster.trainer.verify.runtimes import Runtime, trainjob
from trainerctl.cluster.trainer.verify import webhooks
from trainerctl.cluster.trainer.verify.views import TrainJob, meta

TIER = "run"
JOBSET_NAME_LABEL = "jobset.sigs.k8s.io/jobset-name"
COMMAND = ["sh", "-c", "echo trainerctl verify: the TrainJob ran"]
RESOURCES = {"requests": {"cpu": "100m", "memory": "64Mi"}, "limits": {"cpu": "500m", "memory": "256Mi"}}
PHASES = ("TrainJob admitted", "JobSet created", "pods created", "pods scheduled", "pods running", "TrainJob complete")


def check(cluster: Cluster, owned: Owned, runtime: Runtime, namespace: str, timeout: float,
          image: str | None = None) -> list[Result]:
    name = owned.name("run")
    trainer: dict = {"command": COMMAND, "resourcesPerNode": RESOURCES, **({"image": image} if image else {})}
    results: list[Result] = []
    start = last = time.monotonic()
    try:
        owned.create_trainjob(trainjob(runtime, name, namespace, owned.labels, suspend=False, trainer=trainer))
    except ApiError as exc:
        failure = webhooks.explain(cluster, exc)
        message = failure.line() if failure else str(exc)
        return [Result(TIER, PHASES[0], FAIL, f"TrainJob on {runtime.display}: {message}")]
    results.append(Result(TIER, PHASES[0], OK, f"TrainJob {namespace}/{name} on {runtime.display}",
                          seconds=time.monotonic() - last))
    last = time.monotonic()
    reached = 1
    deadline = start + timeout
    while True:
        state = _state(cluster, namespace, name)
        if state.failed:
            return [*results, Result(TIER, PHASES[reached], FAIL, f"the TrainJob failed: {state.failed}",
                                     _causes(cluster, namespace, name, state.pods))]
        while reached < len(PHASES) and state.reached(reached):
            now = time.monotonic()
            results.append(Result(TIER, PHASES[reached], OK, "", seconds=now - last))
            last = now
            reached += 1
        if reached == len(PHASES):
            return results
        if time.monotonic() >= deadline:
            break
        time.sleep(0.5)
    causes = _causes(cluster, namespace, name, state.pods)
    status = FAIL if causes else TIMEOUT
    head = f"not reached within {timeout:g}s"
    return [*results, Result(TIER, PHASES[reached], status, f"{head}: {causes[0]}" if causes else head, causes[1:])]


class _State:
    def __init__(self, job: TrainJob | None, jobset: dict | None, pods: list[Pod]):
        self.pods = pods
        self.complete = bool(job and job.complete)
        self.failed = job.failed if job else ""
        self.checks: dict[str, Callable[[], bool]] = {
            "JobSet created": lambda: jobset is not None,
            "pods created": lambda: bool(pods),
            "pods scheduled": lambda: bool(pods) and all(condition(p.conditions, "PodScheduled").status == "True"
                                                         for p in pods),
            "pods running": lambda: bool(pods) and all(p.phase in ("Running", "Succeeded") for p in pods),
            "TrainJob complete": lambda: self.complete,
        }

    def reached(self, index: int) -> bool:
        # A phase a fast job passed between two looks (its pods already gone) counts once it completes.
        return self.complete or self.checks[PHASES[index]]()


def _state(cluster: Cluster, namespace: str, name: str) -> _State:
    raw = cluster.get_or_none(trainjobs_path(namespace, name))
    job = TrainJob.read(raw) if raw is not None else None  # unreadable: verify cannot follow it (exit 3)
    jobset = cluster.get_or_none(jobset_path(namespace, name))
    pods = cluster.items(object_path("", "v1", "pods", namespace), query={"labelSelector": f"{JOBSET_NAME_LABEL}={name}"})
    return _State(job, jobset, read_each(Pod.read, pods, []))


def _events(cluster: Cluster, namespace: str, uid: str) -> list[Event]:
    try:
        raw = cluster.items(object_path("", "v1", "events", namespace),
                            query={"fieldSelector": f"involvedObject.uid={uid}"})
    except ApiError:
        return []
    return sorted(read_each(Event.read, raw, []), key=by_time)


def _causes(cluster: Cluster, namespace: str, name: str, pods: list[Pod]) -> list[str]:
    """Why the job's pods do not run, named: pull, crash, unschedulable (the pods' causes), quota
    or Pod Security (the Jobs' FailedCreate events)."""
    out = []

    def previous_log(pod: str, container: str) -> list[str]:
        lines, _ = diagnose.recent_log(cluster, namespace, pod, container, diagnose.LOG_TAIL_LINES)
        return lines

    for pod in pods:
        for cause in diagnose.pod_causes(pod, _events(cluster, namespace, pod.meta.uid), previous_log):
            out.append(f"{_kind(cause.kind)}: {cause.text()}" + "".join(f" | {line}" for line in cause.log[-3:]))
    try:
        jobs = cluster.items(object_path("batch", "v1", "jobs", namespace),
                             query={"labelSelector": f"{JOBSET_NAME_LABEL}={name}"})
    except ApiError:
        jobs = []
    for job in read_each(lambda raw: meta("Job", raw), jobs, []):
        for event in _events(cluster, namespace, job.uid) if job.uid else []:
            if event.reason == "FailedCreate":
                kind = "Pod Security" if "PodSecurity" in event.message else \
                    "quota" if "quota" in event.message else "pods cannot be created"
                out.append(f"{kind}: Job {namespace}/{event.involved.name}: {event.message}")
                break
    return list(dict.fromkeys(out))


def _kind(kind: str) -> str:
    return {"image": "pull", "crash": "crash", "unschedulable": "unschedulable"}.get(kind, kind)

