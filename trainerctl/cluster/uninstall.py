"""`uninstall`: delete what carries our ownership label, runtimes first, waiting for each step.

CRDs stay unless asked (deleting a CRD deletes every custom resource of it, i.e. users'
TrainJobs); the namespace always stays. Without an inventory (a Go-operator install, or a second
uninstall) every listable type is searched by label, so running it twice is a harmless no-op.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable

from trainerctl.cluster import inventory as inv_mod
from trainerctl.cluster.apply import delete_and_wait, strip_legacy_finalizer
from trainerctl.cluster.client import ApiError, Cluster, object_path
from trainerctl.cluster.discovery import Discovery, Resource
from trainerctl.cluster.objects import DEFAULT_OWNER_LABEL, LEGACY_FINALIZER, Ref, is_exempt, label_selector
from trainerctl.cluster.pool import parallel_map
from trainerctl.cluster.report import ObjectResult, Report, StageResult
from trainerctl.cluster.stages import STAGE_INDEX, STAGES, WebhookRules, stage_of
from trainerctl import ui
from trainerctl.errors import InputError

# Never deleted by uninstall: the namespace (it may hold other things), CRDs (unless
# --delete-crds), the controller's Leases, Events, and users' TrainJobs.
KEEP = frozenset({("", "Namespace"), ("apiextensions.k8s.io", "CustomResourceDefinition"),
                  ("coordination.k8s.io", "Lease"), ("", "Event"), ("events.k8s.io", "Event"),
                  ("trainer.kubeflow.org", "TrainJob")})
CRD = ("apiextensions.k8s.io", "CustomResourceDefinition")
PARTIAL_LIST = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json"


@dataclass
class UninstallOptions:
    delete_crds: bool = False
    yes: bool = False
    dry_run: bool = False
    timeout: float = 300.0


@dataclass
class Found:
    ref: Ref
    res: Resource
    meta: dict

    @property
    def path(self) -> str:
        return object_path(self.res.group, self.res.version, self.res.resource, self.ref.namespace or None,
                           self.ref.name)


def _list(cluster: Cluster, res: Resource, namespace: str | None, selector: str) -> list[dict]:
    path = object_path(res.group, res.version, res.resource, namespace if res.namespaced else None)
    items, token = [], None
    while True:
        query = {"labelSelector": selector, "limit": "500", "continue": token}
        try:
            page = cluster.request("GET", path, query=query, accept=PARTIAL_LIST)
        except ApiError as exc:
            if exc.status in (404, 405):
                return items  # the kind went away meanwhile, or does not list
            raise
        items.extend(page.get("items") or [])
        token = (page.get("metadata") or {}).get("continue")
        if not token:
            return items


def find_labelled(cluster: Cluster, discovery: Discovery, namespace: str, owner_label: str,
                  types: list[Resource]) -> list[Found]:
    def scan(res: Resource) -> list[Found]:
        out = []
        for item in _list(cluster, res, namespace, owner_label):
            md = item.get("metadata") or {}
            out.append(Found(Ref(res.group, res.kind, md.get("namespace", "") if res.namespaced else "",
                                 md["name"]), res, md))
        return out

    return [f for chunk in parallel_map(scan, types) for f in chunk]


def candidate_types(discovery: Discovery, inventory) -> list[Resource]:
    if inventory is not None:
        seen, out = set(), []
        for key, entry in inventory.entries.items():
            ref = Ref.from_key(key)
            res = discovery.lookup(entry.api_version, ref.kind) or discovery.preferred(ref.group, ref.kind)
            if res and (res.group, res.kind) not in seen:
                seen.add((res.group, res.kind))
                out.append(res)
        return out
    # No record: search every type we could delete (one preferred version per kind).
    seen, out = set(), []
    for res in discovery.all_resources():
        if (res.group, res.kind) in seen or not {"list", "delete"} <= set(res.verbs):
            continue
        seen.add((res.group, res.kind))
        out.append(res)
    return out


def _custom_resources(cluster: Cluster, discovery: Discovery, crd: Found) -> tuple[str, Resource | None]:
    """The kind a CRD defines and its served resource (None when discovery does not list it)."""
    spec = cluster.request("GET", crd.path).get("spec") or {}
    kind = (spec.get("names") or {}).get("kind", "")
    return kind or crd.ref.name, discovery.preferred(spec.get("group", ""), kind)


def count_custom_resources(cluster: Cluster, discovery: Discovery, crds: list[Found]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for crd in crds:
        kind, res = _custom_resources(cluster, discovery, crd)
        if res is not None:
            counts[kind] = len(_list(cluster, res, None, ""))
    return counts


def release_legacy_finalizers(cluster: Cluster, discovery: Discovery, crds: list[Found]) -> int:
    """Strip Trainer v2.0-v2.2's resource-in-use finalizer from every object of the CRDs about to go.

    Those controllers put it on runtimes that TrainJobs use, and only they remove it: once the
    controller is gone (v2.3 never removes it; uninstall has just deleted it) the CRD's deletion
    would wait forever for such a runtime, ours or a user's. Run after the webhooks are deleted, so
    the update does not depend on a controller that is shutting down.
    """
    released = 0
    for crd in crds:
        _, res = _custom_resources(cluster, discovery, crd)
        if res is None:
            continue
        for item in _list(cluster, res, None, ""):
            md = item.get("metadata") or {}
            if LEGACY_FINALIZER not in (md.get("finalizers") or []):
                continue
            path = object_path(res.group, res.version, res.resource, md.get("namespace") if res.namespaced else None,
                               md["name"])
            try:
                released += bool(strip_legacy_finalizer(cluster, path, md))
            except ApiError as exc:
                if exc.status not in (404, 409, 422):  # gone, or changed meanwhile: the CRD wait says
                    raise
    return released


def uninstall(*, cluster: Cluster, namespace: str, owner_label: str = DEFAULT_OWNER_LABEL,
              options: UninstallOptions | None = None, confirm: Callable[[str], bool] | None = None,
              progress=None) -> Report:
    from trainerctl.ui import Progress

    options = options or UninstallOptions()
    progress = progress or Progress(0, enabled=False)
    report = Report("uninstall", dry_run=options.dry_run, namespace=namespace)
    start = time.monotonic()
    discovery = Discovery(cluster)
    discovery.refresh()
    inventory = inv_mod.read(cluster, namespace)
    types = [r for r in candidate_types(discovery, inventory) if (r.group, r.kind) not in KEEP]
    owner_label = label_selector(owner_label)
    found = [f for f in find_labelled(cluster, discovery, namespace, owner_label, types) if not is_exempt(f.meta)]
    crds: list[Found] = []
    if options.delete_crds:
        crd_res = discovery.preferred(*CRD)
        crds = [f for f in find_labelled(cluster, discovery, namespace, owner_label, [crd_res]) if not is_exempt(f.meta)]
        if crds:
            counts = count_custom_resources(cluster, discovery, crds)
            what = ", ".join(f"{n} {k}" + ("s" if n > 1 else "") for k, n in counts.items() if n) or "no custom resources"
            question = (f"deleting {len(crds)} CRD(s) ({', '.join(c.ref.name for c in crds)}) also deletes "
                        f"{what}")
            if options.yes or options.dry_run:
                # Said even when not asked: a CI log must show what the CRDs took with them.
                ui.info(f"uninstall: {question}")
            else:
                if confirm is None:
                    raise InputError(f"{question}; refusing without --yes (stdin is not a terminal)")
                if not confirm(question + "; continue?"):
                    raise InputError("aborted: CRDs not deleted (nothing was removed)")
    report.source = inventory.source if inventory else {}

    # Stage of each object: from the inventory, else the same policy install uses, with the
    # webhooks we are about to delete deciding what they admit.
    webhook_objects = [cluster.request("GET", f.path) for f in found
                       if f.ref.kind in ("ValidatingWebhookConfiguration", "MutatingWebhookConfiguration")]
    rules = WebhookRules.from_objects(webhook_objects)

    def stage(f: Found) -> str:
        entry = inventory.entries.get(f.ref.key) if inventory else None
        return entry.stage if entry else stage_of(f.ref.kind, f.res.group, f.res.resource, rules)

    deadline = time.monotonic() + options.timeout
    groups: dict[str, list[Found]] = {}
    for f in found:
        groups.setdefault(stage(f), []).append(f)
    if crds:
        groups.setdefault("crds", []).extend(crds)
    progress.total = sum(len(v) for v in groups.values())
    # Runtimes (admitted) first, then everything else in reverse apply order; CRDs go last.
    order = sorted(groups, key=lambda s: (s == "crds", -STAGE_INDEX.get(s, len(STAGES))))
    for name in order:
        t = time.monotonic()
        items = sorted(groups[name], key=lambda f: f.ref)
        if name == "crds" and not options.dry_run:
            released = release_legacy_finalizers(cluster, discovery, items)
            if released:
                ui.info(f"uninstall: removed the legacy finalizer {LEGACY_FINALIZER} from {released} object(s), "
                        "which no running controller would remove")
        progress.stage(f"delete {name}", len(items))

        def one(f: Found, stage_name: str = name) -> ObjectResult:
            r = ObjectResult(f.ref.kind, f.ref.name, f.ref.namespace, f.ref.group, stage_name, "deleted")
            try:
                if not delete_and_wait(cluster, f.path, deadline, dry_run=options.dry_run):
                    r.action, r.message = "unchanged", "already gone"
            except ApiError as exc:
                r.action, r.message = "failed", str(exc)
            progress.object_done(r.display, r.action, r.message)
            return r

        report.objects.extend(parallel_map(one, items))
        report.stages.append(StageResult(name, time.monotonic() - t, len(items)))
    if not options.dry_run and not report.failed:
        inv_mod.delete(cluster, namespace)
    progress.close()
    report.seconds = time.monotonic() - start
    return report
