"""Adopt objects another installer made: move its managed fields to our field manager.

Same idea as client-go's csaupgrade: the legacy managers' field sets are merged into our Apply
entry and their entries removed, in one JSON patch guarded by the resourceVersion. Our next apply
then owns those fields alone, so a field we no longer render is removed instead of lingering
under a manager nobody runs any more.
"""

from __future__ import annotations

import copy
import datetime as _dt

from trainerctl.cluster.client.client import ApiError, Cluster
from trainerctl.cluster.manager.webhook_retry import until_webhook_answers



def merge_fields(into: dict, other: dict) -> dict:
    """Union of two FieldsV1 tries."""
    for key, value in other.items():
        if key in into and isinstance(into[key], dict) and isinstance(value, dict):
            merge_fields(into[key], value)
        else:
            into.setdefault(key, copy.deepcopy(value))
    return into


def migrated_managed_fields(managed: list[dict], field_manager: str, api_version: str,
                            legacy: tuple[str, ...]) -> tuple[list[dict], list[str]] | None:
    """The managedFields after takeover, and which managers were taken over; None if none."""
    legacy_entries = [e for e in managed if e.get("manager") in legacy and e.get("manager") != field_manager
                      and not e.get("subresource")]
    if not legacy_entries:
        return None
    result: list[dict] = []
    target = None
    for entry in managed:
        if any(entry is e for e in legacy_entries):
            continue
        kept = copy.deepcopy(entry)
        result.append(kept)
        if (target is None and kept.get("manager") == field_manager and kept.get("operation") == "Apply"
                and not kept.get("subresource")):
            target = kept
    if target is None:
        target = {"manager": field_manager, "operation": "Apply", "apiVersion": api_version,
                  "time": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
                  "fieldsType": "FieldsV1", "fieldsV1": {}}
        result.append(target)
    for entry in legacy_entries:
        merge_fields(target.setdefault("fieldsV1", {}), entry.get("fieldsV1") or {})
    names = sorted({e["manager"] for e in legacy_entries})
    return result, names


class TakeOverMethods:
    """The takeover: a method of the ResourceManager (resource_manager.py), whose field manager
    the legacy managers' fields move to."""

    cluster: Cluster
    field_manager: str

    def take_over(self, path: str, live_meta: dict, api_version: str, legacy: tuple[str, ...],
                  deadline: float | None = None) -> tuple[str, list[str]] | None:
        """Patch the live object's managedFields; returns (new resourceVersion, managers) or None.

        The patch only applies to the resourceVersion it was computed from; when a controller wrote
        in between (a status update), read again and recompute.
        """
        cluster, field_manager = self.cluster, self.field_manager
        partial = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json"
        for attempt in range(5):
            migrated = migrated_managed_fields(live_meta.get("managedFields") or [], field_manager, api_version,
                                               legacy)
            if migrated is None:
                return None
            fields, names = migrated
            patch = [
                {"op": "test", "path": "/metadata/resourceVersion", "value": live_meta.get("resourceVersion", "")},
                {"op": "replace", "path": "/metadata/managedFields", "value": fields},
            ]
            try:
                out = until_webhook_answers(
                    lambda: cluster.request("PATCH", path, body=patch, content_type="application/json-patch+json",
                                            query={"fieldManager": field_manager}),
                    f"taking over managed fields of {path}", deadline)
                return out["metadata"]["resourceVersion"], names
            except ApiError as exc:
                if attempt == 4 or exc.status not in (400, 409, 422, 500):
                    raise
                live_meta = cluster.request("GET", path, accept=partial)["metadata"]
        return None
