"""configMapGenerator and secretGenerator: objects made from literals, files and env files."""

from __future__ import annotations

import base64
import os

from trainerctl.kustomize.errors import KustomizeError
from trainerctl.kustomize.kustfile import check_fields
from trainerctl.kustomize.loader import Loader
from trainerctl.kustomize.resource import Resource

_GEN_FIELDS = {"name", "namespace", "behavior", "files", "literals", "envs", "env", "options",
               "type", "kind"}
_OPTION_FIELDS = {"labels", "annotations", "disableNameSuffixHash", "immutable"}


def _strip_quotes(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    return value


def _env_pairs(text: str, where: str) -> list[tuple[str, str]]:
    pairs = []
    for n, line in enumerate(text.splitlines()):
        if n == 0:
            line = line.removeprefix("\ufeff")
        line = line.lstrip()
        if not line or line.startswith("#"):
            continue
        key, sep, value = line.partition("=")
        if not key:
            raise KustomizeError(f"{where}: line {n + 1}: empty key")
        pairs.append((key, value if sep else os.environ.get(key, "")))
    return pairs


def _options(gen: dict, defaults: dict, where: str) -> dict:
    opts = dict(defaults or {})
    own = check_fields(gen.get("options") or {}, _OPTION_FIELDS, f"{where}.options")
    check_fields(opts, _OPTION_FIELDS, "generatorOptions")
    merged = {
        "labels": {**(opts.get("labels") or {}), **(own.get("labels") or {})},
        "annotations": {**(opts.get("annotations") or {}), **(own.get("annotations") or {})},
        "disableNameSuffixHash": bool(own.get("disableNameSuffixHash",
                                             opts.get("disableNameSuffixHash", False))),
        "immutable": bool(own.get("immutable", opts.get("immutable", False))),
    }
    return merged


def generate(kind: str, gen: dict, loader: Loader, defaults: dict, index: int) -> Resource:
    where = f"{loader.name('')}: {'configMapGenerator' if kind == 'ConfigMap' else 'secretGenerator'}[{index}]"
    check_fields(gen, _GEN_FIELDS, where)
    name = gen.get("name")
    if not isinstance(name, str) or not name:
        raise KustomizeError(f"{where}: `name` is required")
    behavior = gen.get("behavior") or "create"
    if behavior not in ("create", "merge", "replace"):
        raise KustomizeError(f"{where}: behavior must be create, merge or replace, got {behavior!r}")
    text_data: dict[str, str] = {}
    binary: dict[str, bytes] = {}

    def put(key: str, value, origin: str) -> None:
        # kustomize v5 takes any non-empty key (the API server validates them later).
        if not key:
            raise KustomizeError(f"{where}: {origin}: invalid source, expected key=value")
        if key in text_data or key in binary:
            raise KustomizeError(
                f"{where}: {origin}: cannot add key {key}, another key by that name already exists"
            )
        if isinstance(value, bytes):
            try:
                text_data[key] = value.decode("utf-8")
            except UnicodeDecodeError:
                binary[key] = value
        else:
            text_data[key] = value

    envs = list(gen.get("envs") or [])
    if gen.get("env"):
        envs.append(gen["env"])
    for env in envs:
        for k, v in _env_pairs(loader.read_text(env), loader.name(env)):
            put(k, v, env)
    for lit in gen.get("literals") or []:
        if not isinstance(lit, str):
            raise KustomizeError(f"{where}: literal {lit!r} must be a string key=value")
        key, sep, value = lit.partition("=")
        if not sep:
            raise KustomizeError(f"{where}: invalid literal source {lit!r}, expected key=value")
        put(key, _strip_quotes(value), f"literal {lit!r}")
    for f in gen.get("files") or []:
        if not isinstance(f, str):
            raise KustomizeError(f"{where}: file source {f!r} must be a string")
        key, sep, path = f.partition("=")
        if not sep:
            key, path = os.path.basename(f), f
        elif not key:
            raise KustomizeError(f"{where}: file source {f!r} has an empty key")
        put(key, loader.read(path), f"file {path!r}")

    opts = _options(gen, defaults, where)
    md: dict = {"name": name}
    if gen.get("namespace"):
        md["namespace"] = gen["namespace"]
    if opts["labels"]:
        md["labels"] = dict(opts["labels"])
    if opts["annotations"]:
        md["annotations"] = dict(opts["annotations"])
    obj: dict = {"apiVersion": "v1", "kind": kind, "metadata": md}
    if kind == "ConfigMap":
        if text_data:
            obj["data"] = text_data
        if binary:
            obj["binaryData"] = {k: base64.b64encode(v).decode() for k, v in binary.items()}
    else:
        encoded = {k: base64.b64encode(v.encode()).decode() for k, v in text_data.items()}
        encoded.update({k: base64.b64encode(v).decode() for k, v in binary.items()})
        obj["type"] = gen.get("type") or "Opaque"
        obj["data"] = encoded
    if opts["immutable"]:
        obj["immutable"] = True
    return Resource(obj, where, needs_hash=not opts["disableNameSuffixHash"],
                    behavior=behavior)
