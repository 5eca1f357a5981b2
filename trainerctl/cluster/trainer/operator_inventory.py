"""The Go operator's install, read as if trainerctl's previous install had made it.

On a cluster the operator manages there is no trainerctl inventory, so a first install would
prune nothing: runtimes the operator installed and we no longer render would stay forever. The
operator's own record is its field manager: labelled objects whose managedFields name
`trainer-module-controller` (or `platform.opendatahub.io`, its CRD manager), cluster-scoped or in
the namespace it installs into, are what it applied (provably_operators); nothing else is pruned.
They seed the first install's prune set; what the render still has is taken over (manager/fields.py),
the rest is pruned like any stale object (never CRDs, Namespaces, Leases, or TrainJobs, and never a
runtime an unfinished TrainJob references).
"""

from __future__ import annotations

from trainerctl.cluster.manager.inventory_configmap import Entry, Inventory
from trainerctl.cluster.manager.listing import Found, candidate_types
from trainerctl.cluster.manager.resource_manager import ResourceManager
from trainerctl.cluster.manager.stages import WebhookRules
from trainerctl.cluster.trainer.go_operator import FIELD_MANAGERS
from trainerctl.cluster.trainer.policy import KEEP_ON_UNINSTALL, STAGES


def managed_by_operator(meta: dict | None) -> bool:
    return any(e.get("manager") in FIELD_MANAGERS for e in (meta or {}).get("managedFields") or [])


def labelled_objects(resources: ResourceManager) -> list[Found]:
    """Every object with the session's ownership label, in its namespace and cluster-wide (one list
    per type)."""
    return resources.find_labelled(candidate_types(resources.discovery, None))


def provably_operators(found: Found, namespace: str) -> bool:
    """What the operator provably applied: our label (the search found it by it) and the
    operator's field manager on the live object, cluster-scoped or in `namespace`, the one the
    operator installs into. A labelled object it never wrote, or in another namespace, is not its."""
    return found.ref.namespace in ("", namespace) and managed_by_operator(found.meta)


def seed(found: list[Found], namespace: str, objects: list[dict]) -> Inventory | None:
    """The prune record an operator install amounts to; None when it made nothing here."""
    rules = WebhookRules.from_objects(objects)
    entries: dict[str, Entry] = {}
    for f in found:
        if (f.res.group, f.res.kind) in KEEP_ON_UNINSTALL or not provably_operators(f, namespace):
            continue
        stage = STAGES.stage_of(f.ref.kind, f.res.group, f.res.resource, rules)
        entries[f.ref.key] = Entry(f.res.api_version, f.res.resource, f.res.namespaced, stage)
    if not entries:
        return None
    return Inventory(namespace, {"installed_by": "trainer-operator"}, entries, complete=True)
