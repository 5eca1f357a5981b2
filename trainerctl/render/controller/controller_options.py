"""The validated controller options: what the patches are made from."""

from __future__ import annotations

from dataclasses import dataclass, field

DEFAULT_DEPLOYMENT = "kubeflow-trainer-controller-manager"
DEFAULT_CONTAINER = "manager"
HOSTNAME_TOPOLOGY_KEY = "kubernetes.io/hostname"


@dataclass(frozen=True)
class PodDisruptionBudget:
    """The controller's PodDisruptionBudget, if any, and its one bound."""

    enabled: bool = False
    min_available: int | str | None = None
    max_unavailable: int | str | None = None


@dataclass(frozen=True)
class ManagerOptions:
    """Validated options; None means "not set: keep what upstream renders"."""

    replicas: int | None = None
    pdb: PodDisruptionBudget = field(default_factory=PodDisruptionBudget)
    topology_spread_constraints: list[dict] | None = None
    priority_class_name: str | None = None
    affinity: dict | None = None
    node_selector: dict[str, str] | None = None
    tolerations: list[dict] | None = None
    resources: dict | None = None
    ha: bool = False
    # Soft anti-affinity is resolved against the Deployment's selector at patch time, so the
    # preset needs no knowledge of the upstream labels.
    ha_anti_affinity: bool = False
    warnings: tuple[str, ...] = ()

    @property
    def empty(self) -> bool:
        return (self.replicas is None and not self.pdb.enabled and self.topology_spread_constraints is None
                and self.priority_class_name is None and self.affinity is None and self.node_selector is None
                and self.tolerations is None and self.resources is None and not self.ha_anti_affinity)


NO_OPTIONS = ManagerOptions()
