"""Checking a `manager:` block: one clear line per problem, naming the field and what was expected."""

from __future__ import annotations

import copy
import math
import re
from typing import Any

from trainerctl.errors import InputError
from trainerctl.render.controller.controller_options import ManagerOptions, PodDisruptionBudget
from trainerctl.trust.safe_text import field_name

TOP_KEYS = {
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

def type_name(value: Any) -> str:
    return {dict: "a mapping", list: "a list", str: "a string", bool: "a boolean",
            int: "a number", float: "a number", type(None): "nothing"}.get(type(value), type(value).__name__)


def bool_or_none(value: Any, where: str) -> bool | None:
    if value is None:
        return None
    if not isinstance(value, bool):
        raise InputError(f"{where}: expected true or false, got {value!r}")
    return value


def validate(block: dict, *, where: str = "manager", ha: bool = False) -> ManagerOptions:
    unknown = sorted(set(block) - TOP_KEYS - {"ha"})
    if unknown:
        raise InputError(f"{where}: unknown key {field_name(unknown[0])!r}; expected one of {', '.join(sorted(TOP_KEYS))}")
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
        raise InputError(f"{where}: expected a mapping, got {type_name(value)}")
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
            raise InputError(f"{where}: expected a list, got {type_name(value)}")
        for i, item in enumerate(value):
            _check_shape(item, shape[0], f"{where}[{i}]")
    elif shape is int:
        if isinstance(value, bool) or not isinstance(value, int) or not -INT32_MAX - 1 <= value <= INT32_MAX:
            raise InputError(f"{where}: expected a whole number (32-bit), got {value!r}")
    elif not isinstance(value, shape):
        raise InputError(f"{where}: expected {type_name(shape())}, got {type_name(value)} {value!r}")


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
    enabled = bool_or_none(value.get("enabled"), f"{where}.enabled")
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
        raise InputError(f"{where}: expected a list, got {type_name(value)}")
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
        raise InputError(f"{where}: expected a list, got {type_name(value)}")
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
        raise InputError(f"{where}.claims: expected a list, got {type_name(value['claims'])}")
