"""Which objects go out together, in which order, and what we wait for after each group.

The order is install policy (like Helm's install order), not a resource mapping: a kind not named
here goes with the plain configuration objects, and anything a rendered admission webhook
intercepts goes last, once that webhook can answer.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class StageSpec:
    name: str
    kinds: frozenset[str] = frozenset()
    wait: str = ""  # "crds" | "controllers" | ""


STAGES: tuple[StageSpec, ...] = (
    StageSpec("crds", frozenset({"CustomResourceDefinition"}), wait="crds"),
    StageSpec("namespaces", frozenset({"Namespace"})),
    StageSpec("rbac", frozenset({"ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"})),
    StageSpec("config", frozenset()),  # ServiceAccounts, ConfigMaps, Secrets, Services, the rest
    StageSpec("workloads", frozenset({"Deployment", "StatefulSet", "DaemonSet"})),
    StageSpec("webhooks", frozenset({"ValidatingWebhookConfiguration", "MutatingWebhookConfiguration"}),
              wait="controllers"),
    StageSpec("admitted", frozenset()),  # runtimes and whatever else our webhooks intercept
)
STAGE_INDEX = {s.name: i for i, s in enumerate(STAGES)}
_BY_KIND = {k: s.name for s in STAGES for k in s.kinds}
# Every Trainer release validates its runtimes with a webhook; they wait for it even when the
# render has no webhook configuration of its own (`-c runtimes` onto an installed Trainer).
ALWAYS_ADMITTED = frozenset({("trainer.kubeflow.org", "clustertrainingruntimes"),
                             ("trainer.kubeflow.org", "trainingruntimes")})


@dataclass
class WebhookRules:
    """(group, resource) pairs the rendered admission webhooks intercept."""

    pairs: list[tuple[str, str]] = field(default_factory=list)

    @classmethod
    def from_objects(cls, objects: list[dict]) -> "WebhookRules":
        pairs = []
        for obj in objects:
            if obj.get("kind") not in ("ValidatingWebhookConfiguration", "MutatingWebhookConfiguration"):
                continue
            for hook in obj.get("webhooks") or []:
                for rule in hook.get("rules") or []:
                    for group in rule.get("apiGroups") or []:
                        for resource in rule.get("resources") or []:
                            pairs.append((group, resource.split("/")[0]))
        return cls(pairs)

    def matches(self, group: str, resource: str) -> bool:
        return any(g in ("*", group) and r in ("*", resource) for g, r in self.pairs)


def stage_of(kind: str, group: str, resource: str, rules: WebhookRules) -> str:
    named = _BY_KIND.get(kind)
    if named:
        return named
    if (group, resource) in ALWAYS_ADMITTED or rules.matches(group, resource):
        return "admitted"
    return "config"
