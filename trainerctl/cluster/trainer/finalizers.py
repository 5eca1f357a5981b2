"""The legacy runtime finalizer: Trainer 2.0-2.2 put it on runtimes that TrainJobs use, only those
controllers remove it, and 2.3 never does."""

from __future__ import annotations

from trainerctl.cluster.manager.delete import remove_finalizer
from trainerctl.cluster.client.client import ApiError, Cluster, object_path
from trainerctl.cluster.client.discovery import Discovery
from trainerctl.cluster.manager.listing import Found, custom_resource_type, list_meta
from trainerctl.cluster.trainer.policy import LEGACY_FINALIZER


def strip(cluster: Cluster, path: str, meta: dict) -> str:
    """Remove it from one object; the new resourceVersion, or "" when it was not there."""
    return remove_finalizer(cluster, path, meta, LEGACY_FINALIZER)


def release_all(cluster: Cluster, discovery: Discovery, crds: list[Found]) -> int:
    """Strip it from every object of the CRDs about to go.

    Once the controller is gone (uninstall has just deleted it) the CRD's deletion would wait
    forever for such a runtime, ours or a user's. Run after the webhooks are deleted, so the
    update does not depend on a controller that is shutting down.
    """
    released = 0
    for crd in crds:
        _, res = custom_resource_type(cluster, discovery, crd)
        if res is None:
            continue
        for item in list_meta(cluster, res, None, ""):
            md = item.get("metadata") or {}
            if LEGACY_FINALIZER not in (md.get("finalizers") or []):
                continue
            path = object_path(res.group, res.version, res.resource, md.get("namespace") if res.namespaced else None,
                               md["name"])
            try:
                released += bool(strip(cluster, path, md))
            except ApiError as exc:
                if exc.status not in (404, 409, 422):  # gone, or changed meanwhile: the CRD wait says
                    raise
    return released
