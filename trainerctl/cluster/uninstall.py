"""`uninstall`: delete what carries our ownership label, admission webhooks first, waiting for each step.

CRDs stay unless asked (deleting a CRD deletes every custom resource of it, i.e. users'
TrainJobs); the namespace always stays. Without an inventory (a Go-operator install, or a second
uninstall) every listable type is searched by label, so running it twice is a harmless no-op.
Like install it holds the install lock (operations/install_lock.py) while it deletes, and reads what is
installed only once it holds it.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable

from trainerctl import ui
from trainerctl.cluster.operations import install_history, install_lock
from trainerctl.cluster.client.client import ApiError, Cluster
from trainerctl.cluster.manager.delete import GONE, REFUSED, Proof, Target
from trainerctl.cluster.client.discovery import Discovery
from trainerctl.cluster.client.views import Webhook, WebhookConfiguration
from trainerctl.cluster.manager.listing import CRD, Found, candidate_types, count_custom_resources
from trainerctl.cluster.manager.objects import is_exempt, not_exempt, parse_label
from trainerctl.cluster.client.pool import parallel_map
from trainerctl.cluster.manager.report import ObjectResult, Report, StageResult
from trainerctl.cluster.manager.session import Session
from trainerctl.cluster.manager.stages import WEBHOOK_KINDS, WebhookRules
from trainerctl.cluster.trainer import finalizers
from trainerctl.cluster.trainer.policy import KEEP_ON_UNINSTALL, LEGACY_FINALIZER, STAGES
from trainerctl.errors import InputError
from trainerctl.settings import LOCK_TIMEOUT, TIMEOUT


@dataclass(frozen=True)
class UninstallOptions:
    """What `uninstall` is asked to do: the fields of the same names in Settings (cli/options.py)."""

    delete_crds: bool = False
    keep_history: bool = False  # keep the install history's records (operations/install_history.py)
    yes: bool = False
    dry_run: bool = False
    timeout: float = TIMEOUT
    lock_timeout: float = LOCK_TIMEOUT


def _confirm_crds(cluster: Cluster, discovery: Discovery, crds: list[Found], options: UninstallOptions,
                  confirm: Callable[[str], bool] | None) -> None:
    counts = count_custom_resources(cluster, discovery, crds)
    what = ", ".join(f"{n} {k}" + ("s" if n > 1 else "") for k, n in counts.items() if n) or "no custom resources"
    question = f"deleting {len(crds)} CRD(s) ({', '.join(c.ref.name for c in crds)}) also deletes {what}"
    if options.yes or options.dry_run:
        # Said even when not asked: a CI log must show what the CRDs took with them.
        ui.info(f"uninstall: {question}")
        return
    if confirm is None:
        raise InputError(f"{question}; refusing without --yes (stdin is not a terminal)")
    if not confirm(question + "; continue?"):
        raise InputError("aborted: CRDs not deleted (nothing was removed)")


def _webhooks(raw: dict, kind: str) -> tuple[Webhook, ...]:
    """The webhooks of a live configuration, each by its view. One that does not fit says nothing
    of what it admits, so the order of the deletes cannot be judged: views.Unreadable (exit 3),
    before anything is deleted."""
    return WebhookConfiguration.read(raw, kind, strict=True).webhooks


def _history(session: Session, options: UninstallOptions) -> dict:
    """Keep or delete the install history, as asked; what the report says of it."""
    namespace = session.namespace
    if options.keep_history:
        kept = len(install_history.revisions(session))
        return {"kept": kept, "message": f"{kept} revision(s) kept (--keep-history; `trainerctl history -n "
                                         f"{namespace}` lists them, the next install continues their numbering)"}
    deleted = install_history.delete_all(session, dry_run=options.dry_run)
    verb = "would be deleted" if options.dry_run else "deleted"
    return {"deleted": deleted, "message": f"{deleted} revision(s) {verb} (--keep-history keeps them)"}


@dataclass(frozen=True)
class Uninstall(UninstallOptions):
    """The uninstall action: its options, and one `run` over a session; what it deletes is what
    carries the session's ownership label."""

    def run(self, session: Session, confirm: Callable[[str], bool] | None = None) -> Report:
        """`confirm(question)` asks before CRDs go; None: not a terminal."""
        report = Report("uninstall", dry_run=self.dry_run, namespace=session.namespace)
        if self.dry_run:
            return _uninstall(session, self, confirm, report)
        # No namespace, no lock to take there (nobody could hold one): uninstall does not create it.
        with install_lock.take(session, "uninstall", timeout=self.lock_timeout, on_message=session.progress.message,
                       create_missing_namespace=False) as held:
            report.lock = {} if held.unlocked else held.acquired.to_dict()
            return _uninstall(session, self, confirm, report, held.check)


def _uninstall(session: Session, options: UninstallOptions, confirm: Callable[[str], bool] | None, report: Report,
               check_lock: Callable[[], None] = lambda: None) -> Report:
    start = time.monotonic()
    cluster, namespace, owner_label, progress = session.cluster, session.namespace, session.owner_label, session.progress
    discovery = session.discovery
    discovery.refresh()
    resources = session.resources
    inventory = resources.read_inventory()
    types = [r for r in candidate_types(discovery, inventory) if (r.group, r.kind) not in KEEP_ON_UNINSTALL]
    found = [f for f in resources.find_labelled(types) if not is_exempt(f.meta)]
    crds: list[Found] = []
    if options.delete_crds:
        crds = [f for f in resources.find_labelled([discovery.preferred(*CRD)])
                if not is_exempt(f.meta)]
        if crds:
            _confirm_crds(cluster, discovery, crds, options, confirm)
    report.source = inventory.source if inventory else {}

    # Stage of each object: from the inventory, else the same policy install uses, with the
    # webhooks we are about to delete deciding what they admit.
    rules = WebhookRules([pair for f in found if f.ref.kind in WEBHOOK_KINDS
                          for hook in _webhooks(cluster.request("GET", f.path), f.ref.kind) for pair in hook.rules])

    def stage(f: Found) -> str:
        entry = inventory.entries.get(f.ref.key) if inventory else None
        return entry.stage if entry else STAGES.stage_of(f.ref.kind, f.res.group, f.res.resource, rules)

    deadline = time.monotonic() + options.timeout
    groups: dict[str, list[Found]] = {}
    for f in found:
        groups.setdefault(stage(f), []).append(f)
    if crds:
        groups.setdefault("crds", []).extend(crds)
    progress.expect(sum(len(v) for v in groups.values()))
    progress.name_stages(STAGES.titles("delete "))
    label_key, label_value = parse_label(owner_label)
    ours = Proof(owner_label, label=label_key, value=label_value, namespace=namespace, rule=not_exempt)
    # Our admission webhooks first: every later step may write what they admit (the finalizer
    # strips are UPDATEs), and their backend is what uninstall tears down, or the broken part the
    # user is uninstalling to get rid of. Then runtimes and the rest in reverse apply order; CRDs last.
    def admission_first(s: str) -> tuple[bool, bool, int]:
        return s == "crds", not any(f.ref.kind in WEBHOOK_KINDS for f in groups[s]), -STAGES.index(s)

    order = sorted(groups, key=admission_first)
    for name in order:
        check_lock()
        t = time.monotonic()
        items = sorted(groups[name], key=lambda f: f.ref)
        if name == "crds" and not options.dry_run:
            released = finalizers.release_all(cluster, discovery, items)
            if released:
                ui.info(f"uninstall: removed the legacy finalizer {LEGACY_FINALIZER} from {released} object(s), "
                        "which no running controller would remove")
        progress.stage(f"delete {name}", len(items))

        def one(f: Found, stage_name: str = name) -> ObjectResult:
            r = ObjectResult(f.ref.kind, f.ref.name, f.ref.namespace, f.ref.group, stage_name, "deleted")
            try:
                done = resources.delete_and_wait(Target.of(f.res, f.ref.namespace, f.ref.name), ours, deadline,
                                                 dry_run=options.dry_run, strip_finalizers=(LEGACY_FINALIZER,))
                if done.done == GONE:
                    r.action, r.message = "unchanged", "already gone"
                elif done.done == REFUSED:
                    r.action, r.message = "skipped", f"not deleted: {done.why}"
            except ApiError as exc:
                r.action, r.message = "failed", str(exc)
            progress.object_done(r.display, r.action, r.message)
            return r

        report.objects.extend(parallel_map(one, items))
        report.stages.append(StageResult(name, time.monotonic() - t, len(items)))
    if not options.dry_run and not report.failed:
        check_lock()
        resources.delete_inventory()
    if not report.failed:
        report.history = _history(session, options)
    progress.close(ok=not report.failed)
    report.seconds = time.monotonic() - start
    return report
