"""What the tiers asked for need, asked of the API server before verify creates anything.

One SelfSubjectAccessReview per permission a requested tier cannot do without (operations/access.py:
every authorizer answers, which a rules review cannot promise). A missing one is one line naming
the permission and the tier that needs it (exit 3), instead of a verify that fails halfway with
its namespace made and its TrainJob left. What only explains a failure (webhook configurations,
EndpointSlices, events, logs), the consumers tier and the sweep of an earlier verify's leftovers
go on without their permission, so they are not asked. A cluster without the review API is not
asked at all: the tiers then say what was forbidden as they meet it.
"""

from __future__ import annotations

from trainerctl.cluster.client.client import Cluster
from trainerctl.cluster.operations import access
from trainerctl.cluster.operations.access import Need, Permission
from trainerctl.cluster.trainer.verify.owned import TRAINER_GROUP
from trainerctl.cluster.trainer.verify.reconcile import JOBSET_GROUP
from trainerctl.cluster.trainer.verify.result import ERROR, OK, Result

TIER = "permissions"


def needs(namespace: str, *, own_namespace: bool, job_namespace: bool, run: bool) -> list[Need]:
    """The permissions of the tiers asked for, each with what needs it. `namespace` is where
    verify's TrainJobs go: the user's (`job_namespace`), or the one verify makes (`own_namespace`)."""
    def need(verb: str, group: str, resource: str, why: str, ns: str = namespace) -> Need:
        return Need(Permission(verb, group, resource, ns), why)

    out = [need("list", TRAINER_GROUP, "clustertrainingruntimes", "the admission tier (the runtimes to try)", "")]
    if job_namespace:
        out.append(need("list", TRAINER_GROUP, "trainingruntimes", "the admission tier (the runtimes to try)"))
    if own_namespace:
        out += [need("create", "", "namespaces", "a namespace of its own (or name one with --job-namespace)", ""),
                need("delete", "", "namespaces", "deleting the namespace it made", "")]
    out += [need("create", TRAINER_GROUP, "trainjobs", "the admission tier (a dry-run TrainJob)"),
            need("get", JOBSET_GROUP, "jobsets", "the reconcile tier (the suspended TrainJob's JobSet)")]
    if job_namespace:
        out += [need("delete", TRAINER_GROUP, "trainjobs", "deleting its TrainJobs"),
                need("get", TRAINER_GROUP, "trainjobs", "deleting its TrainJobs (each read first: only verify's go)"),
                need("create", "", "pods", "the namespace tier (a dry-run Pod per runtime)")]
    if run:
        out += [need("get", TRAINER_GROUP, "trainjobs", "the run tier (the TrainJob's phase)"),
                need("list", "", "pods", "the run tier (the job's pods)"),
                need("list", "batch", "jobs", "the run tier (the job's Jobs)")]
    return out


def check(cluster: Cluster, wanted: list[Need]) -> Result:
    lacking = access.missing(cluster, wanted)
    if not lacking:
        return Result(TIER, "access reviews", OK, f"{len({n.permission for n in wanted})} permission(s) checked")
    user = access.whoami(cluster)
    first = lacking[0]
    more = f"; {len(lacking) - 1} more missing" if len(lacking) > 1 else ""
    return Result(TIER, "access reviews", ERROR,
                  f"{'user ' + user if user else 'the current user'} may not {first.permission.text()}, which "
                  f"verify needs for {first.why}{more} (nothing was created; grant it, or run verify as a user "
                  "who has it)", [f"may not {n.permission.text()} (for {n.why})" for n in lacking])
