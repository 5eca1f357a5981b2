"""What Trainer needs next to it, checked the way the Go operator checks it.

The operator (internal/controller/dependencies.go) checks, on OpenShift and in this order: the
JobSet Operator is installed through OLM (an OperatorCondition named `jobset-operator.<version>`),
its `JobSetOperator` CR exists (a singleton, `cluster`) and is not degraded, and the JobSet CRD is
Established. Elsewhere only the JobSet CRD. The first failure names the reason its Trainer CR
reports (Degraded=True with that reason); preflight and `status` use the same reasons, so a
pipeline that gated on the operator's conditions can gate on ours.

When the render itself brings JobSet (kubeflow/trainer's overlays/manager does), nothing else is
needed: we install it.
"""

from __future__ import annotations

from dataclasses import dataclass

from trainerctl.cluster.client.client import ApiError, Cluster, object_path
from trainerctl.cluster.client.views import CRD, Unreadable, condition
from trainerctl.cluster.client.discovery import Discovery
from trainerctl.trust.safe_text import clean

JOBSET_CRD = "jobsets.jobset.x-k8s.io"
JOBSET_API = ("jobset.x-k8s.io/v1alpha2", "JobSet")
OLM_OPERATOR_CONDITION = ("operators.coreos.com/v2", "OperatorCondition")
JOBSET_OPERATOR_PREFIX = "jobset-operator."
JOBSET_OPERATOR_API = ("operator.openshift.io/v1", "JobSetOperator")
JOBSET_OPERATOR_CR = "cluster"
JOBSET_HINT = ("install JobSet first, e.g. `kubectl apply --server-side -f "
               "https://github.com/kubernetes-sigs/jobset/releases/download/v0.10.1/manifests.yaml`")

# Reasons, as the operator's Trainer CR reports them.
AVAILABLE = "DependenciesAvailable"
OPERATOR_NOT_INSTALLED = "JobSetOperatorNotInstalled"
OPERATOR_CR_NOT_FOUND = "JobSetOperatorCRNotFound"
OPERATOR_DEGRADED = "JobSetOperatorDegraded"
CRD_NOT_FOUND = "JobSetCRDNotFound"
REASONS = (AVAILABLE, OPERATOR_NOT_INSTALLED, OPERATOR_CR_NOT_FOUND, OPERATOR_DEGRADED, CRD_NOT_FOUND)


@dataclass
class DependencyState:
    reason: str
    message: str
    jobset: str = ""  # where JobSet comes from: "cluster", "render", or "" when missing

    @property
    def ok(self) -> bool:
        return self.reason == AVAILABLE

    def line(self) -> str:
        return f"{self.message} [{self.reason}]"


def _list(cluster: Cluster, discovery: Discovery, api: tuple[str, str]) -> list[dict] | None:
    """Every object of a kind (all namespaces); None when the cluster does not serve the kind."""
    res = discovery.lookup(*api)
    if res is None or not res.served:
        return None
    found = cluster.get_or_none(object_path(res.group, res.version, res.resource, None))
    return None if found is None else found.get("items") or []


def _crd_established(cluster: Cluster, name: str) -> bool:
    try:
        crd = cluster.request("GET", object_path("apiextensions.k8s.io", "v1", "customresourcedefinitions", None, name))
    except ApiError as exc:
        if exc.status in (403, 404):
            return False
        raise
    try:
        return condition(CRD.read(crd).conditions, "Established").status == "True"
    except Unreadable:
        return False  # a CRD that does not fit its view is no JobSet to rely on


def _name(obj: dict) -> str:
    return (obj.get("metadata") or {}).get("name") or ""


def degraded_conditions(cr: dict) -> list[str]:
    """The JobSetOperator's unhealthy conditions, as the operator judges them ("" list when healthy)."""
    conditions = (cr.get("status") or {}).get("conditions") or []
    if not conditions:
        return ["no status conditions yet (the JobSet Operator has not reconciled it)"]
    out = []
    for cond in conditions:
        ctype, status = cond.get("type", ""), cond.get("status", "")
        bad = (status == "True" if ctype in ("Degraded", "TargetConfigControllerDegraded",
                                             "JobSetOperatorStaticResourcesDegraded")
               else status == "False" if ctype == "Available" else False)
        if bad:
            entry = f"{ctype}={status}" + (f" ({clean(cond['reason'])})" if cond.get("reason") else "")
            out.append(entry + (f": {clean(cond['message'])}" if cond.get("message") else ""))
    return out


def check(cluster: Cluster, discovery: Discovery, *, openshift: bool, rendered_crds: set[str] = frozenset()
          ) -> DependencyState:
    if JOBSET_CRD in rendered_crds:
        return DependencyState(AVAILABLE, "JobSet comes with the render", "render")
    if openshift:
        conditions = _list(cluster, discovery, OLM_OPERATOR_CONDITION)
        if not any(_name(c).startswith(JOBSET_OPERATOR_PREFIX) for c in conditions or []):
            return DependencyState(OPERATOR_NOT_INSTALLED, "the JobSet Operator is not installed (no OLM OperatorCondition "
                                   f"{JOBSET_OPERATOR_PREFIX}*): install it from OperatorHub before Trainer")
        crs = _list(cluster, discovery, JOBSET_OPERATOR_API)
        if not crs:
            return DependencyState(OPERATOR_CR_NOT_FOUND, f"the JobSetOperator CR '{JOBSET_OPERATOR_CR}' "
                                   "(operator.openshift.io/v1) does not exist: create it to enable the JobSet controller")
        if len(crs) > 1:
            names = ", ".join(sorted(_name(c) for c in crs))
            return DependencyState(OPERATOR_DEGRADED, f"expected one JobSetOperator CR, found {len(crs)} ({names})")
        bad = degraded_conditions(crs[0])
        if bad:
            return DependencyState(OPERATOR_DEGRADED, f"JobSetOperator {_name(crs[0])} is degraded: "
                                   + "; ".join(bad))
    # Discovery serves a CRD's kind only once it is Established, but it lags the CRD's condition by
    # a moment: when discovery lacks the kind, the CRD itself (what the operator reads) decides.
    res = discovery.lookup(*JOBSET_API)
    if (res is None or not res.served) and not _crd_established(cluster, JOBSET_CRD):
        hint = ("it should be created by the JobSet Operator: check the operator's status and logs" if openshift
                else JOBSET_HINT)
        return DependencyState(CRD_NOT_FOUND, f"JobSet is not installed: the CRD {JOBSET_CRD} (v1alpha2) is missing "
                               f"or not Established; {hint}")
    return DependencyState(AVAILABLE, "all required dependencies are available", "cluster")
