"""The rollback's CRD guard: going back to an older release must not drop a version of a CRD
that the API server still stores objects at.

An object is stored at the CRD's storage version of the moment it was written, and
`status.storedVersions` lists every version that may still hold one. An older release that no
longer serves such a version (or drops it) leaves those objects unreadable, or the CRD update
refused half-way through the rollback (kubernetes/website#16379). So before anything is applied,
each version the live CRD stores at (its storedVersions and its storage version) must be served
by the CRD the rollback renders; otherwise the rollback is refused, naming the CRD, the version,
and how many objects of it there are, since any of them may be stored there.
"""

from __future__ import annotations

from dataclasses import dataclass

from trainerctl.cluster.client.client import Cluster, object_path
from trainerctl.cluster.client.views import CRD
from trainerctl.errors import PreflightError

_CRDS = ("apiextensions.k8s.io", "v1", "customresourcedefinitions")


@dataclass(frozen=True)
class Dropped:
    crd: str
    version: str
    objects: int
    stored: tuple[str, ...]  # the live CRD's status.storedVersions

    def line(self) -> str:
        return (f"CRD {self.crd} version {self.version} has {self.objects} object(s) that may be stored at it "
                f"(status.storedVersions: {', '.join(self.stored) or 'none'})")


def _served(crd: dict) -> set[str]:
    versions = (crd.get("spec") or {}).get("versions") or []
    return {v.get("name") for v in versions if isinstance(v, dict) and v.get("served") is True}


def _count(cluster: Cluster, crd: CRD, version: str) -> int:
    """How many objects of the CRD there are, listed through `version` when the server still
    serves it, else through its storage version (one small page: remainingItemCount says the rest)."""
    served = [v.name for v in crd.versions if v.served]
    through = version if version in served else next((v.name for v in crd.versions if v.storage), served[0])
    path = object_path(crd.group, through, crd.plural, None)
    total, token = 0, None
    while True:
        page = cluster.request("GET", path, query={"limit": 500, "continue": token})
        items = page.get("items") if isinstance(page.get("items"), list) else []
        meta = page.get("metadata") if isinstance(page.get("metadata"), dict) else {}
        total += len(items)
        token = meta.get("continue") if isinstance(meta.get("continue"), str) else None
        if not token:
            return total


def dropped(cluster: Cluster, target_objects: list[dict]) -> list[Dropped]:
    """Each (CRD, version) the live cluster stores at and the target render does not serve."""
    out = []
    for target in target_objects:
        if target.get("kind") != "CustomResourceDefinition" or not str(target.get("apiVersion", "")).startswith(
                "apiextensions.k8s.io/"):
            continue
        name = (target.get("metadata") or {}).get("name")
        raw = cluster.get_or_none(object_path(*_CRDS, None, name))
        if raw is None:
            continue
        live = CRD.read(raw)
        stored = [*live.stored_versions, *(v.name for v in live.versions if v.storage)]
        served = _served(target)
        for version in dict.fromkeys(v for v in stored if v not in served):
            has_any = any(v.served for v in live.versions)
            out.append(Dropped(name, version, _count(cluster, live, version) if has_any else 0, live.stored_versions))
    return out


def refuse_dropped(cluster: Cluster, target_objects: list[dict], *, what: str) -> None:
    """PreflightError (exit 3) naming the first stored version `what` (the rollback's target)
    would drop, and how many others there are."""
    found = dropped(cluster, target_objects)
    if not found:
        return
    more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
    raise PreflightError(f"rollback refused: {found[0].line()}, and {what} does not serve {found[0].version}{more}; "
                         "those objects would become unreadable. Migrate them to a version it serves (and drop "
                         f"{found[0].version} from status.storedVersions), or pass --allow-breaking")
