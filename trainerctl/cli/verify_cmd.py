"""`verify`: prove the installed Trainer works, tier by tier (docs/verify.md)."""

from __future__ import annotations

import shlex
from typing import Callable

from trainerctl.cli import command
from trainerctl.cli.flags import CLUSTER, takes
from trainerctl.errors import TrainerctlError
from trainerctl.settings import Settings, setting_of


@command("verify")
@takes(*CLUSTER, "namespace", "job_namespace", "runtime", "run", "run_image", "timeout", "output")
def verify_cmd(s: Settings) -> None:
    """Prove the install works, naming the first broken link.

    The tiers (docs/verify.md):

    Admission: a dry-run TrainJob on every runtime reaches Trainer's webhooks; a failure names the webhook, its Service and the cause (no endpoints, connection refused, timed out, x509, denied).

    Reconcile (the default tier): a suspended TrainJob gets its JobSet within --timeout, admitted by JobSet's webhooks; a failure names which did not happen and what the controllers said.

    Namespace (--job-namespace NS): each runtime's pod templates are dry-run created as Pods in NS, so Pod Security, ResourceQuota, LimitRange and policy webhooks name the runtime they would reject, and why.

    Run (--run): a tiny CPU TrainJob runs to completion on --runtime (default: the first torch runtime), its image overridable (--run-image); each phase is timed, and a failure names the cause from the pods: pull, crash, unschedulable, quota, Pod Security.

    Everything verify creates carries the label verify.trainerctl.io/run and is deleted at the end, on failure and on Ctrl-C or SIGTERM; a later verify deletes what a killed one left. Permissions are asked first (SelfSubjectAccessReview): a missing one is one line naming it and the tier that needs it, exit 3, nothing created. Needed: list runtimes; create TrainJobs (dry-run and suspended) and get JobSets; create and delete a Namespace, or --job-namespace (delete TrainJobs and dry-run Pods there); with --run, get TrainJobs and list Pods and Jobs. Asked for only when allowed: Deployments and the SDK's ConfigMap (consumers); webhook configurations, Services, EndpointSlices, pods, events and logs (to explain a failure).

    Exit 0 every check passed, 1 a check failed, 3 a check could not run (a missing permission), 4 a wait timed out with no cause found.
    """
    from trainerctl.cli.options import session
    from trainerctl.cli.output import check_output, emit
    from trainerctl.cluster.trainer.verify import Verify

    output = check_output(s.output)
    report = s.options_for(Verify, run_job=s.run).run(session(s))
    emit(report, output)
    if report.exit_code:
        raise TrainerctlError(report.error_line(), report.exit_code)


def verify_after(s: Settings, on) -> Callable[[], None] | None:
    """After an install or rollback over the session `on`: with --verify (not a dry-run) verify's
    default tiers, their lines on stderr (stdout holds the run's report), their exit codes; else on
    a terminal that saw the stages (the session's progress) the verify command to run next."""
    if s.dry_run:
        return None
    if s.verify:
        return lambda: _verify(s, on)

    def next_command() -> None:
        from trainerctl.cli.output import next_step

        words = ["trainerctl", "verify", "-n", on.namespace]
        for name in CLUSTER:  # the cluster this run used, when a flag named it
            if s.is_set(name):
                words += [setting_of(name).flag, getattr(s, name)]
        next_step(on.progress, shlex.join(words))

    return next_command


def _verify(s: Settings, on) -> None:
    from trainerctl import ui
    from trainerctl.cli.options import session
    from trainerctl.cluster.trainer.verify import Verify

    report = s.options_for(Verify, run_job=False).run(session(s, on.cluster, namespace=on.namespace))
    for line in report.text().splitlines():
        ui.info(line)
    if report.exit_code:
        raise TrainerctlError(report.error_line(), report.exit_code)
