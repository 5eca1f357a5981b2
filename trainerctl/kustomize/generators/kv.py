"""What ConfigMap and Secret generators share: key/value pairs from env files, literals and
files (kustomize's kv loader, in that order), generator options, and the object skeleton."""

from __future__ import annotations

import base64
import posixpath

from trainerctl.kustomize.errors import KustomizeError
from trainerctl.kustomize.resource import Resource


def _strip_quotes(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    return value


def _env_pairs(data: bytes, where: str) -> list[tuple[str, str]]:
    pairs = []
    for n, raw in enumerate(data.split(b"\n")):
        if raw.endswith(b"\r"):
            raw = raw[:-1]
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise KustomizeError(f"{where}: line {n + 1} has invalid utf8 bytes") from None
        if n == 0:
            line = line.removeprefix("\ufeff")
        line = line.lstrip()
        if not line or line.startswith("#"):
            continue
        key, _, value = line.partition("=")
        if key:  # a line "=value" has no key and is skipped, as kustomize does
            pairs.append((key, value))
    return pairs


def _file_source(source: str, where: str) -> tuple[str, str]:
    count = source.count("=")
    if count == 0:
        return posixpath.basename(source), source
    if count == 1 and source.startswith("="):
        raise KustomizeError(f"{where}: missing key name for file path {source[1:]!r} in source "
                             f"{source!r}")
    if count == 1 and source.endswith("="):
        raise KustomizeError(f"{where}: missing file path for key name {source[:-1]!r} in "
                             f"source {source!r}")
    if count > 1:
        raise KustomizeError(f"{where}: source {source!r} key name or file path contains '='")
    key, path = source.split("=")
    return key, path


def load_pairs(args: dict, loader, where: str) -> dict[str, bytes | str]:
    """Every key → value, refusing a repeated key (kustomize: "illegally repeats the key")."""
    out: dict[str, bytes | str] = {}

    def put(key: str, value) -> None:
        if key in out:
            raise KustomizeError(
                f"{where}: configmap {args.get('name', '')} illegally repeats the key `{key}`"
            )
        out[key] = value

    for env in args.get("envs") or []:
        for k, v in _env_pairs(loader.read(env), loader.name(env)):
            put(k, v)
    for lit in args.get("literals") or []:
        key, sep, value = lit.partition("=")
        if not sep or not key:
            raise KustomizeError(f"{where}: invalid literal source {lit!r}, expected key=value")
        put(key, _strip_quotes(value))
    for f in args.get("files") or []:
        key, path = _file_source(f, where)
        put(key, loader.read(path))
    return out


def encode_base64(data: bytes) -> str:
    """kyaml's encodeBase64: lines of 70 characters, each ending in a newline once there is
    more than one."""
    text = base64.b64encode(data).decode()
    if len(text) < 70:
        return text
    return "".join(text[i:i + 70] + "\n" for i in range(0, len(text), 70))


def skeleton(kind: str, args: dict, where: str) -> dict:
    name = args.get("name") or ""
    if not name:
        raise KustomizeError(f"{where}: a {kind.lower()} generator needs a `name`")
    md: dict = {"name": name}
    if args.get("namespace"):
        md["namespace"] = args["namespace"]
    return {"apiVersion": "v1", "kind": kind, "metadata": md}


def merged_options(local: dict | None, defaults: dict | None) -> dict | None:
    """kustomize's MergeGlobalOptionsIntoLocal: the kustomization's generatorOptions under the
    generator's own options (labels/annotations merged, the flags or-ed)."""
    if not defaults:
        return local
    local = dict(local or {})
    for key in ("labels", "annotations"):
        if defaults.get(key):
            local[key] = {**defaults[key], **(local.get(key) or {})}
    for key in ("disableNameSuffixHash", "immutable"):
        if defaults.get(key):
            local[key] = True
    return local


def finish(obj: dict, args: dict, where: str) -> Resource:
    opts = args.get("options") or {}
    md = obj["metadata"]
    if opts.get("labels"):
        md["labels"] = dict(opts["labels"])
    if opts.get("annotations"):
        md["annotations"] = dict(opts["annotations"])
    if opts.get("immutable"):
        obj["immutable"] = True
    # kustomize reads any other behavior as "unspecified", which acts as create.
    behavior = args.get("behavior") if args.get("behavior") in ("merge", "replace") else "create"
    return Resource(obj, where, needs_hash=not opts.get("disableNameSuffixHash"),
                    behavior=behavior)


def plugin_args(cfg: dict) -> dict:
    """A generator config's arguments; a config file may name the object in `metadata`."""
    args = dict(cfg)
    md = args.pop("metadata", None) or {}
    if not args.get("name") and md.get("name"):
        args["name"] = md["name"]
    if not args.get("namespace") and md.get("namespace"):
        args["namespace"] = md["namespace"]
    return args
