"""Tier 1, admission: a server-side dry-run create of a minimal TrainJob on every runtime. It
proves that the API server reaches Trainer's webhooks over TLS and that they answer; nothing is
stored. A failure names the webhook, its Service and the cause (webhooks.py)."""

from __future__ import annotations

from trainerctl.cluster.client.client import ApiError, Cluster
from trainerctl.cluster.trainer.verify import webhooks
from trainerctl.cluster.trainer.verify.owned import Owned, trainjobs_path
from trainerctl.cluster.trainer.verify.result import ERROR, FAIL, OK, Result
from trainerctl.cluster.trainer.verify.runtimes import Runtime, forbidden_line, trainjob

TIER = "admission"


def check(cluster: Cluster, owned: Owned, runtimes: list[Runtime], namespace: str) -> list[Result]:
    if not runtimes:
        return [Result(TIER, "runtimes", FAIL, "no ClusterTrainingRuntime is installed (and no TrainingRuntime in "
                                              f"namespace {namespace}): install the runtimes")]
    return [_one(cluster, owned, runtime, namespace) for runtime in runtimes]


def _one(cluster: Cluster, owned: Owned, runtime: Runtime, namespace: str) -> Result:
    what = f"TrainJob on {runtime.display}"
    body = trainjob(runtime, owned.name("admission"), namespace, owned.labels, suspend=True)
    try:
        cluster.request("POST", trainjobs_path(namespace), query={"dryRun": "All"}, body=body)
    except ApiError as exc:
        failure = webhooks.explain(cluster, exc)
        if failure is not None:
            return Result(TIER, what, FAIL, failure.line(), failure.details())
        if exc.status in (401, 403):
            return Result(TIER, what, ERROR, forbidden_line(exc, "create", f"TrainJobs in namespace {namespace}"))
        return Result(TIER, what, FAIL, str(exc))
    return Result(TIER, what, OK, "admitted")
