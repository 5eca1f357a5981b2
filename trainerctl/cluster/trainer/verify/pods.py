"""Tier 3, namespace admission (`--job-namespace NS`, and `check --job-namespace NS`): each
runtime's pod templates, server-side dry-run created as Pods in NS. Pod Security, ResourceQuota,
LimitRange and policy webhooks judge them as they will judge the job's pods, so a runtime the
namespace would reject is named, with the reason, before anyone submits a job."""

from __future__ import annotations

import copy

from trainerctl.cluster.client.client import ApiError, Cluster, object_path
from trainerctl.cluster.trainer.verify import webhooks
from trainerctl.cluster.trainer.verify.result import ERROR, FAIL, OK, Result
from trainerctl.cluster.trainer.verify.runtimes import Runtime, forbidden_line

TIER = "namespace"
# A container a runtime leaves for the TrainJob to fill gets an image only so the Pod is valid:
# it is a dry run, nothing pulls it.
PLACEHOLDER_IMAGE = "registry.k8s.io/pause:3.10"


def check(cluster: Cluster, runtimes: list[Runtime], namespace: str, labels: dict[str, str]) -> list[Result]:
    return [_one(cluster, runtime, namespace, labels) for runtime in runtimes]


def pod(template: dict, namespace: str, labels: dict[str, str], job: str) -> dict:
    """The Pod a runtime's pod template makes, as its Job would create it (the template as
    Runtime.read checked it: the fields read here are of their types)."""
    spec = copy.deepcopy(template["spec"])
    for key in ("containers", "initContainers"):
        for container in spec.get(key) or []:
            if not container.get("image"):
                container["image"] = PLACEHOLDER_IMAGE
    meta = template.get("metadata") or {}
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"generateName": f"trainerctl-verify-{job}-"[:58], "namespace": namespace,
                         "labels": {**(meta.get("labels") or {}), **labels},
                         "annotations": meta.get("annotations") or {}},
            "spec": spec}


def _one(cluster: Cluster, runtime: Runtime, namespace: str, labels: dict[str, str]) -> Result:
    what = f"pods of {runtime.display} in namespace {namespace}"
    templates = runtime.pod_templates()
    if not templates:
        return Result(TIER, what, FAIL, "the runtime has no pod template (spec.template.spec.replicatedJobs)")
    problems = []
    for job, template in templates:
        try:
            cluster.request("POST", object_path("", "v1", "pods", namespace), query={"dryRun": "All"},
                            body=pod(template, namespace, labels, job))
        except ApiError as exc:
            failure = webhooks.explain(cluster, exc)
            if failure is not None:
                problems.append(f"replicatedJob {job}: {failure.line()}")
            elif exc.status in (401, 403) and "cannot create resource" in str(exc):
                return Result(TIER, what, ERROR, forbidden_line(exc, "create", f"Pods in namespace {namespace}"))
            else:
                problems.append(f"replicatedJob {job}: {exc}")
    if problems:
        return Result(TIER, what, FAIL, f"rejected: {problems[0]}", problems[1:])
    return Result(TIER, what, OK, "admitted")
