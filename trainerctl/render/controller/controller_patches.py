"""Patches: pure functions from options and the rendered Deployment to kustomize patches and the PDB."""

from __future__ import annotations

import copy
from typing import Any

import yaml

from trainerctl.errors import InputError
from trainerctl.render.controller.controller_options import DEFAULT_CONTAINER, DEFAULT_DEPLOYMENT, HOSTNAME_TOPOLOGY_KEY, ManagerOptions

def _pointer(*parts: str | int) -> str:
    return "/" + "/".join(str(p).replace("~", "~0").replace("/", "~1") for p in parts)


def _quantities(resources: dict) -> dict:
    # The API server normalises numbers to strings anyway; strings keep the YAML stable.
    out = copy.deepcopy(resources)
    for section in ("limits", "requests"):
        if isinstance(out.get(section), dict):
            out[section] = {k: str(v) for k, v in out[section].items()}
    return out


def selector_labels(deployment: dict) -> dict[str, str]:
    labels = (((deployment.get("spec") or {}).get("selector") or {}).get("matchLabels")) or {}
    if not labels:
        name = deployment.get("metadata", {}).get("name")
        raise InputError(f"Deployment {name}: spec.selector.matchLabels is empty; cannot scope the "
                         "PodDisruptionBudget or anti-affinity to the controller pods")
    return dict(labels)


def ha_anti_affinity(deployment: dict) -> dict:
    """Soft: with fewer nodes than replicas the pods still schedule (on the same node)."""
    return {
        "preferredDuringSchedulingIgnoredDuringExecution": [{
            "weight": 100,
            "podAffinityTerm": {
                "labelSelector": {"matchLabels": selector_labels(deployment)},
                "topologyKey": HOSTNAME_TOPOLOGY_KEY,
            },
        }],
    }


def deployment_ops(options: ManagerOptions, deployment: dict, container: str = DEFAULT_CONTAINER) -> list[dict]:
    """JSON6902 operations for the controller Deployment; `add` replaces an existing member,
    so an option's value is the field's whole value, as with Helm values."""
    ops: list[dict] = []
    pod = ("spec", "template", "spec")
    if options.replicas is not None:
        ops.append({"op": "add", "path": _pointer("spec", "replicas"), "value": options.replicas})
    affinity = copy.deepcopy(options.affinity) if options.affinity is not None else None
    if options.ha_anti_affinity:
        affinity = dict(affinity or {})
        affinity["podAntiAffinity"] = ha_anti_affinity(deployment)
    if affinity is not None:
        ops.append({"op": "add", "path": _pointer(*pod, "affinity"), "value": affinity})
    if options.node_selector is not None:
        ops.append({"op": "add", "path": _pointer(*pod, "nodeSelector"), "value": dict(options.node_selector)})
    if options.priority_class_name is not None:
        ops.append({"op": "add", "path": _pointer(*pod, "priorityClassName"), "value": options.priority_class_name})
    if options.tolerations is not None:
        ops.append({"op": "add", "path": _pointer(*pod, "tolerations"), "value": copy.deepcopy(options.tolerations)})
    if options.topology_spread_constraints is not None:
        constraints = []
        for item in options.topology_spread_constraints:
            item = copy.deepcopy(item)
            # Without a selector a constraint counts no pods at all; the controller's own
            # selector is what users mean.
            item.setdefault("labelSelector", {"matchLabels": selector_labels(deployment)})
            constraints.append(item)
        ops.append({"op": "add", "path": _pointer(*pod, "topologySpreadConstraints"), "value": constraints})
    if options.resources is not None:
        containers = (((deployment.get("spec") or {}).get("template") or {}).get("spec") or {}).get("containers") or []
        index = next((i for i, c in enumerate(containers) if c.get("name") == container), None)
        if index is None:
            name = deployment.get("metadata", {}).get("name")
            raise InputError(f"manager.resources: Deployment {name} has no container named {container!r}")
        ops.append({"op": "add", "path": _pointer(*pod, "containers", index, "resources"),
                    "value": _quantities(options.resources)})
    return ops


def pdb_resource(options: ManagerOptions, deployment: dict) -> dict | None:
    if not options.pdb.enabled:
        return None
    meta = deployment.get("metadata") or {}
    spec: dict[str, Any] = {}
    if options.pdb.min_available is not None:
        spec["minAvailable"] = options.pdb.min_available
    else:
        spec["maxUnavailable"] = options.pdb.max_unavailable
    spec["selector"] = {"matchLabels": selector_labels(deployment)}
    pdb_meta: dict[str, Any] = {}
    if meta.get("labels"):
        pdb_meta["labels"] = dict(meta["labels"])
    pdb_meta["name"] = meta["name"]
    if meta.get("namespace"):
        pdb_meta["namespace"] = meta["namespace"]
    return {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": pdb_meta, "spec": spec}


def manager_overlay(options: ManagerOptions, deployment: dict, *,
                    container: str = DEFAULT_CONTAINER) -> tuple[list[dict], list[dict]]:
    """Kustomize `patches:` entries and extra `resources` (as objects) for the options.

    Both are empty when no option is set. The patch targets the Deployment by kind and name.
    """
    if options.empty:
        return [], []
    ops = deployment_ops(options, deployment, container)
    patches = []
    if ops:
        patches.append({
            "target": {"group": "apps", "version": "v1", "kind": "Deployment",
                       "name": deployment["metadata"]["name"]},
            "patch": yaml.safe_dump(ops, sort_keys=False, default_flow_style=False),
        })
    pdb = pdb_resource(options, deployment)
    return patches, [pdb] if pdb else []


def find_deployment(objects: list[dict], name: str = DEFAULT_DEPLOYMENT) -> int:
    for i, obj in enumerate(objects):
        if obj.get("kind") == "Deployment" and obj.get("metadata", {}).get("name") == name:
            return i
    raise InputError(f"manager options: the render has no Deployment named {name!r} to apply them to")


def apply_manager_options(objects: list[dict], options: ManagerOptions, *,
                          deployment_name: str = DEFAULT_DEPLOYMENT,
                          container: str = DEFAULT_CONTAINER) -> list[dict]:
    """The same patches, applied to rendered objects; the PDB goes right after the Deployment
    (kustomize's legacy order also puts PodDisruptionBudget right after workloads)."""
    if options.empty:
        return objects
    import jsonpatch

    index = find_deployment(objects, deployment_name)
    deployment = objects[index]
    patched = jsonpatch.apply_patch(deployment, deployment_ops(options, deployment, container))
    out = list(objects)
    out[index] = patched
    pdb = pdb_resource(options, deployment)
    if pdb is not None:
        out.insert(index + 1, pdb)
    return out
