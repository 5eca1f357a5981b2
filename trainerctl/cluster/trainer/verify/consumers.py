"""Tier 5, consumers: what on the cluster uses Trainer, against the Trainer version each needs
(trainerctl/data/consumers.yaml, with the upstream thread for each). Kueue is found from its
Deployment (its version from the image tag); the Kubeflow SDK needs Trainer's public ConfigMap,
where it looks for it, and readable by any authenticated user. A consumer that needs more is a
warning with the version it needs; one verify cannot look for is a warning too: never a failure."""

from __future__ import annotations

from functools import lru_cache

from trainerctl.cluster.client.client import ApiError, Cluster, object_path
from trainerctl.cluster.client.views import AccessReview, ConfigMap, Deployment, Unreadable, read_each
from trainerctl.cluster.manager import inventory as inv_mod
from trainerctl.cluster.trainer.floors import parse_version
from trainerctl.cluster.trainer.verify.result import OK, WARN, Result
from trainerctl.own_data import load_yaml

TIER = "consumers"


@lru_cache(maxsize=1)
def table() -> dict:
    return load_yaml("consumers.yaml")


def check(cluster: Cluster, namespace: str) -> list[Result]:
    trainer = _trainer_version(cluster, namespace)
    return [*_kueue(cluster, trainer), _sdk(cluster, namespace, trainer)]


def _trainer_version(cluster: Cluster, namespace: str) -> str:
    """The installed Trainer's version: the inventory's, else the public ConfigMap's ("" unknown)."""
    try:
        inventory = inv_mod.read(cluster, namespace)
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


def _below(trainer: str, needed: str) -> bool:
    have, want = parse_version(trainer), parse_version(needed)
    return bool(have and want and have < want)


def _kueue(cluster: Cluster, trainer: str) -> list[Result]:
    entry = table()["kueue"]
    try:
        items = cluster.items(object_path("apps", "v1", "deployments", None),
                              query={"fieldSelector": f"metadata.name={entry['deployment']}"})
    except ApiError as exc:
        return [Result(TIER, "Kueue", WARN, f"cannot look for Kueue's Deployment {entry['deployment']}: {exc}")]
    out = []
    for dep in read_each(Deployment.read, items, []):
        image = next((c.image for c in dep.containers if ":" in c.image.rsplit("/", 1)[-1]), "")
        version = image.rsplit(":", 1)[1] if image else ""
        floors = [f for f in entry["floors"] if parse_version(version) and
                  parse_version(version) >= parse_version(f["kueue"])]
        needs = max(floors, key=lambda f: parse_version(f["trainer"]), default=None)
        what = f"Kueue {version or '(version unknown)'} ({dep.display})"
        if needs and _below(trainer, needs["trainer"]):
            out.append(Result(TIER, what, WARN, f"needs Trainer {needs['trainer']} or later, Trainer {trainer} is "
                                                f"installed ({needs['thread']})"))
        else:
            out.append(Result(TIER, what, OK, f"Trainer {trainer or '(version unknown)'} is enough"
                                              + (f" (it needs {needs['trainer']}: {needs['thread']})" if needs else "")))
    return out


def _sdk(cluster: Cluster, namespace: str, trainer: str) -> Result:
    sdk = table()["sdk"]
    what = f"Kubeflow SDK (ConfigMap {namespace}/{sdk['configmap']})"
    threads = ", ".join(sdk["threads"])
    if _below(trainer, sdk["trainer"]):
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
    review = {"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview", "spec": {
        "user": "trainerctl-verify:any-user", "groups": ["system:authenticated"],
        "resourceAttributes": {"namespace": namespace, "verb": "get", "resource": "configmaps", "name": name}}}
    try:
        answer = cluster.request("POST", "/apis/authorization.k8s.io/v1/subjectaccessreviews", body=review)
    except ApiError:
        return None
    return AccessReview.read(answer, "SubjectAccessReview").granted  # one that does not fit: exit 3
