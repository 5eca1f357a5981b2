"""`crds:` files: OpenAPI definitions of custom types whose `x-kubernetes-*` extensions tell
kustomize which fields hold annotations, label selectors, identities and references to other
objects (kustomize's LoadConfigFromCRDs)."""

from __future__ import annotations

import json

from trainerctl.kustomize import yamlread
from trainerctl.kustomize.config import TransformerConfig
from trainerctl.kustomize.errors import KustomizeError
from trainerctl.kustomize.fieldspecs import FieldSpec


def config_from(data: bytes, source: str) -> TransformerConfig:
    text = data.decode("utf-8", "replace")
    try:
        defs = json.loads(text) if text[:1] == "{" else yamlread.load(text, source, yaml11=True)
    except ValueError as exc:
        raise KustomizeError(f"{source}: unable to parse open API definition: {exc}") from None
    if not isinstance(defs, dict):
        raise KustomizeError(f"{source}: unable to parse open API definition: expected a mapping "
                             f"of type names to definitions")
    cfg = TransformerConfig({}, [])
    for name, api in defs.items():
        props = _properties(defs, name)
        if props is None or not {"kind", "apiVersion", "metadata"} <= set(props):
            continue
        _load(cfg, name.split(".")[-1], defs, name, [], source, set())
    return cfg


def _schema(defs: dict, name: str) -> dict | None:
    api = defs.get(name)
    if not isinstance(api, dict):
        return None
    schema = next((v for k, v in api.items() if k.lower() == "schema"), None)
    return schema if isinstance(schema, dict) else None


def _properties(defs: dict, name: str) -> dict | None:
    schema = _schema(defs, name)
    props = schema.get("properties") if schema else None
    return props if isinstance(props, dict) else None


def _load(cfg: TransformerConfig, kind: str, defs: dict, name: str, path: list[str], source: str,
          seen: set) -> None:
    props = _properties(defs, name)
    if props is None or name in seen:
        return
    seen = seen | {name}
    for prop, spec in props.items():
        if not isinstance(spec, dict):
            continue
        here = path + [prop]

        def fs(p):
            return FieldSpec(tuple(p), "", "", kind, False)

        if isinstance(spec.get("x-kubernetes-annotation"), str):
            cfg.add("commonAnnotations", fs(here), source)
        if isinstance(spec.get("x-kubernetes-label-selector"), str):
            cfg.add("commonLabels", fs(here), source)
        if isinstance(spec.get("x-kubernetes-identity"), str):
            cfg.add("namePrefix", fs(here), source)
        version, ref_kind = spec.get("x-kubernetes-object-ref-api-version"), \
            spec.get("x-kubernetes-object-ref-kind")
        if isinstance(version, str) and isinstance(ref_kind, str):
            key = spec.get("x-kubernetes-object-ref-name-key")
            key = key if isinstance(key, str) else "name"
            cfg.add_nameref(("", version, ref_kind), [fs(here + [key])], source)
        ref = spec.get("$ref")
        if isinstance(ref, str) and ref:
            _load(cfg, kind, defs, ref, here, source, seen)
