"""What `install` is asked to do (Helm's action.Install fields): the options the install pipeline,
its checks and its steps read. They live with that policy so the pipeline, the checklist and the
steps can name their type; cluster/install.py's `Install` action is made of them."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Callable, Protocol

from trainerctl.cluster.trainer.policy import LEGACY_MANAGERS
from trainerctl.defaults import HISTORY_MAX, LOCK_TIMEOUT, TIMEOUT

# guard(cluster, objects, owner_label=..., allow_breaking=...) -> a report with to_dict(); raises a
# TrainerctlError carrying `.report` to block the upgrade (trainerctl.upgrade.guard).
UpgradeGuard = Callable[..., Any]


class ImageCheck(Protocol):
    """Whether every image exists at its registry (trainerctl.images.pinning.ImageCheck): one line
    per image that is missing or cannot be checked; `flag`, how the user asked for it."""

    flag: str

    def __call__(self, objects: list[dict]) -> list[str]: ...


@dataclass(frozen=True)
class InstallOptions:
    """What `install` is asked to do: the fields of the same names in Settings (cli/options.py);
    the namespace, ownership label and field manager are the session's (manager/session.py)."""

    force_conflicts: bool = False
    dry_run: bool = False
    wait: bool = True
    timeout: float = TIMEOUT
    prune: bool = True
    recreate: bool = True
    skip_preflight: bool = False
    allow_breaking: bool = False  # apply even when the upgrade guard blocks, or a consumer needs a newer Trainer
    legacy_managers: tuple[str, ...] = LEGACY_MANAGERS
    take_over_operator: bool = False  # stop the Go operator and release its CR first (trainer/steps/operator.py)
    take_over_helm: bool = False  # adopt a Helm release of Trainer, then delete its records (trainer/steps/helm.py)
    history_max: int = HISTORY_MAX  # install-history revisions kept (operations/install_history.py), 0: all
    recipe: dict = dataclasses.field(default_factory=dict)  # how the render was asked for: recorded for a rollback
    rollback_to: int | None = None  # this run renders that revision again (trainerctl rollback)
    upgrade_guard: UpgradeGuard | None = None  # the CRD compatibility check, run before any write
    lock_timeout: float = LOCK_TIMEOUT  # how long to wait for another run's install lock
    image_check: ImageCheck | None = None  # ask each image's registry first (the checklist's `images`)


__all__ = ["ImageCheck", "InstallOptions", "UpgradeGuard"]
