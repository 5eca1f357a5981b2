"""`status`: what is installed (from the inventory), whether each object is there and as rendered."""

from __future__ import annotations

from trainerctl.cluster import inventory as inv_mod
from trainerctl.cluster.apply import get_meta
from trainerctl.cluster.client import Cluster, object_path
from trainerctl.cluster.discovery import Discovery
from trainerctl.cluster.objects import DEFAULT_OWNER_LABEL, Ref
from trainerctl.cluster.pool import parallel_map
from trainerctl.cluster.prune import resolve_entry
from trainerctl.cluster.wait import deployment_is_available
from trainerctl.errors import TrainerctlError


def status(*, cluster: Cluster, namespace: str, objects: list[dict] | None = None,
           owner_label: str = DEFAULT_OWNER_LABEL, field_manager: str = "trainerctl") -> dict:
    """Objects from the render when given (drift checked by server-side dry-run), else the inventory."""
    discovery = Discovery(cluster)
    discovery.refresh()
    inventory = inv_mod.read(cluster, namespace)
    out: dict = {"namespace": namespace, "installed": inventory is not None,
                 "source": inventory.source if inventory else {}, "objects": [], "deployments": []}
    out["trainerVersion"] = out["source"].get("trainer_version", "")
    states: dict[str, str] = {}
    if objects is not None:
        from trainerctl.cluster.diff import diff

        result = diff(objects, cluster=cluster, namespace=namespace, owner_label=owner_label,
                      field_manager=field_manager)
        names = {"unchanged": "present", "changed": "drifted", "create": "missing", "prune": "extra",
                 "error": "error"}
        for d in result.diffs:
            states[d.ref.key] = names[d.state]
    elif inventory is not None:
        def present(item) -> str:
            key, entry = item
            ref = Ref.from_key(key)
            res = resolve_entry(discovery, ref, entry)
            if res is None:
                return "missing"
            meta = get_meta(cluster, object_path(res.group, res.version, res.resource, ref.namespace or None, ref.name))
            return "present" if meta else "missing"

        items = sorted(inventory.entries.items())
        states = dict(zip([k for k, _ in items], parallel_map(present, items)))
    for key in sorted(states):
        ref = Ref.from_key(key)
        out["objects"].append({"kind": ref.kind, "group": ref.group, "namespace": ref.namespace, "name": ref.name,
                               "state": states[key]})
        if ref.kind == "Deployment" and ref.group == "apps" and states[key] != "missing":
            dep = cluster.request("GET", object_path("apps", "v1", "deployments", ref.namespace, ref.name))
            try:
                ok, why = deployment_is_available(dep)
            except TrainerctlError as exc:
                ok, why = False, str(exc)
            out["deployments"].append({"namespace": ref.namespace, "name": ref.name, "available": ok,
                                       **({"reason": why} if why else {})})
    counts: dict[str, int] = {}
    for o in out["objects"]:
        counts[o["state"]] = counts.get(o["state"], 0) + 1
    out["summary"] = counts
    return out


def status_text(st: dict) -> str:
    lines = []
    if not st["installed"]:
        lines.append(f"Trainer is not installed by trainerctl in namespace {st['namespace']} (no inventory)")
    else:
        src = st["source"]
        lines.append(f"source: {src.get('url', '?')} ref {src.get('ref', '?')} commit {src.get('commit', '?')}")
        lines.append(f"trainer version: {st.get('trainerVersion') or 'unknown'}")
    for o in st["objects"]:
        if o["state"] != "present":
            name = f"{o['namespace']}/{o['name']}" if o["namespace"] else o["name"]
            lines.append(f"{o['kind']} {name}: {o['state']}")
    for d in st["deployments"]:
        lines.append(f"Deployment {d['namespace']}/{d['name']}: {'available' if d['available'] else 'not available'}"
                     + (f" ({d['reason']})" if d.get("reason") else ""))
    summary = ", ".join(f"{n} {s}" for s, n in sorted(st["summary"].items())) or "no objects"
    lines.append(f"objects: {summary}")
    return "\n".join(lines) + "\n"
