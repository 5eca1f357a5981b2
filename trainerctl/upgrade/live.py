"""Read the live side of an upgrade check from the API server.

Goes through trainerctl.cluster.client.client.Cluster (raw JSON, no kubernetes model classes: CRDs are
megabytes and the models would only add seconds of deserialisation).
"""

from __future__ import annotations

from typing import Any, Iterable

from trainerctl.cluster.client.api_shape import check_crd
from trainerctl.cluster.client.client import ApiError
from trainerctl.upgrade.crd_diff import Finding, is_crd
from trainerctl.upgrade.usage import OBJECT_FINDINGS

_PAGE = 500
_CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"


def read_live_crds(cluster: Any, target_objects: Iterable[dict], *, owner_label: str | None = None) -> list[dict]:
    names = sorted({o["metadata"]["name"] for o in target_objects if is_crd(o)})
    found: dict[str, dict] = {}
    for name in names:
        try:
            found[name] = check_crd(cluster.request("GET", f"{_CRDS}/{name}"), f"GET {_CRDS}/{name}")
        except ApiError as exc:
            if exc.status != 404:
                raise
    if owner_label:
        # CRDs we installed earlier that the target no longer renders: reported, never deleted.
        listed = cluster.request("GET", _CRDS, query={"labelSelector": owner_label})
        for crd in listed.get("items") or []:
            check_crd(crd, f"GET {_CRDS}")
            found.setdefault(crd["metadata"]["name"],
                             dict(crd, apiVersion="apiextensions.k8s.io/v1", kind="CustomResourceDefinition"))
    return [found[n] for n in sorted(found)]


def list_custom_objects(cluster: Any, live_crds: list[dict], findings: list[Finding]) -> dict[str, list[dict]]:
    """Objects of each CRD that loses a field or gains a required one, read at that version."""
    wanted: dict[str, set[str]] = {}
    for f in findings:
        if f.kind in OBJECT_FINDINGS and f.version:
            wanted.setdefault(f.crd, set()).add(f.version)
    out: dict[str, list[dict]] = {}
    for crd in live_crds:
        name = crd["metadata"]["name"]
        group, plural = crd["spec"]["group"], crd["spec"]["names"]["plural"]
        for version in sorted(wanted.get(name, ())):
            try:
                for page in cluster.pages(f"/apis/{group}/{version}/{plural}", page=_PAGE):
                    out.setdefault(name, []).extend(page.get("items") or [])
            except ApiError as exc:
                if exc.status != 404:  # 404: version not served any more: nothing to read through it
                    raise
    return out
