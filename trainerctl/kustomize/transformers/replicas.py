"""ReplicaCountTransformer: `replicas:` entries and `kind: ReplicaCountTransformer`."""

from __future__ import annotations

from trainerctl.kustomize import fieldspecs
from trainerctl.kustomize import schema
from trainerctl.kustomize.errors import KustomizeError

KIND = "ReplicaCountTransformer"
CONFIG = schema.Struct(KIND, {"replica": schema.REPLICA,
                              "fieldSpecs": schema.List(schema.FIELD_SPEC)})


def configure(cfg: dict, ctx):
    replica = cfg.get("replica") or {}
    name, count = replica.get("name", ""), replica.get("count", 0)
    specs = [fieldspecs.FieldSpec.from_config(f, ctx.where) for f in cfg.get("fieldSpecs") or []]

    def transform(resmap) -> None:
        found = False
        for spec in specs:
            matched = [r for r in resmap if r.obj and any(
                i.name == name and i.gvk.selected_by(spec.group, spec.version, spec.kind)
                for i in r.all_ids())]
            if matched:
                found = True
            for r in matched:
                if spec.applies_to(r.gvk):
                    fieldspecs.walk(r.obj, spec, fieldspecs.SCALAR, lambda p, k: p.__setitem__(k, count))
        if not found:
            kinds = ", ".join(s.kind or "*" for s in specs)
            raise KustomizeError(f"{ctx.where}: resource with name {name!r} does not match a "
                                 f"config with a replicas field ({kinds})")

    return transform
