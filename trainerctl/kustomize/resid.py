"""Resource identity: what every transformer, generator and patch keys on."""

from __future__ import annotations

from dataclasses import dataclass

# Kinds the API serves cluster-scoped. kustomize takes this from its OpenAPI data; anything not
# listed (every custom resource, ClusterTrainingRuntime included) counts as namespaced, as there.
CLUSTER_SCOPED_KINDS = frozenset(
    """APIService CSIDriver CSINode CertificateSigningRequest ClusterRole ClusterRoleBinding
    ComponentStatus CustomResourceDefinition FlowSchema IngressClass MutatingWebhookConfiguration
    MutatingAdmissionPolicy MutatingAdmissionPolicyBinding Namespace Node PersistentVolume
    PodSecurityPolicy PriorityClass PriorityLevelConfiguration RuntimeClass SelfSubjectAccessReview
    SelfSubjectRulesReview SelfSubjectReview StorageClass StorageVersion SubjectAccessReview
    TokenReview ValidatingAdmissionPolicy ValidatingAdmissionPolicyBinding
    ValidatingWebhookConfiguration VolumeAttachment VolumeAttributesClass IPAddress ServiceCIDR
    ClusterTrustBundle DeviceClass ResourceSlice""".split()
)

# kustomize's legacy output order (api/resid/gvk.go): these first, in this order ...
ORDER_FIRST = [
    "Namespace", "ResourceQuota", "StorageClass", "CustomResourceDefinition", "ServiceAccount",
    "PodSecurityPolicy", "Role", "ClusterRole", "RoleBinding", "ClusterRoleBinding", "ConfigMap",
    "Secret", "Service", "LimitRange", "PriorityClass", "PersistentVolume",
    "PersistentVolumeClaim", "Deployment", "StatefulSet", "CronJob", "PodDisruptionBudget",
]
# ... these last, and everything else in between.
ORDER_LAST = ["MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"]


@dataclass(frozen=True)
class Gvk:
    group: str = ""
    version: str = ""
    kind: str = ""

    @classmethod
    def of(cls, obj: dict) -> "Gvk":
        api_version = obj.get("apiVersion") or ""
        if not isinstance(api_version, str):
            api_version = str(api_version)
        group, _, version = api_version.rpartition("/")
        kind = obj.get("kind") or ""
        return cls(group, version, kind if isinstance(kind, str) else str(kind))

    def __str__(self) -> str:
        return "_".join([self.group or "~G", self.version or "~V", self.kind or "~K"])

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def cluster_scoped(self) -> bool:
        return self.kind in CLUSTER_SCOPED_KINDS

    def selected_by(self, group: str | None, version: str | None, kind: str | None) -> bool:
        """Empty selector fields are wildcards."""
        return (
            (not group or group == self.group)
            and (not version or version == self.version)
            and (not kind or kind == self.kind)
        )


@dataclass(frozen=True)
class ResId:
    gvk: Gvk
    name: str
    namespace: str = ""

    @property
    def effective_namespace(self) -> str:
        """Cluster-scoped objects have none; namespaced ones default to `default`."""
        if self.gvk.cluster_scoped:
            return ""
        return self.namespace or "default"

    def key(self) -> tuple:
        return (self.gvk, self.name, self.effective_namespace)

    def __str__(self) -> str:
        ns = f"[ns={self.namespace}]" if self.namespace else ""
        return f"{self.gvk.kind}/{self.name}{ns} ({self.gvk.api_version or 'no apiVersion'})"
