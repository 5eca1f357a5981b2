"""`install`: the Install action: take the install lock, then run Trainer's install pipeline
(trainer/pipeline.py: the preflight, the hand-overs and other steps of trainer/steps/, the staged
apply, prune, record). Everything is read after the lock is taken (a `--dry-run` takes none).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from trainerctl.cluster.manager.report import Report, RunFailed, source_dict
from trainerctl.cluster.manager.session import Session
from trainerctl.cluster.operations import install_lock
from trainerctl.cluster.trainer.install_options import InstallOptions
from trainerctl.cluster.trainer.pipeline import Installer
from trainerctl.errors import TrainerctlError

__all__ = ["Install", "InstallOptions", "RunFailed", "source_dict"]


@dataclass(frozen=True)
class Install(InstallOptions):
    """The install action (Helm's action.Install): its options, and one `run` over a session."""

    def run(self, session: Session, objects: list[dict], source: Any = None) -> Report:
        """Apply `objects` (a render), holding the install lock (operations/install_lock.py) unless it is a
        dry-run; raises RunFailed (with .report) on failure, exit 4 when another run held the lock
        for all of `lock_timeout`."""
        installer = Installer(session, objects, source_dict(source), self)
        installer.ask_first()  # what reads no cluster: neither a held lock nor the cluster hides it
        if self.dry_run:
            return installer.run()
        try:
            held = install_lock.take(session, "install", timeout=self.lock_timeout, on_message=session.progress.message)
        except TrainerctlError as exc:  # unreachable, forbidden, or another run held it all along
            if getattr(exc, "status", None) == 403 and not self.skip_preflight:
                exc = installer.missing_permission(exc)
            session.progress.close()
            installer.report.error = str(exc)
            raise RunFailed(str(exc), installer.report, exc.exit_code) from None
        with held:
            return installer.run(held)

