"""HashTransformer: the name-suffix hash of generated objects. kustomize runs it once at the
top of a build; a `kind: HashTransformer` config runs it where it is listed."""

from __future__ import annotations

from trainerctl.kustomize import schema
from trainerctl.kustomize.hashing import hash_of

KIND = "HashTransformer"
CONFIG = schema.Struct(KIND, {})


def add_hashes(resmap) -> None:
    for r in resmap:
        if r.needs_hash:
            h = hash_of(r.obj)
            r.store_previous()
            r.metadata["name"] = f"{r.name}-{h}"


def configure(cfg: dict, ctx):
    return add_hashes
