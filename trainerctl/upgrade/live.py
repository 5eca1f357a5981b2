"""Read the live side of an upgrade check from the API server.

Goes through trainerctl.cluster.client.client.Cluster (raw JSON, no kubernetes model classes: CRDs are
megabytes and the models would only add seconds of deserialisation).
"""

from __future__ import annotations

from typing import Any, Iterable

from trainerctl.cluster.client.api_shape import check_crd
from trainerctl.cluster.client.client import ApiError
from trainerctl.trust.limits import limit_for
from trainerctl.upgrade.crd_diff import OBJECTS_UNREAD, Finding, is_crd
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


def versions_to_read(live_crds: list[dict], target_objects: Iterable[dict], findings: list[Finding]) -> dict[str, set[str]]:
    """Per CRD, the versions whose objects the check reads: each version both sides serve whose
    schema the target changes (its objects are validated against the new schema), and each
    version of a finding about fields (a removed or newly required one)."""
    targets = {o["metadata"]["name"]: o for o in target_objects if is_crd(o)}
    wanted: dict[str, set[str]] = {}
    for f in findings:
        if f.kind in OBJECT_FINDINGS and f.version:
            wanted.setdefault(f.crd, set()).add(f.version)
    for crd in live_crds:
        name = crd["metadata"]["name"]
        target = targets.get(name)
        if target is None:
            continue
        live_versions, target_versions = _served_schemas(crd), _served_schemas(target)
        for version, schema in target_versions.items():
            if version in live_versions and live_versions[version] != schema:
                wanted.setdefault(name, set()).add(version)
    return wanted


def _served_schemas(crd: dict) -> dict[str, Any]:
    return {v.get("name"): (v.get("schema") or {}).get("openAPIV3Schema")
            for v in (crd.get("spec") or {}).get("versions") or [] if isinstance(v, dict) and v.get("served")}


def list_custom_objects(cluster: Any, live_crds: list[dict],
                        wanted: dict[str, set[str]]) -> tuple[dict[str, list[dict]], list[Finding]]:
    """The objects of each wanted CRD version, read through that version, at most
    TRAINERCTL_MAX_UPGRADE_OBJECTS per version; a version with more (or a server that keeps
    paging) is a blocking finding: what was not read was not checked."""
    limit = limit_for("upgrade-objects")
    out: dict[str, list[dict]] = {}
    unread: list[Finding] = []
    for crd in live_crds:
        name = crd["metadata"]["name"]
        group, plural = crd["spec"]["group"], crd["spec"]["names"]["plural"]
        for version in sorted(wanted.get(name, ())):
            read = 0
            try:
                # Cluster.pages ends a list that never ends; the object limit ends one that is long.
                for page in cluster.pages(f"/apis/{group}/{version}/{plural}", page=_PAGE):
                    items = [i for i in page.get("items") or [] if isinstance(i, dict)]
                    out.setdefault(name, []).extend(items[:max(0, limit - read)])
                    read += len(items)
                    if read > limit:
                        unread.append(Finding(
                            name, OBJECTS_UNREAD,
                            f"more than {limit} objects (TRAINERCTL_MAX_UPGRADE_OBJECTS); only the first {limit} "
                            "were checked", version=version, blocking=True))
                        break
            except ApiError as exc:
                if exc.status != 404:  # 404: version not served any more: nothing to read through it
                    raise
    return out, unread
