"""What a Trainer support bundle holds (operations/bundle.py writes it and keeps secrets out).

The layout (docs/support-bundle.md shows a sample):

    trainerctl-support-<namespace>-<UTC time>/
      README.txt             what is here, what is never here, what could not be read
      manifest.json          files, what could not be read, when and by which trainerctl
      versions.json          client (trainerctl, Python), server, Trainer and JobSet
      inventory.json         the recorded source and the inventory as trainerctl wrote it
      status.json            `trainerctl status -o json`
      diagnosis.json         why each controller Deployment / webhook Service is not ready (if so)
      objects/<group>/<Kind>/<namespace or _cluster>/<name>.yaml   every object trainerctl owns
      events/<namespace>.json
      logs/<namespace>/<pod>/<container>[.previous].log            the controllers' logs, tail-limited
      crds.json              Trainer's and JobSet's CRDs: versions served, storage, stored, conditions
      workloads.json         TrainJobs and JobSets by state, runtimes by kind (counts, no specs)
      nodes.json             per node: ready, versions, allocatable, taints
"""

from __future__ import annotations

import platform
import sys
from datetime import datetime, timezone
from typing import Callable

from trainerctl import __version__
from trainerctl.cluster.manager import inventory as inv_mod
from trainerctl.cluster.client.client import ApiError, Cluster, object_path
from trainerctl.cluster.client.discovery import Discovery
from trainerctl.cluster.operations import bundle as b
from trainerctl.cluster.manager import diagnose
from trainerctl.cluster.manager.diagnose import selector_query
from trainerctl.cluster.manager.objects import Ref
from trainerctl.cluster.manager.prune import resolve_entry
from trainerctl.cluster.trainer.floors import installed_jobset

GROUPS = ("trainer.kubeflow.org", "jobset.x-k8s.io")
TRAINJOBS = ("trainer.kubeflow.org", "trainjobs", "TrainJob")
JOBSETS = ("jobset.x-k8s.io", "jobsets", "JobSet")
RUNTIMES = (("trainer.kubeflow.org", "clustertrainingruntimes", "ClusterTrainingRuntime"),
            ("trainer.kubeflow.org", "trainingruntimes", "TrainingRuntime"))
# A workload's state: the first of these conditions that is True, else "Active".
STATE_CONDITIONS = ("Failed", "Complete", "Completed", "Suspended")

README = """trainerctl support bundle
=========================

Made by `trainerctl support-bundle` (trainerctl {version}) at {created}
for namespace {namespace} on {server}.

What is here: see the layout in trainerctl's docs/support-bundle.md#trainerctl-support-bundle. In short: versions, the recorded source and inventory, status and the
diagnosis, every object trainerctl owns, the namespace's events, the controllers' logs (current
and previous, last {tail} lines), Trainer's and JobSet's CRD versions, TrainJob/JobSet/runtime
counts by state, a node summary.

What is never here: a Secret's values (Secrets list key names and sizes only), webhook
caBundles, last-applied annotations, the kubeconfig, any token or client key. Every value of the
Secrets read while collecting, and the client's token, is blanked (as {redacted}) wherever else
it appears.

Could not read ({count}):
{unreadable}
"""


def collect(cluster: Cluster, namespace: str, *, status: Callable[[], dict]) -> b.Bundle:
    """Everything for one bundle, in memory; `status()` is `trainerctl status`'s data."""
    created = datetime.now(timezone.utc)
    bundle = b.Bundle(f"trainerctl-support-{namespace}-{created.strftime('%Y%m%dT%H%M%SZ')}")
    discovery = Discovery(cluster)
    discovery.refresh()
    inventory = _inventory(bundle, cluster, namespace)
    owned = _objects(bundle, cluster, discovery, inventory)
    deployments = [o for o in owned if o.get("kind") == "Deployment"]
    _versions(bundle, cluster, inventory, deployments)
    try:
        bundle.add_json("status.json", status())
    except Exception as exc:  # a bundle is most wanted when things are broken: keep collecting
        bundle.note("status", f"{type(exc).__name__}: {exc}")
    image_origins = (inventory.source.get("images") if inventory else None) or {}
    diagnoses = []
    for dep in deployments:
        meta = dep["metadata"]
        diagnoses.append(diagnose.deployment(cluster, meta["namespace"], meta["name"],
                                             image_origins=image_origins).to_dict())
    bundle.add_json("diagnosis.json", diagnoses)
    b.events(bundle, cluster, namespace)
    for dep in deployments:
        _controller_logs(bundle, cluster, dep)
    _crds(bundle, cluster)
    _workloads(bundle, cluster, discovery)
    b.nodes(bundle, cluster)
    server = cluster.server
    bundle.add_json("manifest.json", {"created": created.isoformat(), "trainerctl": __version__,
                                      "namespace": namespace, "files": sorted(bundle.files) + ["manifest.json"],
                                      "unreadable": bundle.unreadable})
    bundle.add_text("README.txt", README.format(
        version=__version__, created=created.isoformat(), namespace=namespace, server=server,
        tail=b.LOG_TAIL_LINES, redacted=b.REDACTED, count=len(bundle.unreadable),
        unreadable="\n".join(f"- {line}" for line in bundle.unreadable) or "- nothing: every read succeeded"))
    return bundle


def _inventory(bundle: b.Bundle, cluster: Cluster, namespace: str):
    try:
        inventory = inv_mod.read(cluster, namespace)
    except ApiError as exc:
        bundle.note(f"the inventory ConfigMap {namespace}/{inv_mod.NAME}", exc)
        return None
    if inventory is None:
        bundle.note(f"the inventory ConfigMap {namespace}/{inv_mod.NAME}", "not found (not installed by trainerctl?)")
        return None
    bundle.add_json("inventory.json", {"namespace": inventory.namespace, "complete": inventory.complete,
                                       "source": inventory.source,
                                       "objects": {k: e.__dict__ for k, e in sorted(inventory.entries.items())}})
    return inventory


def _objects(bundle: b.Bundle, cluster: Cluster, discovery: Discovery, inventory) -> list[dict]:
    owned = []
    for key, entry in sorted((inventory.entries if inventory else {}).items()):
        ref = Ref.from_key(key)
        res = resolve_entry(discovery, ref, entry)
        what = f"{ref.kind} {ref.namespace + '/' if ref.namespace else ''}{ref.name}"
        if res is None:
            bundle.note(what, "its kind is no longer served")
            continue
        obj = b.add_object(bundle, cluster, object_path(res.group, res.version, res.resource,
                                                        ref.namespace or None, ref.name), what)
        if obj is not None:
            owned.append(obj)
    return owned


def _image_tag(image: str) -> str:
    last = image.rsplit("/", 1)[-1]
    return last.rsplit(":", 1)[1] if ":" in last and "@" not in image else ""


def _versions(bundle: b.Bundle, cluster: Cluster, inventory, deployments: list[dict]) -> None:
    try:
        server = cluster.request("GET", "/version", timeout=15)
    except ApiError as exc:
        bundle.note("the server version", exc)
        server = {}
    images = {f"{d['metadata']['namespace']}/{d['metadata']['name']}": [
        c.get("image") for c in (d.get("spec") or {}).get("template", {}).get("spec", {}).get("containers") or []]
        for d in deployments}
    jobset = installed_jobset(cluster)
    source = inventory.source if inventory else {}
    bundle.add_json("versions.json", {
        "client": {"trainerctl": __version__, "python": sys.version.split()[0], "platform": platform.platform()},
        "server": {k: server.get(k) for k in ("gitVersion", "platform", "goVersion") if server.get(k)},
        "trainer": {"recorded": source.get("trainer_version") or "", "releases": source.get("releases") or [],
                    "controllerImages": images},
        "jobset": {"running": jobset[0], "from": jobset[1]} if jobset else {"running": ""},
    })


def _controller_logs(bundle: b.Bundle, cluster: Cluster, dep: dict) -> None:
    meta = dep["metadata"]
    selector = selector_query((dep.get("spec") or {}).get("selector") or {})
    try:
        pods = cluster.request("GET", object_path("", "v1", "pods", meta["namespace"]),
                               query={"labelSelector": selector}).get("items") or []
    except ApiError as exc:
        bundle.note(f"pods of Deployment {meta['namespace']}/{meta['name']}", exc)
        return
    for pod in pods:
        b.pod_logs(bundle, cluster, pod)


def _crds(bundle: b.Bundle, cluster: Cluster) -> None:
    try:
        items = cluster.request("GET", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions").get("items") or []
    except ApiError as exc:
        bundle.note("CustomResourceDefinitions", exc)
        return
    rows = []
    for crd in sorted(items, key=lambda c: c["metadata"]["name"]):
        spec, status = crd.get("spec") or {}, crd.get("status") or {}
        if spec.get("group") not in GROUPS:
            continue
        rows.append({"name": crd["metadata"]["name"], "group": spec.get("group"),
                     "versions": [{"name": v.get("name"), "served": v.get("served"), "storage": v.get("storage")}
                                  for v in spec.get("versions") or []],
                     "storedVersions": status.get("storedVersions") or [],
                     "conditions": {c.get("type"): c.get("status") for c in status.get("conditions") or []},
                     "labels": (crd["metadata"].get("labels") or {})})
    bundle.add_json("crds.json", rows)


def state_of(obj: dict) -> str:
    conds = {c.get("type"): c.get("status") for c in (obj.get("status") or {}).get("conditions") or []}
    return next((t for t in STATE_CONDITIONS if conds.get(t) == "True"), "Active")


def _workloads(bundle: b.Bundle, cluster: Cluster, discovery: Discovery) -> None:
    out: dict[str, dict] = {}
    for group, resource, kind in (TRAINJOBS, JOBSETS, *RUNTIMES):
        res = discovery.preferred(group, kind)
        if res is None:
            out[kind] = {"served": False}
            continue
        try:
            # Metadata and status only would need a table; a full list is read but only counted.
            items = cluster.request("GET", object_path(res.group, res.version, res.resource, None)).get("items") or []
        except ApiError as exc:
            bundle.note(f"{resource}.{group} (all namespaces)", exc)
            continue
        counts: dict[str, int] = {}
        for item in items:
            state = state_of(item) if kind in ("TrainJob", "JobSet") else "total"
            counts[state] = counts.get(state, 0) + 1
        out[kind] = {"served": True, "count": len(items), "byState": counts,
                     "namespaces": len({(i.get("metadata") or {}).get("namespace") for i in items} - {None})}
    bundle.add_json("workloads.json", out)
