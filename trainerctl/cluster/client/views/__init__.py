"""Typed views of what trainerctl reads from a server: one small view per kind it reasons about.

An API server, and anyone allowed to create a Lease, Secret or Pod in a namespace, can answer
objects of any shape. So no command indexes the raw JSON of these kinds: each reads a view,
built by `View.read(raw)` with the type of every field it uses checked, numbers bounded, times
parsed by their zone rule (metav1.Time and MicroTime: RFC 3339 with a zone) and payloads decoded
within the limits of trust/limits.py. An object that does not fit raises `Unreadable`, one line naming
the object, the field and what was expected:

    unreadable Lease ns/trainerctl-lock: spec.leaseDurationSeconds: expected an integer 1..2147483647, got 'abc'

A command that can go on reports the line and skips the object (`read_each`); one that cannot
ends with it (exit 3).

`VIEWS` lists every view by kind; the property tests build each from arbitrary JSON. A new kind
is a module here with a `read` classmethod and a line
in VIEWS, and nothing else: no command reads that kind's raw JSON.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable, TypeVar

from trainerctl.cluster.client.views.admission import Webhook, WebhookConfiguration
from trainerctl.cluster.client.views.apps import Deployment, ReplicaSet, Selector
from trainerctl.cluster.client.views.authorization import AccessReview, UserReview
from trainerctl.cluster.client.views.coordination import Lease
from trainerctl.cluster.client.views.core import ConfigMap, ContainerStatus, Event, Node, Pod, by_time
from trainerctl.cluster.client.views.crd import CRD
from trainerctl.cluster.client.views.field_types import Unreadable, parse_time
from trainerctl.cluster.client.views.helm_record import HelmRecord, HelmRelease
from trainerctl.cluster.client.views.history_record import HistoryRecord
from trainerctl.cluster.client.views.inventory import Entry, InventoryRecord
from trainerctl.cluster.client.views.meta import Condition, Meta, condition, meta_of
from trainerctl.cluster.client.views.network import EndpointSlice, Service
from trainerctl.cluster.client.views.rbac import RoleBinding
from trainerctl.cluster.client.views.version import ServerVersion

__all__ = ["meta_of", "AccessReview", "CRD", "Condition", "ConfigMap", "ContainerStatus", "Deployment", "EndpointSlice", "Entry", "Event", "HelmRecord",
           "HelmRelease", "HistoryRecord", "InventoryRecord", "Lease", "Meta", "Node", "Pod", "ReplicaSet", "RoleBinding", "Selector", "Service", "ServerVersion",
           "Unreadable", "UserReview", "VIEWS", "Webhook", "WebhookConfiguration", "by_time", "condition", "parse_time",
           "read_each"]

# Every view, by the kind it reads.
VIEWS: dict[str, Callable[[Any], Any]] = {
    "Lease": Lease.read,
    "Deployment": Deployment.read,
    "ReplicaSet": ReplicaSet.read,
    "Pod": Pod.read,
    "Event": Event.read,
    "Node": Node.read,
    "ConfigMap": ConfigMap.read,
    "CustomResourceDefinition": CRD.read,
    "Service": Service.read,
    "EndpointSlice": EndpointSlice.read,
    "HelmRecord": HelmRecord.read,
    "HelmRecord (ConfigMap)": lambda raw: HelmRecord.read(raw, "ConfigMap"),
    "HelmRelease": HelmRelease.read,
    "Inventory": InventoryRecord.read,
    "HistoryRecord": HistoryRecord.read,
    "ValidatingWebhookConfiguration": WebhookConfiguration.read,
    "MutatingWebhookConfiguration": lambda raw: WebhookConfiguration.read(raw, "MutatingWebhookConfiguration"),
    "SelfSubjectAccessReview": AccessReview.read,
    "SubjectAccessReview": lambda raw: AccessReview.read(raw, "SubjectAccessReview"),
    "SelfSubjectReview": UserReview.read,
    "ClusterRoleBinding": RoleBinding.read,
    "version.Info": ServerVersion.read,
}

V = TypeVar("V")


def read_each(read: Callable[[Any], V], items: Iterable[Any], unreadable: list[str]) -> list[V]:
    """The items that fit the view; each that does not is one line in `unreadable`, and skipped."""
    out = []
    for item in items:
        try:
            view = read(item)
        except Unreadable as exc:
            unreadable.append(str(exc))
            continue
        if view is not None:
            out.append(view)
    return out
