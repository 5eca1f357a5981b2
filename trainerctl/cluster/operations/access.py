"""May the current user do what a run needs? Asked of the API server before the first write.

One SelfSubjectAccessReview per distinct (verb, group, resource, namespace) the run needs, sent
together. The answer comes from every authorizer the cluster runs (RBAC, webhooks, Node), which a
rules review (SelfSubjectRulesReview) cannot promise: it is per namespace, mixes in rules that do
not apply to cluster-scoped resources, and is "incomplete" under webhook authorizers.

Permissions are asked without object names, so a grant limited to named objects (RBAC
resourceNames) counts as missing; --skip-preflight goes ahead anyway.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

from trainerctl.cluster.manager.apply import Planned
from trainerctl.cluster.client.client import ApiError, Cluster
from trainerctl.cluster.client.views import AccessReview, UserReview
from trainerctl.cluster.manager.objects import Ref
from trainerctl.cluster.client.pool import parallel_map

SSAR_PATH = "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews"
SAR_PATH = "/apis/authorization.k8s.io/v1/subjectaccessreviews"
WHOAMI_PATH = "/apis/authentication.k8s.io/v1/selfsubjectreviews"
WORKERS = 16


@dataclass(frozen=True)
class Permission:
    verb: str
    group: str
    resource: str
    namespace: str = ""  # "": cluster-scoped (or every namespace)

    def text(self) -> str:
        resource = f"{self.resource}.{self.group}" if self.group else self.resource
        where = f"in namespace {self.namespace}" if self.namespace else "(cluster-scoped)"
        return f"{self.verb} {resource} {where}"

    def attributes(self) -> dict:
        out = {"verb": self.verb, "group": self.group, "resource": self.resource}
        if self.namespace:
            out["namespace"] = self.namespace
        return out


@dataclass(frozen=True)
class Need:
    """A permission and what needs it (shown when it is missing)."""

    permission: Permission
    why: str


def allowed(cluster: Cluster, permission: Permission) -> bool | None:
    """The API server's answer; None when it cannot be asked (no access review API). An answer
    that does not fit its view (`"allowed": "false"`) is views.Unreadable: no grant, exit 3."""
    body = {"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview",
            "spec": {"resourceAttributes": permission.attributes()}}
    try:
        answer = cluster.request("POST", SSAR_PATH, body=body)
    except ApiError as exc:
        if exc.status in (403, 404, 405):
            return None
        raise
    return AccessReview.read(answer, asked=permission.text()).granted


def missing(cluster: Cluster, needs: Iterable[Need]) -> list[Need]:
    """The needs the user lacks, in the order given (the first need of each permission stands
    for it)."""
    first: dict[Permission, Need] = {}
    for need in needs:
        first.setdefault(need.permission, need)
    answers = parallel_map(lambda p: allowed(cluster, p), list(first), workers=WORKERS)
    return [need for need, ok in zip(first.values(), answers) if ok is False]


def subject_allowed(cluster: Cluster, user: str, groups: Iterable[str], permission: Permission, *,
                    name: str = "", subresource: str = "") -> bool | None:
    """Whether another user (a controller's ServiceAccount, any authenticated user) may do it, as
    every authorizer the cluster runs answers a SubjectAccessReview; None when it cannot be asked
    (the current user may not create one). An answer that does not fit its view is Unreadable
    (exit 3), as every access review's is: `"allowed": "false"` is never read as a grant."""
    attributes = {**permission.attributes(), **({"name": name} if name else {}),
                  **({"subresource": subresource} if subresource else {})}
    review = {"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview",
              "spec": {"user": user, "groups": list(groups), "resourceAttributes": attributes}}
    try:
        answer = cluster.request("POST", SAR_PATH, body=review)
    except ApiError:
        return None
    return AccessReview.read(answer, "SubjectAccessReview", f"{user}: {permission.text()}").granted


def serviceaccount_groups(user: str) -> tuple[str, ...]:
    """The groups the API server puts a user in: a ServiceAccount's own two, and every
    authenticated user's."""
    parts = user.split(":")
    if len(parts) == 4 and parts[:2] == ["system", "serviceaccount"]:
        return ("system:serviceaccounts", f"system:serviceaccounts:{parts[2]}", "system:authenticated")
    return ("system:authenticated",)


def whoami(cluster: Cluster) -> str:
    """The user name the API server sees (SelfSubjectReview, Kubernetes 1.28+); "" when unknown."""
    try:
        answer = cluster.request("POST", WHOAMI_PATH, body={
            "apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"})
    except ApiError:
        return ""
    return UserReview.read(answer).username


# -- what a staged apply needs ----------------------------------------------------------------
def _what(p: Planned) -> str:
    return f"{p.ref.kind} {p.ref.namespace + '/' if p.ref.namespace else ''}{p.ref.name}"


def apply_needs(planned: Iterable[Planned]) -> list[Need]:
    """Before the first read of live objects: apply (patch) and read (get) each object's resource."""
    return [Need(Permission(verb, p.res.group, p.res.resource, p.ref.namespace), _what(p))
            for p in planned for verb in ("patch", "get")]


def create_needs(planned: Iterable[Planned]) -> list[Need]:
    """Once live objects are read: an apply that creates an object is also authorized as create."""
    return [Need(Permission("create", p.res.group, p.res.resource, p.ref.namespace), _what(p))
            for p in planned if p.live is None]


def delete_needs(refs: Iterable[tuple[Ref, str, str]]) -> list[Need]:
    """Deleting what a prune removes: (ref, group, resource) of each candidate."""
    return [Need(Permission("delete", group, resource, ref.namespace),
                 f"pruning {ref.kind} {ref.namespace + '/' if ref.namespace else ''}{ref.name}")
            for ref, group, resource in refs]
