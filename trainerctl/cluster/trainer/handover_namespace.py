"""Where a hand-over installs when the user named no namespace (-n or trainerctl.yaml): where the
Go operator installed Trainer (its CR's spec.appNamespace), or the namespace of the one Helm
release of the kubeflow-trainer chart. Asked before the render, which is made for that namespace."""

from __future__ import annotations

from trainerctl.cluster.manager.session import Session
from trainerctl.cluster.operations import helm_releases
from trainerctl.cluster.trainer import go_operator
from trainerctl.cluster.trainer.helm_handover import trainer_releases


def handover_namespace(session: Session, *, take_over_operator: bool, take_over_helm: bool) -> str | None:
    """The namespace the hand-over asked for found on the cluster; None to keep the session's
    (no hand-over, none found, or Helm releases in several namespaces)."""
    if take_over_operator:
        return go_operator.OperatorState(cr=go_operator.read_cr(session.cluster)).app_namespace
    if take_over_helm:
        skipped: list[str] = []
        found = {r.namespace for r in trainer_releases(helm_releases.find_releases(session.cluster, session.namespace, skipped),
                                                         unreadable=skipped).releases}
        return found.pop() if len(found) == 1 else None
    return None
