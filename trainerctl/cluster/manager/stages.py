"""Staged apply: which objects go out together, in which order, and what is waited for after each.

The engine only knows the mechanism: a plan of named stages, each claiming some kinds and naming a
wait, one default stage for every other kind, and one "admitted" stage for whatever a rendered
admission webhook intercepts, which must wait until that webhook can answer. The stages a product
installs in are its policy (trainerctl.cluster.trainer.policy for Trainer).
"""

from __future__ import annotations

from dataclasses import dataclass, field

WAIT_CRDS = "crds"  # CRDs Established, then discovery refreshed
WAIT_CONTROLLERS = "controllers"  # Deployments rolled out and webhook Services with a ready endpoint
WEBHOOK_KINDS = ("ValidatingWebhookConfiguration", "MutatingWebhookConfiguration")


@dataclass(frozen=True)
class StageSpec:
    name: str
    kinds: frozenset[str] = frozenset()
    wait: str = ""  # WAIT_CRDS | WAIT_CONTROLLERS | ""
    title: str = ""  # how a person watching reads it (trainerctl.ui's stage lines); else its name

    @property
    def shown(self) -> str:
        return self.title or self.name


@dataclass(frozen=True)
class StagePlan:
    """An ordered set of stages; `default` takes unnamed kinds, `admitted` what webhooks intercept."""

    stages: tuple[StageSpec, ...]
    default: str
    admitted: str
    # (group, resource) always sent to `admitted`, even when no rendered webhook names them
    # (a render of only the custom resources onto an installed product).
    always_admitted: frozenset[tuple[str, str]] = frozenset()

    def __iter__(self):
        return iter(self.stages)

    def titles(self, prefix: str = "") -> dict[str, str]:
        """Stage name -> its title, each with `prefix` (an uninstall's "delete ")."""
        return {prefix + spec.name: prefix + spec.shown for spec in self.stages}

    def index(self, name: str) -> int:
        """Position of a stage; unknown names sort after every stage."""
        for i, spec in enumerate(self.stages):
            if spec.name == name:
                return i
        return len(self.stages)

    def stage_of(self, kind: str, group: str, resource: str, rules: "WebhookRules") -> str:
        for spec in self.stages:
            if kind in spec.kinds:
                return spec.name
        if (group, resource) in self.always_admitted or rules.matches(group, resource):
            return self.admitted
        return self.default


@dataclass
class WebhookRules:
    """(group, resource) pairs the rendered admission webhooks intercept."""

    pairs: list[tuple[str, str]] = field(default_factory=list)

    @classmethod
    def from_objects(cls, objects: list[dict]) -> "WebhookRules":
        pairs = []
        for obj in objects:
            if obj.get("kind") not in WEBHOOK_KINDS:
                continue
            for hook in obj.get("webhooks") or []:
                for rule in hook.get("rules") or []:
                    for group in rule.get("apiGroups") or []:
                        for resource in rule.get("resources") or []:
                            pairs.append((group, resource.split("/")[0]))
        return cls(pairs)

    def matches(self, group: str, resource: str) -> bool:
        return any(g in ("*", group) and r in ("*", resource) for g, r in self.pairs)
