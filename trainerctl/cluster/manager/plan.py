"""From rendered objects to a plan: each object with its resource, apply body, stage and hash, and
what is live on the cluster now."""

from __future__ import annotations

from urllib.parse import quote

from trainerctl.cluster.manager.apply import Planned, get_meta
from trainerctl.cluster.client.client import ApiError, Cluster, object_path
from trainerctl.cluster.client.discovery import Discovery
from trainerctl.cluster.manager.objects import body_hash, parse_label, prepare, ref_of
from trainerctl.cluster.client.pool import parallel_map
from trainerctl.cluster.manager.stages import WEBHOOK_KINDS, StagePlan, WebhookRules
from trainerctl.errors import InputError, PreflightError

LIST_META = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json"


def ensure_namespace(objects: list[dict], namespace: str, owner_label: str) -> list[dict]:
    """The install namespace goes out like any rendered object (labelled; never pruned)."""
    if any(o.get("kind") == "Namespace" and (o.get("metadata") or {}).get("name") == namespace for o in objects):
        return objects
    key, value = parse_label(owner_label)
    ns = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace, "labels": {key: value}}}
    return [ns, *objects]


def plan(objects: list[dict], discovery: Discovery, namespace: str, field_manager: str,
         stages: StagePlan) -> list[Planned]:
    rules = WebhookRules.from_objects(objects)
    planned: list[Planned] = []
    seen: set[str] = set()
    for obj in objects:
        res = discovery.lookup(obj.get("apiVersion", ""), obj.get("kind", ""))
        if res is None:
            raise PreflightError(f"{obj.get('kind')} {(obj.get('metadata') or {}).get('name')}: the cluster does "
                                 f"not serve {obj.get('apiVersion')} {obj.get('kind')} and no rendered CRD defines it")
        body = prepare(obj, res, namespace)
        ref = ref_of(body)
        if not ref.name:
            raise InputError(f"rendered {ref.kind} has no metadata.name")
        if ref.key in seen:
            raise InputError(f"rendered objects contain {ref} twice")
        seen.add(ref.key)
        stage = stages.stage_of(ref.kind, res.group, res.resource, rules)
        planned.append(Planned(ref, res, body, stage, body_hash(body, field_manager)))
    return planned


def webhook_services(objects: list[dict]) -> list[tuple[str, str, int]]:
    """Services the rendered admission webhooks call."""
    out: list[tuple[str, str, int]] = []
    for obj in objects:
        configs = []
        if obj.get("kind") in WEBHOOK_KINDS:
            configs = [h.get("clientConfig") or {} for h in obj.get("webhooks") or []]
        for cc in configs:
            svc = cc.get("service")
            if svc:
                item = (svc.get("namespace", ""), svc.get("name", ""), int(svc.get("port") or 443))
                if item not in out:
                    out.append(item)
    return out


class LiveMethods:
    """What is live of a plan: a method of the ResourceManager (resource_manager.py), which reads
    through the session's client and lists by its ownership label."""

    cluster: Cluster
    owner_label: str

    def read_live(self, planned: list[Planned]) -> None:
        """Fill each planned object's `live` metadata (None when absent) and `namespace_missing`."""
        cluster = self.cluster
        namespaces = sorted({p.ref.namespace for p in planned if p.ref.namespace})
        served = [p for p in planned if p.res.served]
        # One labelled LIST per resource and namespace finds what we installed in a few round trips
        # (most of a no-op run); what it misses (not ours yet, or gone) is looked up on its own. The
        # namespaces are read in the same round as the lists: a list in a namespace that does not
        # exist is only empty.
        reads = [*(("namespace", ns) for ns in namespaces), *(("list", c) for c in _collections(served))]
        answers = parallel_map(lambda read: get_meta(cluster, object_path("", "v1", "namespaces", None, read[1]))
                               if read[0] == "namespace" else self._list_one(read[1]), reads)
        existing = {read[1] for read, answer in zip(reads, answers) if read[0] == "namespace" and answer}
        found = {path: item for read, answer in zip(reads, answers) if read[0] == "list"
                 for path, item in _by_path(read[1], answer).items()}
        readable = [p for p in served if not (p.ref.namespace and p.ref.namespace not in existing)]
        missing = [p for p in readable if p.path not in found]
        found.update(zip((p.path for p in missing), parallel_map(lambda p: get_meta(cluster, p.path), missing)))
        for p in planned:
            p.live = found.get(p.path)
            p.namespace_missing = bool(p.ref.namespace) and p.ref.namespace not in existing

    def _list_one(self, collection: str) -> list[dict]:
        """The labelled objects' metadata in one collection ([] when it may not be listed: the GETs cover it)."""
        try:
            return self.cluster.request("GET", collection, query={"labelSelector": self.owner_label},
                                        accept=LIST_META).get("items") or []
        except ApiError as exc:
            if exc.status in (403, 404, 405):
                return []
            raise


def _collections(planned: list[Planned]) -> list[str]:
    return sorted({p.path.rsplit("/", 1)[0] for p in planned})


def _by_path(collection: str, items: list[dict]) -> dict[str, dict]:
    """Object path -> live metadata, for the items of one collection."""
    found = {}
    for item in items:
        name = (item.get("metadata") or {}).get("name")
        if name:
            found[f"{collection}/{quote(name, safe='')}"] = item
    return found


def namespace_labels(planned: list[Planned], namespace: str) -> dict:
    """The live labels of `namespace` as read_live found it ({} when it does not exist yet)."""
    for p in planned:
        if p.ref.kind == "Namespace" and not p.ref.group and p.ref.name == namespace:
            return ((p.live or {}).get("metadata") or {}).get("labels") or {}
    return {}
