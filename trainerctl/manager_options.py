"""Production options for the Trainer controller Deployment (`manager:`), and their patches.

Options come from a `manager:` block in trainerctl.yaml, from `--set manager.KEY=VALUE` flags and
from the `--ha` preset, in that order of increasing precedence (the preset is the base layer).
They are validated here, once, so the render only sees well-formed values; then `manager_overlay`
turns them into JSON6902 patches for the controller Deployment plus extra resources (the PDB),
and `apply_manager_options` applies the same patches to already rendered objects.

Everything is off by default, and with nothing set no patch and no resource is produced, so the
render stays byte-identical to a render without this feature.
"""

from __future__ import annotations

import copy
import math
import re
from dataclasses import dataclass, field
from typing import Any, Iterable

import yaml

from trainerctl.errors import InputError
from trainerctl.safe_text import field_name

DEFAULT_DEPLOYMENT = "kubeflow-trainer-controller-manager"
DEFAULT_CONTAINER = "manager"
HOSTNAME_TOPOLOGY_KEY = "kubernetes.io/hostname"

_TOP_KEYS = {
    "ha", "replicas", "podDisruptionBudget", "topologySpreadConstraints", "priorityClassName",
    "affinity", "nodeSelector", "tolerations", "resources",
}
_PDB_KEYS = {"enabled", "minAvailable", "maxUnavailable"}
_TSC_KEYS = {"maxSkew", "topologyKey", "whenUnsatisfiable", "labelSelector", "matchLabelKeys",
             "minDomains", "nodeAffinityPolicy", "nodeTaintsPolicy"}
_TOLERATION_KEYS = {"key", "operator", "value", "effect", "tolerationSeconds"}
_RESOURCES_KEYS = {"limits", "requests", "claims"}
INT32_MAX = 2**31 - 1

# The shape of pod `affinity` (core/v1 Affinity), as data: a dict is a mapping with those keys,
# a one-item list a list of that shape; str/int/dict-of-str are leaves.
_LABEL_SELECTOR = {"matchLabels": {str: str},
                   "matchExpressions": [{"key": str, "operator": str, "values": [str]}]}
_NODE_SELECTOR_TERM = {"matchExpressions": [{"key": str, "operator": str, "values": [str]}],
                       "matchFields": [{"key": str, "operator": str, "values": [str]}]}
_POD_AFFINITY_TERM = {"labelSelector": _LABEL_SELECTOR, "namespaceSelector": _LABEL_SELECTOR,
                      "namespaces": [str], "topologyKey": str, "matchLabelKeys": [str],
                      "mismatchLabelKeys": [str]}
_POD_AFFINITY = {"requiredDuringSchedulingIgnoredDuringExecution": [_POD_AFFINITY_TERM],
                 "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": int,
                                                                      "podAffinityTerm": _POD_AFFINITY_TERM}]}
AFFINITY_SHAPE = {
    "nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [_NODE_SELECTOR_TERM]},
        "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": int, "preference": _NODE_SELECTOR_TERM}],
    },
    "podAffinity": _POD_AFFINITY,
    "podAntiAffinity": _POD_AFFINITY,
}
_DNS1123_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_PERCENT = re.compile(r"^(0|[1-9][0-9]*)%$")
# Kubernetes resource.Quantity: a signed decimal number with an optional suffix.
_QUANTITY = re.compile(r"^[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+|Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E)?$")


@dataclass(frozen=True)
class PodDisruptionBudget:
    enabled: bool = False
    min_available: int | str | None = None
    max_unavailable: int | str | None = None


@dataclass(frozen=True)
class ManagerOptions:
    """Validated options; None means "not set: keep what upstream renders"."""

    replicas: int | None = None
    pdb: PodDisruptionBudget = field(default_factory=PodDisruptionBudget)
    topology_spread_constraints: list[dict] | None = None
    priority_class_name: str | None = None
    affinity: dict | None = None
    node_selector: dict[str, str] | None = None
    tolerations: list[dict] | None = None
    resources: dict | None = None
    ha: bool = False
    # Soft anti-affinity is resolved against the Deployment's selector at patch time, so the
    # preset needs no knowledge of the upstream labels.
    ha_anti_affinity: bool = False
    warnings: tuple[str, ...] = ()

    @property
    def empty(self) -> bool:
        return (self.replicas is None and not self.pdb.enabled and self.topology_spread_constraints is None
                and self.priority_class_name is None and self.affinity is None and self.node_selector is None
                and self.tolerations is None and self.resources is None and not self.ha_anti_affinity)


NO_OPTIONS = ManagerOptions()


# ---------------------------------------------------------------------------------------------
# Parsing: --set strings and the config block become plain nested dicts ("layers").


def _split_key(key: str) -> list[str]:
    """`a.b\\.c.d` -> ["a", "b.c", "d"]: label keys such as kubernetes.io/os contain dots."""
    return [part.replace("\\.", ".") for part in re.split(r"(?<!\\)\.", key)]


def parse_set(values: Iterable[str]) -> dict[str, Any]:
    """`--set manager.replicas=2 --set 'manager.tolerations=[{key: x, operator: Exists}]'` ->
    the `manager:` block they describe. Values are YAML (so 2 is a number and true a bool)."""
    block: dict[str, Any] = {}
    for raw in values:
        key, sep, value = raw.partition("=")
        if not sep or not key:
            raise InputError(f"--set {raw!r}: expected KEY=VALUE, e.g. manager.replicas=2")
        parts = _split_key(key.strip())
        if parts[0] != "manager" or len(parts) < 2 or any(not p for p in parts):
            raise InputError(f"--set {raw!r}: unknown key {key!r}; supported keys start with 'manager.' "
                             f"({', '.join(sorted(_TOP_KEYS))})")
        try:
            parsed = yaml.safe_load(value) if value.strip() else ""
        except yaml.YAMLError as exc:
            first = str(exc).splitlines()[0]
            raise InputError(f"--set {key}: value is not valid YAML: {first}") from None
        node = block
        for p in parts[1:-1]:
            nxt = node.setdefault(p, {})
            if not isinstance(nxt, dict):
                raise InputError(f"--set {key}: {p!r} was already set to a value, not a mapping")
            node = nxt
        node[parts[-1]] = parsed
    return block


def _merge_layer(base: dict, layer: dict) -> dict:
    """Later layers win key by key; mappings merge, lists and scalars replace."""
    out = copy.deepcopy(base)
    for key, value in layer.items():
        if key == "podDisruptionBudget" and isinstance(value, dict) and isinstance(out.get(key), dict):
            pdb = dict(out[key])
            # minAvailable and maxUnavailable exclude each other: a layer choosing one drops the
            # other from the layers below (the --ha preset's minAvailable, a config file's value).
            if "minAvailable" in value or "maxUnavailable" in value:
                pdb.pop("minAvailable", None)
                pdb.pop("maxUnavailable", None)
            pdb.update(value)
            out[key] = pdb
        elif isinstance(value, dict) and isinstance(out.get(key), dict) and key in ("affinity",):
            merged = dict(out[key])
            merged.update(value)
            out[key] = merged
        else:
            out[key] = copy.deepcopy(value)
    return out


HA_PRESET: dict[str, Any] = {
    "replicas": 2,
    "podDisruptionBudget": {"enabled": True, "minAvailable": 1},
}


def resolve(config_block: Any = None, set_values: Iterable[str] = (), *, ha: bool = False,
            source: str = "trainerctl.yaml") -> ManagerOptions:
    """Combine the config file's `manager:` block, --set flags and --ha into validated options."""
    if config_block is None:
        config_block = {}
    if not isinstance(config_block, dict):
        raise InputError(f"{source}: manager: expected a mapping, got {_type_name(config_block)}")
    flags = parse_set(set_values)
    want_ha = ha or _bool_or_none(config_block.get("ha"), f"{source}: manager.ha") is True \
        or _bool_or_none(flags.get("ha"), "--set manager.ha") is True
    merged: dict[str, Any] = copy.deepcopy(HA_PRESET) if want_ha else {}
    # Each layer is checked on its own first, so an error names where the bad value came from.
    for block, where in ((config_block, f"{source}: manager"), (flags, "--set manager")):
        validate(block, where=where)
        merged = _merge_layer(merged, block)
    merged.pop("ha", None)
    return validate(merged, ha=want_ha)


def _type_name(value: Any) -> str:
    return {dict: "a mapping", list: "a list", str: "a string", bool: "a boolean",
            int: "a number", float: "a number", type(None): "nothing"}.get(type(value), type(value).__name__)


def _bool_or_none(value: Any, where: str) -> bool | None:
    if value is None:
        return None
    if not isinstance(value, bool):
        raise InputError(f"{where}: expected true or false, got {value!r}")
    return value


# ---------------------------------------------------------------------------------------------
# Validation: one clear line per problem, naming the field and what was expected.


def validate(block: dict, *, where: str = "manager", ha: bool = False) -> ManagerOptions:
    unknown = sorted(set(block) - _TOP_KEYS - {"ha"})
    if unknown:
        raise InputError(f"{where}: unknown key {field_name(unknown[0])!r}; expected one of {', '.join(sorted(_TOP_KEYS))}")
    warnings: list[str] = []

    replicas = block.get("replicas")
    if replicas is not None:
        if isinstance(replicas, bool) or not isinstance(replicas, int):
            raise InputError(f"{where}.replicas: expected a whole number >= 1, got {replicas!r}")
        if replicas < 1:
            raise InputError(f"{where}.replicas: must be >= 1, got {replicas} (zero controller pods "
                             "means every TrainJob and runtime create or update is rejected by the webhooks)")
        if replicas > INT32_MAX:
            raise InputError(f"{where}.replicas: must be at most {INT32_MAX} (a 32-bit integer), got {replicas}")

    pdb = _validate_pdb(block.get("podDisruptionBudget"), f"{where}.podDisruptionBudget")
    if pdb.enabled:
        # Upstream renders no replicas: the Deployment default is 1.
        warning = _pdb_warning(pdb, replicas if replicas is not None else 1)
        if warning:
            warnings.append(warning)

    tsc = block.get("topologySpreadConstraints")
    if tsc is not None:
        tsc = _validate_tsc(tsc, f"{where}.topologySpreadConstraints")

    pcn = block.get("priorityClassName")
    if pcn is not None:
        if not isinstance(pcn, str) or not _DNS1123_SUBDOMAIN.match(pcn) or len(pcn) > 253:
            raise InputError(f"{where}.priorityClassName: expected the name of an existing PriorityClass "
                             f"(lower-case DNS subdomain), got {pcn!r}")

    affinity = block.get("affinity")
    if affinity is not None:
        _check_shape(affinity, AFFINITY_SHAPE, f"{where}.affinity")

    node_selector = block.get("nodeSelector")
    if node_selector is not None:
        _expect_mapping(node_selector, f"{where}.nodeSelector")
        for key, value in node_selector.items():
            if not isinstance(key, str) or not key or not isinstance(value, str):
                raise InputError(f"{where}.nodeSelector: expected label keys and string values, "
                                 f"got {key!r}: {value!r} (quote numbers and booleans)")

    tolerations = block.get("tolerations")
    if tolerations is not None:
        _validate_tolerations(tolerations, f"{where}.tolerations")

    resources = block.get("resources")
    if resources is not None:
        _validate_resources(resources, f"{where}.resources")

    return ManagerOptions(
        replicas=replicas,
        pdb=pdb,
        topology_spread_constraints=tsc,
        priority_class_name=pcn,
        affinity=copy.deepcopy(affinity),
        node_selector=dict(node_selector) if node_selector is not None else None,
        tolerations=copy.deepcopy(tolerations),
        resources=copy.deepcopy(resources),
        ha=ha,
        ha_anti_affinity=ha and (affinity is None or "podAntiAffinity" not in affinity),
        warnings=tuple(warnings),
    )


def _expect_mapping(value: Any, where: str, keys: set[str] | None = None) -> None:
    if not isinstance(value, dict):
        raise InputError(f"{where}: expected a mapping, got {_type_name(value)}")
    if keys is not None:
        unknown = sorted(str(k) for k in set(value) - keys)
        if unknown:
            raise InputError(f"{where}: unknown key {field_name(unknown[0])!r}; expected one of {', '.join(sorted(keys))}")


def _check_shape(value: Any, shape: Any, where: str) -> None:
    """value against a shape (see AFFINITY_SHAPE); the first mismatch is one line naming the field."""
    if isinstance(shape, dict) and set(shape) == {str}:
        _expect_mapping(value, where)
        for key, item in value.items():
            if not isinstance(key, str) or not isinstance(item, str):
                raise InputError(f"{where}: expected string keys and values, got {key!r}: {item!r} (quote it)")
    elif isinstance(shape, dict):
        _expect_mapping(value, where, set(shape))
        for key, item in value.items():
            _check_shape(item, shape[key], f"{where}.{key}")
    elif isinstance(shape, list):
        if not isinstance(value, list):
            raise InputError(f"{where}: expected a list, got {_type_name(value)}")
        for i, item in enumerate(value):
            _check_shape(item, shape[0], f"{where}[{i}]")
    elif shape is int:
        if isinstance(value, bool) or not isinstance(value, int) or not -INT32_MAX - 1 <= value <= INT32_MAX:
            raise InputError(f"{where}: expected a whole number (32-bit), got {value!r}")
    elif not isinstance(value, shape):
        raise InputError(f"{where}: expected {_type_name(shape())}, got {_type_name(value)} {value!r}")


def _int_or_percent(value: Any, where: str) -> int | str:
    if isinstance(value, bool) or not (isinstance(value, int) or (isinstance(value, str) and _PERCENT.match(value))):
        raise InputError(f"{where}: expected a whole number >= 0 or a percentage such as \"50%\", got {value!r}")
    if isinstance(value, int) and not 0 <= value <= INT32_MAX:
        raise InputError(f"{where}: must be between 0 and {INT32_MAX}, got {value}")
    if isinstance(value, str) and int(value[:-1]) > 100:
        raise InputError(f"{where}: a percentage must be at most 100%, got {value!r}")
    return value


def _validate_pdb(value: Any, where: str) -> PodDisruptionBudget:
    if value is None:
        return PodDisruptionBudget()
    _expect_mapping(value, where, _PDB_KEYS)
    if "minAvailable" in value and "maxUnavailable" in value:
        raise InputError(f"{where}: set minAvailable or maxUnavailable, not both")
    # Writing the block at all means "I want a PDB"; `enabled: false` switches a preset's off.
    enabled = _bool_or_none(value.get("enabled"), f"{where}.enabled")
    enabled = True if enabled is None else enabled
    min_available = value.get("minAvailable")
    max_unavailable = value.get("maxUnavailable")
    if min_available is not None:
        min_available = _int_or_percent(min_available, f"{where}.minAvailable")
    if max_unavailable is not None:
        max_unavailable = _int_or_percent(max_unavailable, f"{where}.maxUnavailable")
    if not enabled:
        return PodDisruptionBudget()
    if min_available is None and max_unavailable is None:
        min_available = 1
    return PodDisruptionBudget(True, min_available, max_unavailable)


def _pods(value: int | str, replicas: int, round_up: bool) -> int:
    if isinstance(value, int):
        return value
    share = int(value[:-1]) * replicas / 100
    return math.ceil(share) if round_up else math.floor(share)


def _pdb_warning(pdb: PodDisruptionBudget, replicas: int) -> str | None:
    # The disruption controller rounds minAvailable percentages up, maxUnavailable ones up too.
    if pdb.min_available is not None:
        allowed = replicas - _pods(pdb.min_available, replicas, round_up=True)
    else:
        allowed = _pods(pdb.max_unavailable, replicas, round_up=True)
    if allowed <= 0:
        return (f"manager.podDisruptionBudget allows no disruption with {replicas} replica(s): it blocks "
                "node drains; set manager.replicas to 2 or more (or use --ha)")
    if replicas - allowed <= 0:
        return (f"manager.podDisruptionBudget lets all {replicas} replica(s) be evicted at once: it does not "
                "keep the webhooks available during drains; set manager.replicas to 2 or more")
    return None


def _validate_tsc(value: Any, where: str) -> list[dict]:
    if not isinstance(value, list):
        raise InputError(f"{where}: expected a list, got {_type_name(value)}")
    out = []
    for i, item in enumerate(value):
        here = f"{where}[{i}]"
        _expect_mapping(item, here, _TSC_KEYS)
        skew = item.get("maxSkew")
        if isinstance(skew, bool) or not isinstance(skew, int) or not 1 <= skew <= INT32_MAX:
            raise InputError(f"{here}.maxSkew: expected a whole number >= 1, got {skew!r}")
        key = item.get("topologyKey")
        if not isinstance(key, str) or not key:
            raise InputError(f"{here}.topologyKey: expected a node label key such as "
                             f"topology.kubernetes.io/zone, got {key!r}")
        when = item.get("whenUnsatisfiable")
        if when not in ("DoNotSchedule", "ScheduleAnyway"):
            raise InputError(f"{here}.whenUnsatisfiable: expected DoNotSchedule or ScheduleAnyway, got {when!r}")
        if "labelSelector" in item:
            _expect_mapping(item["labelSelector"], f"{here}.labelSelector", {"matchLabels", "matchExpressions"})
        out.append(copy.deepcopy(item))
    return out


def _validate_tolerations(value: Any, where: str) -> None:
    if not isinstance(value, list):
        raise InputError(f"{where}: expected a list, got {_type_name(value)}")
    for i, item in enumerate(value):
        here = f"{where}[{i}]"
        _expect_mapping(item, here, _TOLERATION_KEYS)
        op = item.get("operator", "Equal")
        if op not in ("Equal", "Exists"):
            raise InputError(f"{here}.operator: expected Equal or Exists, got {op!r}")
        if op == "Exists" and item.get("value") not in (None, ""):
            raise InputError(f"{here}.value: must be empty when operator is Exists")
        effect = item.get("effect")
        if effect not in (None, "", "NoSchedule", "PreferNoSchedule", "NoExecute"):
            raise InputError(f"{here}.effect: expected NoSchedule, PreferNoSchedule or NoExecute, got {effect!r}")
        seconds = item.get("tolerationSeconds")
        if seconds is not None and (isinstance(seconds, bool) or not isinstance(seconds, int)
                                    or not -2**63 <= seconds < 2**63):
            raise InputError(f"{here}.tolerationSeconds: expected a whole number, got {seconds!r}")
        for key in ("key", "value"):
            if key in item and not isinstance(item[key], str):
                raise InputError(f"{here}.{key}: expected a string, got {item[key]!r} (quote it)")


def _validate_resources(value: Any, where: str) -> None:
    _expect_mapping(value, where, _RESOURCES_KEYS)
    for section in ("limits", "requests"):
        if section not in value:
            continue
        entries = value[section]
        _expect_mapping(entries, f"{where}.{section}")
        for name, qty in entries.items():
            if isinstance(qty, bool) or not isinstance(qty, (str, int, float)) or not _QUANTITY.match(str(qty)):
                raise InputError(f"{where}.{section}.{name}: expected a quantity such as 500m or 256Mi, got {qty!r}")
    if "claims" in value and not isinstance(value["claims"], list):
        raise InputError(f"{where}.claims: expected a list, got {_type_name(value['claims'])}")


# ---------------------------------------------------------------------------------------------
# Patches: pure functions from options + the rendered Deployment to kustomize patches.


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
