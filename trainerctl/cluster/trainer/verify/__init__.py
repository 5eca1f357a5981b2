"""`verify`: prove the installed Trainer works, tier by tier, and name the first broken link.

One action over the cluster connection: `Verify(cluster, options).run()` returns a VerifyReport
(result.py). The permissions the requested tiers need are asked first (permissions.py): a
missing one stops verify before it creates anything. The tiers, one module each, run in order,
and a tier whose link is broken stops the tiers that build on it:
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

from trainerctl.cluster.client.client import ApiError, Cluster
from trainerctl.cluster.trainer.verify import admission, consumers, permissions, pods, reconcile, run
from trainerctl.cluster.trainer.verify.owned import Owned, sweep
from trainerctl.cluster.trainer.verify.result import ERROR, FAIL, OK, WARN, Result, VerifyReport
from trainerctl.cluster.trainer.verify.runtimes import default_runtime, find, forbidden_line, listed

__all__ = ["Verify", "VerifyOptions", "VerifyReport"]


@dataclass(frozen=True)
class VerifyOptions:
    namespace: str  # where Trainer is installed
    job_namespace: str | None = None  # the user's namespace to verify in; None: verify makes one
    timeout: float = 300.0  # how long each wait may take
    runtime: str | None = None  # the runtime of the reconcile and run tiers (default: the first torch one)
    run: bool = False  # the run tier too
    run_image: str | None = None  # the run's image instead of the runtime's


@dataclass
class Verify:
    cluster: Cluster
    options: VerifyOptions

    def run(self) -> VerifyReport:
        report = VerifyReport()
        owned = Owned(self.cluster)
        report.cleanup.extend(sweep(self.cluster, self.options.job_namespace))
        interrupted = False
        try:
            self._tiers(report, owned)
            for result in consumers.check(self.cluster, self.options.namespace):
                report.add(result)
        except KeyboardInterrupt:
            interrupted = True
            self.cluster.resume()  # the interrupt aborted the requests; the deletes must still go out
            raise
        finally:
            report.cleanup.extend(owned.cleanup(wait=not interrupted))
        return report

    def _tiers(self, report: VerifyReport, owned: Owned) -> None:
        opts = self.options
        wanted = permissions.needs(opts.job_namespace or owned.name("ns"), own_namespace=opts.job_namespace is None,
                                   job_namespace=opts.job_namespace is not None, run=opts.run)
        if _failed(report, [permissions.check(self.cluster, wanted)], keep_ok=False):
            return
        unreadable: list[str] = []
        try:
            runtimes = listed(self.cluster, opts.job_namespace, unreadable)
        except ApiError as exc:
            report.add(Result("admission", "runtimes", ERROR if exc.status in (401, 403, 404) else FAIL,
                              forbidden_line(exc, "list", "ClusterTrainingRuntimes and TrainingRuntimes")
                              if exc.status != 404 else "Trainer's CRDs are not installed (trainerctl install)"))
            return
        for line in unreadable:  # Trainer cannot use it either; the others are still tried
            report.add(Result("admission", "runtimes", WARN, f"{line} (skipped)"))
        namespace = opts.job_namespace
        if namespace is None:
            try:
                namespace = owned.create_namespace()
            except ApiError as exc:
                report.add(Result("reconcile", "namespace", ERROR,
                                  forbidden_line(exc, "create", "a Namespace") + "; or name one with --job-namespace"))
                return
        if _failed(report, admission.check(self.cluster, owned, runtimes, namespace)):
            return
        chosen = find(runtimes, opts.runtime) if opts.runtime else default_runtime(runtimes)
        if chosen is None:
            report.add(Result("reconcile", "runtime", ERROR, f"--runtime {opts.runtime}: no ClusterTrainingRuntime "
                                                             f"or TrainingRuntime in {namespace} of that name"))
            return
        if _failed(report, [reconcile.check(self.cluster, owned, chosen, namespace, opts.timeout)]):
            return
        if opts.job_namespace and _failed(report, pods.check(self.cluster, runtimes, namespace, owned.labels)):
            return
        if opts.run:
            _failed(report, run.check(self.cluster, owned, chosen, namespace, opts.timeout, opts.run_image))


def _failed(report: VerifyReport, results: list[Result], keep_ok: bool = True) -> bool:
    for r in results:
        if keep_ok or r.status != OK:
            report.add(r)
    return any(r.status not in (OK, WARN) for r in results)

