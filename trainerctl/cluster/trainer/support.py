"""What a Trainer support bundle holds (operations/bundle_archive.py writes it and keeps secrets out).

The layout (docs/support-bundle.md shows a sample):

    trainerctl-support-<namespace>-<UTC time>/
      README.txt             what is here, what is never here, what could not be read
      manifest.json          files, what could not be read, when and by which trainerctl
      versions.json          client (trainerctl, Python), server, Trainer and JobSet
      inventory.json         the recorded source and the inventory as trainerctl wrote it
      status.json            `trainerctl status -o json`
      diagnosis.json         why each controller Deployment / webhook Service is not ready (if so), with
                             what the controller's log names (trainer/controller_log.py)
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
from trainerctl.cluster.manager import inventory_configmap
from trainerctl.cluster.client.client import ApiError, Cluster, object_path
from trainerctl.cluster.client.discovery import Discovery
from trainerctl.cluster.client.views import CRD, Deployment, Pod, ServerVersion, Unreadable
from trainerctl.cluster.operations import bundle_archive
from trainerctl.cluster.operations import bundle_parts
from trainerctl.cluster.manager import diagnose
from trainerctl.cluster.manager.diagnose import selector_query
from trainerctl.cluster.manager.objects import Ref
from trainerctl.cluster.manager.prune import resolve_entry
from trainerctl.cluster.manager.resource_manager import ResourceManager
from trainerctl.cluster.manager.session import Session
from trainerctl.cluster.trainer import controller_log
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
Secrets read while collecting, and the client's credentials, is blanked (as {redacted}) wherever
else it appears, before anything is written as JSON or YAML.

Could not read ({count}):
{unreadable}
"""


def collect(session: Session, *, status: Callable[[Cluster], dict]) -> bundle_archive.Bundle:
    """Everything for one bundle, in memory; `status(cluster)` is `trainerctl status`'s data.

    Each part is collected under its own deadline (operations/bundle_parts.py); one that cannot be
    read in time, or whose objects do not fit their views, is listed as could-not-read and the
    rest is still collected."""
    cluster, namespace = session.cluster, session.namespace
    created = datetime.now(timezone.utc)
    bundle = bundle_archive.Bundle(f"trainerctl-support-{bundle_archive.member_part(namespace)}-{created.strftime('%Y%m%dT%H%M%SZ')}")
    # The first contact is no part: a server that cannot be reached, or does not speak the API,
    # ends the command (exit 3 or 1) rather than writing a bundle of "could not read" lines.
    discovery = Discovery(cluster)
    discovery.refresh()
    inventory = bundle_parts.part(bundle, cluster, f"the inventory ConfigMap {namespace}/{inventory_configmap.NAME}",
                           lambda c: _inventory(bundle, session.resources.on(c)))
    deployments = _objects(bundle, cluster, discovery, inventory)
    bundle_parts.part(bundle, cluster, "versions", lambda c: _versions(bundle, c, inventory, deployments))
    try:
        bundle.add_json("status.json", bundle_parts.part(bundle, cluster, "status", status, default={}))
    except Exception as exc:  # a bundle is most wanted when things are broken: keep collecting
        bundle.note("status", f"{type(exc).__name__}: {exc}")
    image_origins = (inventory.source.get("images") if inventory else None) or {}
    version = inventory.source.get("trainer_version") if inventory else ""
    diagnoses = []
    for dep in deployments:
        found = bundle_parts.part(bundle, cluster, f"the diagnosis of {dep.display}",
                           lambda c: diagnose.deployment(c, dep.meta.namespace, dep.meta.name,
                                                         image_origins=image_origins, explain_log=controller_log.explainer(
                                                             c, version if isinstance(version, str) else "")))
        if found is not None:
            diagnoses.append(found.to_dict())
    bundle.add_json("diagnosis.json", diagnoses)
    bundle_parts.part(bundle, cluster, f"events in namespace {namespace}", lambda c: bundle_parts.events(bundle, c, namespace))
    for dep in deployments:
        pods = bundle_parts.part(bundle, cluster, f"pods of {dep.display}", lambda c: bundle_parts.listed(
            bundle, c, object_path("", "v1", "pods", dep.meta.namespace), Pod.read, f"pods of {dep.display}",
            {"labelSelector": selector_query(dep)}))
        for pod in pods or []:
            bundle_parts.pod_logs(bundle, cluster, pod)
    bundle_parts.part(bundle, cluster, "CustomResourceDefinitions", lambda c: _crds(bundle, c))
    bundle_parts.part(bundle, cluster, "TrainJob, JobSet and runtime counts", lambda c: _workloads(bundle, c, discovery))
    bundle_parts.part(bundle, cluster, "nodes", lambda c: bundle_parts.nodes(bundle, c))
    server = cluster.server
    bundle.add_json("manifest.json", {"created": created.isoformat(), "trainerctl": __version__,
                                      "namespace": namespace, "files": sorted(bundle.files) + ["manifest.json"],
                                      "unreadable": bundle.unreadable})
    bundle.add_text("README.txt", README.format(
        version=__version__, created=created.isoformat(), namespace=namespace, server=server,
        tail=bundle_archive.LOG_TAIL_LINES, redacted=bundle_archive.REDACTED, count=len(bundle.unreadable),
        unreadable="\n".join(f"- {line}" for line in bundle.unreadable) or "- nothing: every read succeeded"))
    return bundle


def _inventory(bundle: bundle_archive.Bundle, resources: ResourceManager):
    inventory = resources.read_inventory()
    if inventory is None:
        bundle.note(f"the inventory ConfigMap {resources.namespace}/{inventory_configmap.NAME}", "not found (not installed by trainerctl?)")
        return None
    bundle.add_json("inventory.json", {"namespace": inventory.namespace, "complete": inventory.complete,
                                       "source": inventory.source,
                                       "objects": {k: e.__dict__ for k, e in sorted(inventory.entries.items())}})
    return inventory


def _objects(bundle: bundle_archive.Bundle, cluster: Cluster, discovery: Discovery, inventory) -> list[Deployment]:
    """Every object the inventory lists, into objects/; the controller Deployments among them."""
    deployments = []
    for key, entry in sorted((inventory.entries if inventory else {}).items()):
        ref = Ref.from_key(key)
        res = resolve_entry(discovery, ref, entry)
        what = f"{ref.kind} {ref.namespace + '/' if ref.namespace else ''}{ref.name}"
        if res is None:
            bundle.note(what, "its kind is no longer served")
            continue
        path = object_path(res.group, res.version, res.resource, ref.namespace or None, ref.name)
        member = bundle_archive.object_file(ref.group, ref.kind, ref.namespace, ref.name)
        obj = bundle_parts.part(bundle, cluster, what, lambda c: bundle_archive.add_object(bundle, c, path, what, member))
        if obj is not None and (ref.group, ref.kind) == ("apps", "Deployment"):
            try:
                deployments.append(Deployment.read(obj))
            except Unreadable as exc:
                bundle.note(what, exc)
    return deployments


def _versions(bundle: bundle_archive.Bundle, cluster: Cluster, inventory, deployments: list[Deployment]) -> None:
    try:
        version = ServerVersion.read(cluster.request("GET", "/version", timeout=15))
        server = {"gitVersion": version.git_version, "platform": version.platform, "goVersion": version.go_version}
    except (ApiError, Unreadable) as exc:
        bundle.note("the server version", exc)
        server = {}
    images = {dep.meta.display: [c.image for c in dep.containers] for dep in deployments}
    jobset = installed_jobset(cluster)
    source = inventory.source if inventory else {}
    bundle.add_json("versions.json", {
        "client": {"trainerctl": __version__, "python": sys.version.split()[0], "platform": platform.platform()},
        "server": {k: v for k, v in server.items() if v},
        "trainer": {"recorded": source.get("trainer_version") or "", "releases": source.get("releases") or [],
                    "controllerImages": images},
        "jobset": {"running": jobset[0], "from": jobset[1]} if jobset else {"running": ""},
    })


def _crds(bundle: bundle_archive.Bundle, cluster: Cluster) -> None:
    found = bundle_parts.listed(bundle, cluster, "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", CRD.read,
                           "CustomResourceDefinitions")
    if found is None:
        return
    rows = [{"name": crd.meta.name, "group": crd.group,
             "versions": [{"name": v.name, "served": v.served, "storage": v.storage} for v in crd.versions],
             "storedVersions": list(crd.stored_versions),
             "conditions": {c.type: c.status for c in crd.conditions}, "labels": crd.meta.labels}
            for crd in sorted(found, key=lambda c: c.meta.name) if crd.group in GROUPS]
    bundle.add_json("crds.json", rows)


def state_of(obj: dict) -> str:
    """A TrainJob's or JobSet's state from its conditions (Active when none of STATE_CONDITIONS is True)."""
    conds = (obj.get("status") or {}).get("conditions") or []
    true = {c.get("type") for c in conds if isinstance(c, dict) and c.get("status") == "True"}
    return next((t for t in STATE_CONDITIONS if t in true), "Active")


def _workloads(bundle: bundle_archive.Bundle, cluster: Cluster, discovery: Discovery) -> None:
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
