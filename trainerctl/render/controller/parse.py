"""Reading options: --set strings and the config block become plain nested dicts ("layers"),
merged over the --ha preset and validated into ManagerOptions."""

from __future__ import annotations

import copy
import re
from typing import Any, Iterable

from trainerctl.errors import InputError
from trainerctl.render.controller.controller_options import ManagerOptions
from trainerctl.render.controller.validate import TOP_KEYS, bool_or_none, type_name, validate
from trainerctl.trust.document_bounds import load_yaml

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
                             f"({', '.join(sorted(TOP_KEYS))})")
        parsed = load_yaml(value, f"--set {key}") if value.strip() else ""
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
        raise InputError(f"{source}: manager: expected a mapping, got {type_name(config_block)}")
    flags = parse_set(set_values)
    want_ha = ha or bool_or_none(config_block.get("ha"), f"{source}: manager.ha") is True \
        or bool_or_none(flags.get("ha"), "--set manager.ha") is True
    merged: dict[str, Any] = copy.deepcopy(HA_PRESET) if want_ha else {}
    # Each layer is checked on its own first, so an error names where the bad value came from.
    for block, where in ((config_block, f"{source}: manager"), (flags, "--set manager")):
        validate(block, where=where)
        merged = _merge_layer(merged, block)
    merged.pop("ha", None)
    return validate(merged, ha=want_ha)
