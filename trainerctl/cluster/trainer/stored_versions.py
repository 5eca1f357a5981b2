"""The rollback's CRD guard: going back to an older release must not drop a version of a CRD
that the API server still stores objects at.

An object is stored at the CRD's storage version of the moment it was written, and
`status.storedVersions` lists every version that may still hold one. An older release that no
longer serves such a version (or drops it) leaves those objects unreadable, or the CRD update
refused half-way through the rollback (kubernetes/website#16379). So before anything is applied,
each version the live CRD stores at (its storedVersions and its storage version) must be served
by the CRD the rollback renders; otherwise the rollback is refused, naming the CRD, the version,
and how many objects of it there are, since any of them may be stored there. The count is one
list request per CRD (a page and the server's remainingItemCount), so a CRD whose
storedVersions lists thousands of versions costs no more requests than one that lists two.
"""

from __future__ import annotations

from dataclasses import dataclass

from trainerctl.cluster.client.client import Cluster, object_path
from trainerctl.cluster.client.views import CRD
from trainerctl.errors import PreflightError

_CRDS = ("apiextensions.k8s.io", "v1", "customresourcedefinitions")
PAGE = 500  # objects asked for in the one list request per CRD
SHOWN = 8  # storedVersions named in a line; the rest are counted
_COUNT_MAX = 2**31 - 1


@dataclass(frozen=True)
class Dropped:
    crd: str
    version: str
    objects: int
    stored: tuple[str, ...]  # the live CRD's status.storedVersions
    at_least: bool = False  # `objects` is one page's worth: the server did not say how many there are

    def line(self) -> str:
        shown = ", ".join(self.stored[:SHOWN]) or "none"
        if len(self.stored) > SHOWN:
            shown += f", … ({len(self.stored)} in all)"
        many = f"at least {self.objects}" if self.at_least else str(self.objects)
        return (f"CRD {self.crd} version {self.version} has {many} object(s) that may be stored at it "
                f"(status.storedVersions: {shown})")


def _served(crd: dict) -> set[str]:
    versions = (crd.get("spec") or {}).get("versions") or []
    return {v.get("name") for v in versions if isinstance(v, dict) and v.get("served") is True}


def _count(cluster: Cluster, crd: CRD) -> tuple[int, bool]:
    """How many objects of the CRD there are (any served version lists them all), from one page:
    its items and the server's remainingItemCount; (PAGE, True) when it says only that there are
    more. One request per CRD, however many versions the server lists."""
    served = [v.name for v in crd.versions if v.served]
    through = next((v.name for v in crd.versions if v.storage and v.served), served[0])
    page = cluster.request("GET", object_path(crd.group, through, crd.plural, None), query={"limit": PAGE})
    items = page.get("items") if isinstance(page.get("items"), list) else []
    meta = page.get("metadata") if isinstance(page.get("metadata"), dict) else {}
    rest = meta.get("remainingItemCount")
    if isinstance(rest, int) and not isinstance(rest, bool) and 0 <= rest <= _COUNT_MAX:
        return len(items) + rest, False
    return len(items), bool(meta.get("continue"))


def dropped(cluster: Cluster, target_objects: list[dict]) -> list[Dropped]:
    """Each (CRD, version) the live cluster stores at and the target render does not serve. Its
    requests are bounded by the render: one read of each CRD it renders, one count of each that
    would drop a version (never one per entry of a storedVersions list the server sends)."""
    out = []
    seen: set[str] = set()
    for target in target_objects:
        if target.get("kind") != "CustomResourceDefinition" or not str(target.get("apiVersion", "")).startswith(
                "apiextensions.k8s.io/"):
            continue
        name = (target.get("metadata") or {}).get("name")
        if not isinstance(name, str) or name in seen:
            continue
        seen.add(name)
        raw = cluster.get_or_none(object_path(*_CRDS, None, name))
        if raw is None:
            continue
        live = CRD.read(raw)
        served = _served(target)
        gone = list(dict.fromkeys(v for v in (*live.stored_versions, *(v.name for v in live.versions if v.storage))
                                  if v not in served))
        if not gone:
            continue
        objects, at_least = _count(cluster, live) if any(v.served for v in live.versions) else (0, False)
        out.extend(Dropped(name, version, objects, live.stored_versions, at_least) for version in gone)
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
