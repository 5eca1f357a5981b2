"""NamespaceTransformer: `namespace:` and `kind: NamespaceTransformer`."""

from __future__ import annotations

from trainerctl.kustomize import fieldspecs
from trainerctl.kustomize import schema
from trainerctl.kustomize.errors import KustomizeError

KIND = "NamespaceTransformer"
CONFIG = schema.Struct(KIND, {
    "metadata": schema.OBJECT_META, "fieldSpecs": schema.List(schema.FIELD_SPEC),
    "unsetOnly": schema.BOOL, "setRoleBindingSubjects": schema.STR,
})
_BINDINGS = ("RoleBinding", "ClusterRoleBinding")
_MODES = ("defaultOnly", "none", "allServiceAccounts")


def configure(cfg: dict, ctx):
    namespace = (cfg.get("metadata") or {}).get("namespace", "")
    specs = [fieldspecs.FieldSpec.from_config(f, ctx.where) for f in cfg.get("fieldSpecs") or []]
    unset_only = bool(cfg.get("unsetOnly"))
    mode = cfg.get("setRoleBindingSubjects") or "defaultOnly"
    if mode not in _MODES:
        raise KustomizeError(f"{ctx.where}: field `setRoleBindingSubjects` must be one of "
                             f"{', '.join(_MODES)}, got {mode!r}")

    def set_value(parent, key) -> None:
        if unset_only and parent.get(key) not in (None, ""):
            return
        parent[key] = namespace

    def transform(resmap) -> None:
        if not namespace:
            return
        for r in resmap:
            if not r.obj:
                continue
            if r.annotations().get("internal.config.kubernetes.io/helm-generated") == "true":
                continue
            r.store_previous()
            gvk = r.gvk
            mine = [s for s in specs if s.path != ("metadata", "namespace")
                    and not (gvk.api_version != "v1" and s.path == ("metadata", "name"))]
            if not gvk.cluster_scoped:
                set_value(r.metadata, "namespace")
            if gvk.kind in _BINDINGS:
                mine = [s for s in mine if not (s.kind in _BINDINGS
                                                and s.path == ("subjects", "namespace"))]
                _subjects(r.obj.get("subjects"), mode, set_value)
            for spec in mine:
                if spec.applies_to(gvk):
                    fieldspecs.walk(r.obj, spec, fieldspecs.SCALAR, set_value)
        # kustomize checks after each object; a clash then is a clash at the end too.
        seen = set()
        for r in resmap:
            key = r.id.key()
            if key in seen:
                raise KustomizeError(f"{ctx.where}: namespace transformation produces ID "
                                     f"conflict: {r.id}")
            seen.add(key)

    return transform


def _subjects(subjects, mode: str, set_value) -> None:
    if mode == "none" or not isinstance(subjects, list):
        return
    for subject in subjects:
        if not isinstance(subject, dict):
            continue
        if mode == "defaultOnly" and subject.get("name") != "default":
            continue
        if mode == "allServiceAccounts" and subject.get("kind") != "ServiceAccount":
            continue
        set_value(subject, "namespace")
