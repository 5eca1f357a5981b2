"""The upgrade check: `check` is pure (plain dicts in, report out); `check_cluster` reads the live
side from the API server. Besides the CRD diff, every existing object of a CRD the target changes
is validated against the target's schema (stored.py), and each TrainJob that blocks gets its way
through (trainer_migration.py)."""

from __future__ import annotations

from trainerctl.cluster.manager.objects import label_selector
from trainerctl.upgrade import trainer_migration
from trainerctl.upgrade.crd_diff import Finding, diff_crds, is_crd, sort_findings
from trainerctl.upgrade.live import list_custom_objects, read_live_crds, versions_to_read
from trainerctl.upgrade.report import UpgradeReport
from trainerctl.upgrade.stored import check_objects, installs_own
from trainerctl.upgrade.usage import find_usages


def check(live_crds: list[dict], target_crds: list[dict], live_resources: dict[str, list[dict]],
          unread: list[Finding] | None = None, *, owner_label: str | tuple[str, str] | None = None) -> UpgradeReport:
    """live_resources maps a CRD name to the objects of that CRD currently on the cluster;
    target_crds may be the whole target render. An object the install replaces (the render has
    it) or prunes (it carries owner_label) blocks nothing: the install's own content wins."""
    live_crds = [c for c in live_crds if is_crd(c)]
    target_names = {c["metadata"]["name"] for c in target_crds if is_crd(c)}
    findings = diff_crds(live_crds, target_crds)
    ours = installs_own(target_crds, owner_label)
    object_findings, rejections = check_objects(live_crds, target_crds, live_resources, ours)
    report = UpgradeReport(
        findings=sort_findings([*findings, *object_findings, *(unread or [])]),
        usages=find_usages(findings, live_resources, ours),
        compared=sorted(c["metadata"]["name"] for c in live_crds if c["metadata"]["name"] in target_names),
        rejections=rejections,
    )
    report.advice, report.migrated = trainer_migration.plan(report, live_resources, target_crds)
    return report


def check_cluster(cluster, target_objects: list[dict], *, owner_label: str | tuple[str, str] | None = None) -> UpgradeReport:
    """Read the installed CRDs the target defines (plus, with owner_label, CRDs we installed
    before that the target no longer has); list the objects of each CRD version whose schema the
    target changes (bounded: live.list_custom_objects).

    cluster: a trainerctl.cluster.client.client.Cluster (connect()).
    """
    owner_label = label_selector(owner_label) if owner_label else None  # one spelling from here on
    live_crds = read_live_crds(cluster, target_objects, owner_label=owner_label)
    findings = diff_crds(live_crds, target_objects)
    live_resources, unread = list_custom_objects(cluster, live_crds,
                                                 versions_to_read(live_crds, target_objects, findings))
    return check(live_crds, target_objects, live_resources, unread, owner_label=owner_label)
