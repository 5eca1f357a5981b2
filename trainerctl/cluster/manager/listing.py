"""Finding objects by label across every type: what uninstall deletes, what a hand-over releases."""

from __future__ import annotations

from dataclasses import dataclass

from trainerctl.cluster.client.client import ApiError, Cluster, object_path
from trainerctl.cluster.client.views import CRD as CRDView
from trainerctl.cluster.client.discovery import Discovery, Resource
from trainerctl.cluster.manager.delete import Target
from trainerctl.cluster.manager.objects import Ref
from trainerctl.cluster.client.pool import parallel_map

CRD = ("apiextensions.k8s.io", "CustomResourceDefinition")
PARTIAL_LIST = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json"


@dataclass
class Found:
    ref: Ref
    res: Resource
    meta: dict

    @property
    def path(self) -> str:
        return object_path(self.res.group, self.res.version, self.res.resource, self.ref.namespace or None,
                           self.ref.name)


def selector_matches(selector: str, labels: object) -> bool:
    """Whether `labels` match a label selector of the forms trainerctl asks for: `key`, `!key`,
    `key=value` (or `==`), `key!=value`, joined by commas ("" matches everything)."""
    if not isinstance(labels, dict):
        return not selector
    for term in filter(None, (t.strip() for t in selector.split(","))):
        if "!=" in term:
            key, value = term.split("!=", 1)
            if labels.get(key.strip()) == value.strip():
                return False
        elif "=" in term:
            key, value = term.replace("==", "=", 1).split("=", 1)
            if labels.get(key.strip()) != value.strip():
                return False
        elif term.startswith("!"):
            if term[1:].strip() in labels:
                return False
        elif term not in labels:
            return False
    return True


def answers(items: list, namespace: str | None, selector: str) -> list[dict]:
    """The items of a list answer that are what was asked for: objects with a name, in `namespace`
    (when one was asked), matching `selector`. A list answer is the server's word, and a server
    may answer items outside the selector or the namespace; those are left out."""
    out = []
    for item in items:
        meta = item.get("metadata") if isinstance(item, dict) else None
        if not isinstance(meta, dict) or not isinstance(meta.get("name"), str) or not meta["name"]:
            continue
        if namespace is not None and meta.get("namespace", "") != namespace:
            continue
        if selector_matches(selector, meta.get("labels") or {}):
            out.append(item)
    return out


def list_meta(cluster: Cluster, res: Resource, namespace: str | None, selector: str) -> list[dict]:
    """Every object of `res` (in `namespace` when namespaced) matching `selector`, as metadata;
    what the server answered beyond that is left out (`answers`)."""
    path = object_path(res.group, res.version, res.resource, namespace if res.namespaced else None)
    items: list[dict] = []
    try:
        for page in cluster.pages(path, query={"labelSelector": selector}, accept=PARTIAL_LIST):
            items.extend(answers(page.get("items") or [], namespace if res.namespaced else "", selector))
    except ApiError as exc:
        if exc.status not in (404, 405):
            raise
    return items  # 404 or 405: the kind went away meanwhile, or does not list


class ListingMethods:
    """The search by label: a method of the ResourceManager (resource_manager.py), for what carries
    the session's ownership label."""

    cluster: Cluster
    namespace: str
    owner_label: str

    def find_labelled(self, types: list[Resource], *, everywhere: bool = False) -> list[Found]:
        """Objects of `types` with the ownership label, in the session's namespace (`everywhere`:
        every namespace) and cluster-wide."""
        namespace = None if everywhere else self.namespace

        def scan(res: Resource) -> list[Found]:
            out = []
            for item in list_meta(self.cluster, res, namespace, self.owner_label):
                md = item.get("metadata") or {}
                found = Found(Ref(res.group, res.kind, md.get("namespace", "") if res.namespaced else "", md["name"]),
                              res, md)
                if not Target.of(res, found.ref.namespace, found.ref.name).bad_name():  # no such name enters a URL
                    out.append(found)
            return out

        return [f for chunk in parallel_map(scan, types) for f in chunk]


def candidate_types(discovery: Discovery, inventory) -> list[Resource]:
    """The types an inventory records, or without one every type we could list and delete (one
    preferred version per kind)."""
    if inventory is not None:
        seen, out = set(), []
        for key, entry in inventory.entries.items():
            ref = Ref.from_key(key)
            res = discovery.lookup(entry.api_version, ref.kind) or discovery.preferred(ref.group, ref.kind)
            if res and (res.group, res.kind) not in seen:
                seen.add((res.group, res.kind))
                out.append(res)
        return out
    seen, out = set(), []
    for res in discovery.all_resources():
        if (res.group, res.kind) in seen or not {"list", "delete"} <= set(res.verbs):
            continue
        seen.add((res.group, res.kind))
        out.append(res)
    return out


def custom_resource_type(cluster: Cluster, discovery: Discovery, crd: Found) -> tuple[str, Resource | None]:
    """The kind a CRD defines and its served resource (None when discovery does not list it)."""
    found = CRDView.read(cluster.request("GET", crd.path))  # views.Unreadable: one line, the command ends
    return found.kind or crd.ref.name, discovery.preferred(found.group, found.kind)


def count_custom_resources(cluster: Cluster, discovery: Discovery, crds: list[Found]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for crd in crds:
        kind, res = custom_resource_type(cluster, discovery, crd)
        if res is not None:
            counts[kind] = len(list_meta(cluster, res, None, ""))
    return counts
