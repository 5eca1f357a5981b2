"""ConfigMapGenerator: `configMapGenerator` entries and `kind: ConfigMapGenerator` configs."""

from __future__ import annotations

from trainerctl.kustomize import roundtrip, schema
from trainerctl.kustomize.errors import KustomizeError
from trainerctl.kustomize.generators import kv

KIND = "ConfigMapGenerator"
CONFIG = schema.CONFIGMAP_ARGS.extend(KIND, metadata=schema.OBJECT_META)


def configure(cfg: dict, ctx):
    args = kv.plugin_args(cfg)

    def generate():
        obj = kv.skeleton("ConfigMap", args, ctx.where)
        data, binary = {}, {}
        for key, value in sorted(kv.load_pairs(args, ctx.loader, ctx.where).items()):
            if isinstance(value, bytes):
                try:
                    value = value.decode("utf-8")
                except UnicodeDecodeError:
                    binary[key] = kv.encode_base64(value)
                    continue
            if "\x85" in value:
                value = roundtrip.nel_folded(value)  # as kustomize hashes and prints it
            if "\n" in value and roundtrip.unreadable(value):
                # kustomize makes such a value a literal block scalar, which kyaml writes back
                # without an indentation indicator and cannot read (roundtrip.py).
                raise KustomizeError(
                    f"{ctx.where}: configmap {args.get('name', '')} key `{key}`: a multi-line value "
                    "starting with a tab, which kubectl fails to write (found a tab character "
                    "where an indentation space is expected)")
            data[key] = value
        if data:
            obj["data"] = data
        if binary:
            obj["binaryData"] = binary
        return [kv.finish(obj, args, ctx.where)]

    return generate
