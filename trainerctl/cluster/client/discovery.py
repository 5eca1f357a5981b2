"""What the server serves: kind -> resource mapping from (aggregated) discovery, cached per run.

Custom resources whose CRD is only in the render (not yet on the cluster) are mapped from that
CRD, so a dry-run can say "create" for them instead of failing. A server without aggregated
discovery costs one request per group version it lists, so at most MAX_GROUP_VERSIONS of them
are read (a real cluster serves a few hundred).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

from trainerctl.cluster.client import api_shape
from trainerctl.cluster.client.client import ApiError, BadResponse, Cluster
from trainerctl.cluster.client.pool import parallel_map
from trainerctl.errors import TrainerctlError

_AGGREGATED = ("application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,"
               "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,"
               "application/json")
MAX_GROUP_VERSIONS = 1000  # docs/trust.md


@dataclass(frozen=True)
class Resource:
    group: str
    version: str
    kind: str
    resource: str
    namespaced: bool
    verbs: tuple[str, ...] = ()
    served: bool = True  # False: known only from a CRD in the render

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version


class UnknownKind(TrainerctlError):
    pass


def split_api_version(api_version: str) -> tuple[str, str]:
    group, _, version = api_version.rpartition("/")
    return group, version


class Discovery:
    """Discovery for one run. `refresh()` after CRDs are established picks up their kinds."""

    def __init__(self, cluster: Cluster):
        self.cluster = cluster
        self._by_gvk: dict[tuple[str, str, str], Resource] = {}
        self._groups: set[str] = set()
        self._pending: dict[tuple[str, str, str], Resource] = {}
        self._lock = threading.Lock()
        self._loaded = False

    # -- loading -------------------------------------------------------------------------
    def refresh(self) -> None:
        by_gvk: dict[tuple[str, str, str], Resource] = {}
        groups: set[str] = set()
        roots = ("/api", "/apis")
        docs = parallel_map(lambda root: self.cluster.request("GET", root, accept=_AGGREGATED), roots)
        for root, doc in zip(roots, docs):
            if doc.get("kind") == "APIGroupDiscoveryList":
                self._read_aggregated(doc, by_gvk, groups)
            else:
                self._read_legacy(root, doc, by_gvk, groups)
        with self._lock:
            self._by_gvk, self._groups, self._loaded = by_gvk, groups, True

    def _read_aggregated(self, doc: dict, out: dict, groups: set[str]) -> None:
        where = f"GET /apis: the discovery document of {self.cluster.server}"
        for group, version, kind, resource, namespaced, verbs in api_shape.discovery_aggregated(doc, where):
            groups.add(group)
            out.setdefault((group, version, kind), Resource(group, version, kind, resource, namespaced, verbs))

    def _read_legacy(self, root: str, doc: dict, out: dict, groups: set[str]) -> None:
        where = f"GET {root}: the discovery document of {self.cluster.server}"
        if root == "/api":
            gvs = [("", v) for v in api_shape.discovery_versions(doc, where)]
        else:
            gvs = api_shape.discovery_groups(doc, where)
        gvs = list(dict.fromkeys(gvs))  # a version listed twice is read once
        if len(gvs) > MAX_GROUP_VERSIONS:
            raise BadResponse(f"{where} lists {len(gvs)} API group versions, each a request to read; trainerctl "
                              f"reads at most {MAX_GROUP_VERSIONS}")
        for group, version in gvs:
            groups.add(group)
            path = f"/api/{version}" if not group else f"/apis/{group}/{version}"
            try:
                rl = self.cluster.request("GET", path)
            except ApiError:
                continue  # an unavailable aggregated API must not break the run
            for name, kind, namespaced, verbs in api_shape.discovery_resources(rl, f"GET {path}"):
                if "/" in name:
                    continue
                out.setdefault((group, version, kind), Resource(group, version, kind, name, namespaced, verbs))

    def _ensure(self) -> None:
        if not self._loaded:
            self.refresh()

    # -- queries -------------------------------------------------------------------------
    def add_rendered_crds(self, objects: list[dict]) -> None:
        """Map the kinds defined by CRDs in the render, for use before they are served."""
        for obj in objects:
            if obj.get("kind") != "CustomResourceDefinition":
                continue
            spec = obj.get("spec") or {}
            names = spec.get("names") or {}
            for ver in spec.get("versions") or []:
                key = (spec.get("group", ""), ver.get("name", ""), names.get("kind", ""))
                self._pending[key] = Resource(key[0], key[1], key[2], names.get("plural", ""),
                                              spec.get("scope") == "Namespaced", (), served=False)

    def has_group(self, group: str) -> bool:
        self._ensure()
        return group in self._groups

    def lookup(self, api_version: str, kind: str) -> Resource | None:
        self._ensure()
        group, version = split_api_version(api_version)
        return self._by_gvk.get((group, version, kind)) or self._pending.get((group, version, kind))

    def resolve(self, api_version: str, kind: str) -> Resource:
        res = self.lookup(api_version, kind)
        if res is None or not res.served:
            # A CRD may have become established since the last look: one refresh, then give up.
            self.refresh()
            res = self.lookup(api_version, kind) or res
        if res is None:
            raise UnknownKind(f"kind {kind} ({api_version}) is not served by the cluster and no "
                              "rendered CRD defines it")
        return res

    def all_resources(self) -> list[Resource]:
        self._ensure()
        return list(self._by_gvk.values())

    def preferred(self, group: str, kind: str) -> Resource | None:
        self._ensure()
        for (g, _v, k), res in self._by_gvk.items():  # discovery lists the preferred version first
            if g == group and k == kind:
                return res
        return None
