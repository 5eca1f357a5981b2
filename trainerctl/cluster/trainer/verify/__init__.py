"""`verify`: prove the installed Trainer works, tier by tier, and name the first broken link.

One action over the session (cluster/manager/session.py), as install's: `Verify(...).run(session)`
returns a VerifyReport (result.py); the session says where Trainer is installed. The permissions the requested tiers need are asked first (permissions.py): a
missing one stops verify before it creates anything. Then the installed controllers (controllers.py):
one that does not work (no replica available, or its log names why) is the first broken link. The
tiers, one module each, run in order, and a tier whose link is broken stops the tiers that build on it:
- admission (admission.py): a dry-run TrainJob on every runtime reaches Trainer's webhooks;
- reconcile (reconcile.py): the controller makes a suspended TrainJob's JobSet, JobSet admits it;
- namespace (pods.py, with a job namespace): each runtime's pods would be admitted there;
- run (run.py, when asked): a tiny TrainJob runs to completion, phase by phase;
- consumers (consumers.py): Kueue and the SDK against the Trainer version each needs (warnings).
Everything verify creates carries its label and is deleted at the end, on failure and on an
interrupt; what a killed verify left is deleted first (owned.py).
"""

from __future__ import annotations

from dataclasses import dataclass

from trainerctl.cluster.client.client import ApiError
from trainerctl.cluster.manager.session import Session
from trainerctl.cluster.trainer.verify import admission, consumers, controllers, permissions, pods, reconcile, run
from trainerctl.cluster.trainer.verify.owned import Owned, sweep
from trainerctl.cluster.trainer.verify.result import ERROR, FAIL, OK, WARN, Result, VerifyReport
from trainerctl.cluster.trainer.verify.runtimes import default_runtime, find, forbidden_line, listed

__all__ = ["Verify", "VerifyReport"]


@dataclass(frozen=True)
class Verify:
    timeout: float  # how long each wait may take (the settings' default: one definition)
    job_namespace: str | None = None  # the user's namespace to verify in; None: verify makes one
    runtime: str | None = None  # the runtime of the reconcile and run tiers (default: the first torch one)
    run_job: bool = False  # the run tier too (--run)
    run_image: str | None = None  # the run's image instead of the runtime's

    def run(self, session: Session) -> VerifyReport:
        cluster = session.cluster
        report = VerifyReport()
        owned = Owned(cluster)
        report.cleanup.extend(sweep(cluster, self.job_namespace))
        interrupted = False
        try:
            self._tiers(session, report, owned)
            for result in consumers.check(session):
                report.add(result)
        except KeyboardInterrupt:
            interrupted = True
            cluster.resume()  # the interrupt aborted the requests; the deletes must still go out
            raise
        finally:
            report.cleanup.extend(owned.cleanup(wait=not interrupted))
        return report

    def _tiers(self, session: Session, report: VerifyReport, owned: Owned) -> None:
        cluster = session.cluster
        wanted = permissions.needs(self.job_namespace or owned.name("ns"), own_namespace=self.job_namespace is None,
                                   job_namespace=self.job_namespace is not None, run=self.run_job)
        if _failed(report, [permissions.check(cluster, wanted)], keep_ok=False):
            return
        if _failed(report, controllers.unhealthy(session)):
            return
        unreadable: list[str] = []
        try:
            runtimes = listed(cluster, self.job_namespace, unreadable)
        except ApiError as exc:
            report.add(Result("admission", "runtimes", ERROR if exc.status in (401, 403, 404) else FAIL,
                              forbidden_line(exc, "list", "ClusterTrainingRuntimes and TrainingRuntimes")
                              if exc.status != 404 else "Trainer's CRDs are not installed (trainerctl install)"))
            return
        for line in unreadable:  # Trainer cannot use it either; the others are still tried
            report.add(Result("admission", "runtimes", WARN, f"{line} (skipped)"))
        namespace = self.job_namespace
        if namespace is None:
            try:
                namespace = owned.create_namespace()
            except ApiError as exc:
                report.add(Result("reconcile", "namespace", ERROR,
                                  forbidden_line(exc, "create", "a Namespace") + "; or name one with --job-namespace"))
                return
        if _failed(report, admission.check(cluster, owned, runtimes, namespace)):
            return
        chosen = find(runtimes, self.runtime) if self.runtime else default_runtime(runtimes)
        if chosen is None:
            report.add(Result("reconcile", "runtime", ERROR, f"--runtime {self.runtime}: no ClusterTrainingRuntime "
                                                             f"or TrainingRuntime in {namespace} of that name"))
            return
        if _failed(report, [reconcile.check(cluster, owned, chosen, namespace, self.timeout)]):
            return
        if self.job_namespace and _failed(report, pods.check(cluster, runtimes, namespace, owned.labels)):
            return
        if self.run_job:
            _failed(report, run.check(cluster, owned, chosen, namespace, self.timeout, self.run_image))


def _failed(report: VerifyReport, results: list[Result], keep_ok: bool = True) -> bool:
    for r in results:
        if keep_ok or r.status != OK:
            report.add(r)
    return any(r.status not in (OK, WARN) for r in results)

