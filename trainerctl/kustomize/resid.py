"""Resource identity: what every transformer, generator and patch keys on."""

from __future__ import annotations

# Cluster scope as kustomize decides it: kyaml's precomputed table (Kubernetes v1.21.2), then
# what a custom `openapi` schema declares. Anything else, newer built-in kinds and custom
# resources included, counts as namespaced there, and so here.
from trainerctl.kustomize.openapi import CLUSTER_SCOPED, EXTRA_CLUSTER_SCOPED

# kustomize's legacy output order (api/resid/gvk.go): these first, in this order ...
ORDER_FIRST = [
    "Namespace", "ResourceQuota", "StorageClass", "CustomResourceDefinition", "ServiceAccount",
    "PodSecurityPolicy", "Role", "ClusterRole", "RoleBinding", "ClusterRoleBinding", "ConfigMap",
    "Secret", "Endpoints", "Service", "LimitRange", "PriorityClass", "PersistentVolume",
    "PersistentVolumeClaim", "Deployment", "StatefulSet", "CronJob", "PodDisruptionBudget",
]
# ... these last, and everything else in between.
ORDER_LAST = ["MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"]


class Gvk:
    """Group, version and kind (immutable: a dict key)."""

    __slots__ = ("group", "version", "kind", "_hash")

    def __init__(self, group: str = "", version: str = "", kind: str = ""):
        self.group, self.version, self.kind = group, version, kind
        self._hash = hash((group, version, kind))

    def __eq__(self, other: object) -> bool:
        return (other.__class__ is Gvk and self.group == other.group
                and self.version == other.version and self.kind == other.kind)

    def __hash__(self) -> int:
        return self._hash

    def __repr__(self) -> str:
        return f"Gvk(group={self.group!r}, version={self.version!r}, kind={self.kind!r})"

    @classmethod
    def of(cls, obj: dict) -> "Gvk":
        key = (obj.get("apiVersion"), obj.get("kind"))
        try:
            return _GVK_CACHE[key]
        except (KeyError, TypeError):
            pass
        api_version = key[0] or ""
        if not isinstance(api_version, str):
            api_version = str(api_version)
        group, _, version = api_version.partition("/")
        if not _:
            group, version = "", api_version
        kind = key[1] or ""
        gvk = cls(group, version, kind if isinstance(kind, str) else str(kind))
        try:
            _GVK_CACHE[key] = gvk
        except TypeError:  # an unhashable apiVersion or kind: bad input, not cached
            pass
        return gvk

    def __str__(self) -> str:
        return "_".join([self.group or "~G", self.version or "~V", self.kind or "~K"])

    def id_string(self) -> str:
        """kyaml's Gvk.String(): Kind.version.group."""
        return ".".join([self.kind or "[noKind]", self.version or "[noVer]",
                         self.group or "[noGrp]"])

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def cluster_scoped(self) -> bool:
        key = (self.api_version, self.kind)
        return key in CLUSTER_SCOPED or key in EXTRA_CLUSTER_SCOPED

    def selected_by(self, group: str | None, version: str | None, kind: str | None) -> bool:
        """Empty selector fields are wildcards."""
        return (
            (not group or group == self.group)
            and (not version or version == self.version)
            and (not kind or kind == self.kind)
        )


NOT_A_NAMESPACE = "_non_namespaceable_"
_GVK_CACHE: dict = {}


class ResId:
    """A resource's identity (immutable: a dict key)."""

    __slots__ = ("gvk", "name", "namespace")

    def __init__(self, gvk: Gvk, name: str, namespace: str = ""):
        self.gvk, self.name, self.namespace = gvk, name, namespace

    def __eq__(self, other: object) -> bool:
        return (other.__class__ is ResId and self.name == other.name
                and self.namespace == other.namespace and self.gvk == other.gvk)

    def __hash__(self) -> int:
        return hash((self.gvk, self.name, self.namespace))

    def __repr__(self) -> str:
        return f"ResId(gvk={self.gvk!r}, name={self.name!r}, namespace={self.namespace!r})"

    @property
    def effective_namespace(self) -> str:
        """kyaml's EffectiveNamespace: cluster-scoped objects have none, and a namespaced one
        without a namespace is in `default`."""
        if self.gvk.cluster_scoped:
            return NOT_A_NAMESPACE
        return self.namespace or "default"

    effective_namespace_go = effective_namespace

    def key(self) -> tuple:
        return (self.gvk, self.name, self.effective_namespace)

    def equals(self, other: "ResId") -> bool:
        return (self.name == other.name and self.gvk == other.gvk
                and self.effective_namespace == other.effective_namespace)

    def gvkn_equals(self, other: "ResId") -> bool:
        return self.name == other.name and self.gvk == other.gvk

    def __str__(self) -> str:
        """kyaml's ResId.String(): Kind.version.group/name.namespace."""
        return f"{self.gvk.id_string()}/{self.name or '[noName]'}.{self.namespace or '[noNs]'}"
