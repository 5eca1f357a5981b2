"""What Install does that is Trainer's, or a previous installer's, as steps that plug into it.

The install pipeline (pipeline.py) runs the engine: plan, apply stage by stage, wait, prune,
record. A Step (base.py) is called at fixed points of it (each hook does nothing unless the step
overrides it), and `for_install` says which steps one run has: the Go operator's hand-over
(operator.py), Helm's (helm.py), what a `kubectl apply` install left (kubectl.py) and the legacy
runtime finalizer (finalizer.py). A step sees the run through `Run`, and changes the run only
through its methods and the report it adds to.
"""

from __future__ import annotations

from trainerctl.cluster.trainer.checklist import Facts
from trainerctl.cluster.trainer.install_options import InstallOptions
from trainerctl.cluster.trainer.steps.base import Run, Step
from trainerctl.cluster.trainer.steps.finalizer import LegacyFinalizers
from trainerctl.cluster.trainer.steps.helm import HelmHandOver
from trainerctl.cluster.trainer.steps.kubectl import KubectlLeftovers
from trainerctl.cluster.trainer.steps.operator import GoOperatorHandOver

__all__ = ["Run", "Step", "for_install"]


def for_install(facts: Facts, options: InstallOptions) -> list[Step]:
    """The steps of one install run, from what its preflight read (in the order their hooks run)."""
    operator = [GoOperatorHandOver()] if options.take_over_operator and facts.operator().present else []
    return [*operator, HelmHandOver(facts), KubectlLeftovers(facts.release()), LegacyFinalizers()]
