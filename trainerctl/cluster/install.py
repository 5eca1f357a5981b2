"""`install`: the Install action: take the install lock, then run Trainer's install pipeline
(trainer/pipeline.py: the preflight, the hand-overs and other steps of trainer/steps/, the staged
apply, prune, record). Everything is read after the lock is taken (a `--dry-run` takes none).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Callable

from trainerctl.cluster.manager.report import Report, RunFailed
from trainerctl.cluster.manager.session import Session
from trainerctl.cluster.operations import lock
from trainerctl.cluster.trainer.pipeline import Installer
from trainerctl.cluster.trainer.policy import LEGACY_MANAGERS
from trainerctl.errors import TrainerctlError
from trainerctl.settings import HISTORY_MAX, LOCK_TIMEOUT, TIMEOUT

__all__ = ["Install", "InstallOptions", "RunFailed", "source_dict"]

# guard(cluster, objects, owner_label=..., allow_breaking=...) -> a report with to_dict(); raises a
# TrainerctlError carrying `.report` to block the upgrade (trainerctl.upgrade.guard).
UpgradeGuard = Callable[..., Any]


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
    allow_breaking: bool = False  # apply even when the upgrade guard finds a blocking CRD change
    legacy_managers: tuple[str, ...] = LEGACY_MANAGERS
    take_over_operator: bool = False  # stop the Go operator and release its CR first (trainer/steps/operator.py)
    take_over_helm: bool = False  # adopt a Helm release of Trainer, then delete its records (trainer/steps/helm.py)
    history_max: int = HISTORY_MAX  # install-history revisions kept (operations/history.py), 0: all
    recipe: dict = dataclasses.field(default_factory=dict)  # how the render was asked for: recorded for a rollback
    rollback_to: int | None = None  # this run renders that revision again (trainerctl rollback)
    upgrade_guard: UpgradeGuard | None = None  # the CRD compatibility check, run before any write
    lock_timeout: float = LOCK_TIMEOUT  # how long to wait for another run's install lock


@dataclass(frozen=True)
class Install(InstallOptions):
    """The install action (Helm's action.Install): its options, and one `run` over a session."""

    def run(self, session: Session, objects: list[dict], source: Any = None) -> Report:
        """Apply `objects` (a render), holding the install lock (operations/lock.py) unless it is a
        dry-run; raises RunFailed (with .report) on failure, exit 4 when another run held the lock
        for all of `lock_timeout`."""
        installer = Installer(session, objects, source_dict(source), self)
        if self.dry_run:
            return installer.run()
        try:
            held = lock.take(session.cluster, session.namespace, "install", timeout=self.lock_timeout,
                             field_manager=session.field_manager, on_message=session.progress.message)
        except TrainerctlError as exc:  # unreachable, forbidden, or another run held it all along
            if getattr(exc, "status", None) == 403 and not self.skip_preflight:
                exc = installer.missing_permission(exc)
            session.progress.close()
            installer.report.error = str(exc)
            raise RunFailed(str(exc), installer.report, exc.exit_code) from None
        with held:
            return installer.run(held)


def source_dict(source: Any) -> dict:
    if source is None:
        return {}
    if dataclasses.is_dataclass(source):
        return {k: v for k, v in dataclasses.asdict(source).items() if v not in (None, "")}
    return dict(source)
