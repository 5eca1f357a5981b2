"""The record of what an install applied: an ApplySet-style parent ConfigMap in the namespace.

It follows the ApplySet convention (KEP-3659) for the parent: `applyset.kubernetes.io/id`
label, tooling and contains-group-kinds annotations. Members are listed in the data instead of
being labelled, because trainerctl's ownership label already marks them. Each member records
the hash of the body we applied and the resourceVersion we last saw, which together prove that a
re-apply would be a no-op, and a digest of the fields our apply owned afterwards: when someone else
edits or takes one of them, server-side apply moves it out of our set, so `status` sees the drift
without the render (status changes and controllers' own fields leave our set alone).

The ConfigMap lives on the server, so it is read through its view (client/views/inventory.py):
one that does not fit is refused with the line naming the field (views.Unreadable, exit 3), as
no command can tell what it installed without it.
"""

from __future__ import annotations

import base64
import hashlib
import json
from dataclasses import dataclass, field

from trainerctl import __version__
from trainerctl.cluster.client.client import Cluster, object_path
from trainerctl.cluster.client.views import Entry, InventoryRecord
from trainerctl.cluster.manager.delete import Proof, Target
from trainerctl.cluster.manager.delete import delete as delete_one

NAME = "trainerctl-inventory"
ID_LABEL = "applyset.kubernetes.io/id"
_PATH_ARGS = ("", "v1", "configmaps")


def applyset_id(name: str, namespace: str) -> str:
    digest = hashlib.sha256(f"{name}.{namespace}.ConfigMap.".encode()).digest()
    return "applyset-" + base64.urlsafe_b64encode(digest).decode().rstrip("=") + "-v1"


@dataclass
class Inventory:
    namespace: str
    source: dict = field(default_factory=dict)
    entries: dict[str, Entry] = field(default_factory=dict)  # Ref.key -> Entry
    complete: bool = True  # False while an install is in progress (entries are a superset)

    def to_configmap(self) -> dict:
        group_kinds = sorted({_group_kind(k) for k in self.entries})
        return {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {
                "name": NAME,
                "namespace": self.namespace,
                "labels": {ID_LABEL: applyset_id(NAME, self.namespace)},
                "annotations": {
                    "applyset.kubernetes.io/tooling": f"trainerctl/v{__version__}",
                    "applyset.kubernetes.io/contains-group-kinds": ",".join(group_kinds),
                },
            },
            "data": {
                "source": json.dumps(self.source, sort_keys=True),
                "complete": "true" if self.complete else "false",
                "objects": json.dumps({k: e.__dict__ for k, e in sorted(self.entries.items())},
                                      sort_keys=True, indent=0),
            },
        }

    @classmethod
    def from_configmap(cls, cm: dict) -> "Inventory":
        """The inventory a ConfigMap holds; views.Unreadable naming the field when it holds
        something else (it lives on the server, which may answer anything)."""
        record = InventoryRecord.read(cm)
        return cls(record.meta.namespace, record.source, record.entries, record.complete)


def fields_digest(meta: dict | None, field_manager: str) -> str:
    """A digest of the fields `field_manager`'s apply owns on an object ("" when it owns none)."""
    for entry in (meta or {}).get("managedFields") or []:
        if (entry.get("manager") == field_manager and entry.get("operation") == "Apply"
                and not entry.get("subresource")):
            text = json.dumps(entry.get("fieldsV1") or {}, sort_keys=True, separators=(",", ":"))
            return hashlib.sha256(text.encode()).hexdigest()[:16]
    return ""


def _group_kind(key: str) -> str:
    group, kind = key.split("/", 2)[:2]
    return f"{kind}.{group}" if group else kind


def path(namespace: str) -> str:
    return object_path(*_PATH_ARGS, namespace, NAME)


class InventoryMethods:
    """The record's read, write and delete: methods of the ResourceManager (resource_manager.py),
    in the session's namespace and written by its field manager."""

    cluster: Cluster
    namespace: str
    field_manager: str

    def read_inventory(self) -> Inventory | None:
        configmap = self.cluster.get_or_none(path(self.namespace))
        if configmap is None:
            return None
        return Inventory.from_configmap(configmap)

    def write_inventory(self, inv: Inventory, dry_run: bool = False) -> None:
        query = {"fieldManager": self.field_manager, "force": "true"}
        if dry_run:
            query["dryRun"] = "All"
        self.cluster.request("PATCH", path(inv.namespace), body=inv.to_configmap(), query=query,
                             content_type="application/apply-patch+yaml")

    def delete_inventory(self) -> bool:
        """Delete the record (through the one delete: it must be ours, its ApplySet id label says so);
        False when there was none to delete."""
        target = Target(*_PATH_ARGS, True, self.namespace, NAME, "ConfigMap")
        proof = Proof("trainerctl's inventory", label=ID_LABEL, value=applyset_id(NAME, self.namespace),
                      namespace=self.namespace)
        return delete_one(self.cluster, target, proof).deleted
