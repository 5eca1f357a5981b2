"""Tier 5, consumers: what on the cluster uses Trainer, against the Trainer version each needs
(trainerctl/data/consumers.yaml, read by trainer/consumers.py, which the preflight's `consumers`
check reads too). Kueue is found from its Deployment (its version from the image tag); the
Kubeflow SDK needs Trainer's public ConfigMap, where it looks for it, and readable by any
authenticated user. A consumer that needs more is a warning with the version it needs; one verify
cannot look for is a warning too: never a failure."""

from __future__ import annotations

from trainerctl.cluster.client.client import ApiError, Cluster, object_path
from trainerctl.cluster.client.views import ConfigMap, Unreadable
from trainerctl.cluster.manager.session import Session
from trainerctl.cluster.operations import access
from trainerctl.cluster.trainer.consumers import below, kueue, table
from trainerctl.cluster.trainer.floors import parse_version
from trainerctl.cluster.trainer.verify.result import OK, WARN, Result

TIER = "consumers"


def check(session: Session) -> list[Result]:
    """The consumers of Trainer found on the cluster against the version the session's namespace
    has installed."""
    cluster, namespace = session.cluster, session.namespace
    trainer = _trainer_version(session)
    return [*_kueue(cluster, trainer), _sdk(cluster, namespace, trainer)]


def _trainer_version(session: Session) -> str:
    """The installed Trainer's version: the inventory's, else the public ConfigMap's ("" unknown)."""
    cluster, namespace = session.cluster, session.namespace
    try:
        inventory = session.resources.read_inventory()
    except Exception:  # an inventory that cannot be read: the ConfigMap may still say
        inventory = None
    version = (inventory.source.get("trainer_version") if inventory else "") or ""
    if isinstance(version, str) and parse_version(version):
        return version
    sdk = table()["sdk"]
    data = _configmap(cluster, namespace, sdk["configmap"])
    value = (data or {}).get(sdk["key"])
    return value if isinstance(value, str) and parse_version(value) else ""


def _configmap(cluster: Cluster, namespace: str, name: str) -> dict[str, str] | None:
    """Its data; None when it is missing or cannot be read, {} when it does not fit its view."""
    try:
        raw = cluster.get_or_none(object_path("", "v1", "configmaps", namespace, name))
    except ApiError:
        return None
    if raw is None:
        return None
    try:
        return ConfigMap.read(raw).data
    except Unreadable:
        return {}


def _kueue(cluster: Cluster, trainer: str) -> list[Result]:
    try:
        found = kueue(cluster)
    except ApiError as exc:
        return [Result(TIER, "Kueue", WARN, f"cannot look for Kueue's Deployment {table()['kueue']['deployment']}: {exc}")]
    out = []
    for consumer in found:
        floor = consumer.floor
        if consumer.too_new_for(trainer):
            out.append(Result(TIER, consumer.label, WARN, f"needs Trainer {floor.trainer} or later, Trainer {trainer} "
                                                          f"is installed ({floor.cited()})"))
        else:
            out.append(Result(TIER, consumer.label, OK, f"Trainer {trainer or '(version unknown)'} is enough"
                              + (f" (it needs {floor.trainer}: {floor.threads[0]})" if floor else "")))
    return out


def _sdk(cluster: Cluster, namespace: str, trainer: str) -> Result:
    sdk = table()["sdk"]
    what = f"Kubeflow SDK (ConfigMap {namespace}/{sdk['configmap']})"
    threads = ", ".join(sdk["threads"])
    if below(trainer, sdk["trainer"]):
        return Result(TIER, what, WARN, f"the SDK reads Trainer's version from a ConfigMap Trainer {sdk['trainer']} "
                                        f"adds; Trainer {trainer} is installed ({threads})")
    data = _configmap(cluster, namespace, sdk["configmap"])
    if data is None:
        return Result(TIER, what, WARN, f"missing (or not readable): the SDK cannot check Trainer's version ({threads})")
    notes = []
    if namespace != sdk["namespace"]:
        notes.append(f"the SDK looks in {sdk['namespace']}: its users set KUBEFLOW_SYSTEM_NAMESPACE={namespace}")
    readable = _authenticated_may_read(cluster, namespace, sdk["configmap"])
    if readable is False:
        return Result(TIER, what, WARN, f"authenticated users may not read it, so the SDK cannot check Trainer's "
                                        f"version ({threads})", notes)
    return Result(TIER, what, OK, f"says {data.get(sdk['key'], '?')}" + ("" if readable else
                                                                       " (who may read it was not checked)"), notes)


def _authenticated_may_read(cluster: Cluster, namespace: str, name: str) -> bool | None:
    """Whether any authenticated user may get the ConfigMap (a SubjectAccessReview); None when
    verify may not ask."""
    return access.subject_allowed(cluster, "trainerctl-verify:any-user", ("system:authenticated",),
                                  access.Permission("get", "", "configmaps", namespace), name=name)
