"""`trainerctl upgrade-check`: what installing the target render would break on this cluster."""

from __future__ import annotations

from trainerctl.cli import command
from trainerctl.cli.flags import CLUSTER, RENDER, SOURCE, takes
from trainerctl.errors import EXIT_FAILED, TrainerctlError
from trainerctl.settings import Settings


# The same flags, and the same target (a render or -f FILE), as install and diff: upgrade-check
# answers "what would `install` with these flags do to my TrainJobs?".
@command("upgrade-check")
@takes(*CLUSTER, *SOURCE, *RENDER, "namespace", "filename", "output", "write_migrated")
def upgrade_check(s: Settings) -> None:
    """Say what installing the target would break on this cluster.

    Compare the installed CRDs with the target render's CRDs: removed versions and fields,
    newly required fields, new validation rules, and the TrainJobs and runtimes affected; validate
    every existing object of a changed CRD against the target's schema.

    Exit code 0 when nothing blocks the upgrade, 1 when something does, 2 or 3 on errors.
    """
    from trainerctl import ui
    from trainerctl.cli.output import SUMMARY_FORMATS, check_output, emit, errors_above_one
    from trainerctl.cli.options import read_first, session, target
    from trainerctl.cluster.upgrade_check import UpgradeCheck
    from trainerctl.upgrade import migrated_dir

    output = check_output(s.output, SUMMARY_FORMATS)
    folder = migrated_dir.check_dir(s.write_migrated) if s.write_migrated is not None else None

    def check():
        given = read_first(s)
        on = session(s)
        goal = target(on, s, given)
        return UpgradeCheck().run(session(s, on.cluster, owner_label=goal.owner_label), goal.objects)

    report = errors_above_one(check)
    emit(report, output)
    if folder is not None:
        header = ("# Converted by `trainerctl upgrade-check --write-migrated` to the API of the upgrade's target;\n"
                  "# re-create it after the upgrade (kubectl create -f, or apply).\n")
        written, skipped = migrated_dir.write(folder, report.migrated, header)
        for line in skipped:
            ui.warn(f"--write-migrated: {line}")
        ui.info(f"upgrade-check: wrote {len(written)} converted TrainJob(s) to {folder}")
        for path in written:
            ui.info(f"  {path}")
    if report.blocking:
        raise TrainerctlError(f"upgrade blocked by {len(report.blocking_findings)} change(s) listed above; "
                              "install refuses it unless --allow-breaking", exit_code=EXIT_FAILED)
