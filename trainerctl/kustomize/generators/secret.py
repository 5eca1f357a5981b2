"""SecretGenerator: `secretGenerator` entries and `kind: SecretGenerator` configs."""

from __future__ import annotations

from trainerctl.kustomize import schema
from trainerctl.kustomize.generators import kv

KIND = "SecretGenerator"
CONFIG = schema.SECRET_ARGS.extend(KIND, metadata=schema.OBJECT_META)


def configure(cfg: dict, ctx):
    args = kv.plugin_args(cfg)

    def generate():
        obj = kv.skeleton("Secret", args, ctx.where)
        obj["type"] = args.get("type") or "Opaque"
        pairs = kv.load_pairs(args, ctx.loader, ctx.where)
        obj["data"] = {
            key: kv.encode_base64(value if isinstance(value, bytes) else value.encode())
            for key, value in sorted(pairs.items())
        }
        return [kv.finish(obj, args, ctx.where)]

    return generate
