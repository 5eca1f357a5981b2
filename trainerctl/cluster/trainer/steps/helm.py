"""Helm's hand-over (`--take-over-helm`): what the preflight's Helm check found that is not a
refusal is said first; the release's objects are adopted by the apply (Helm's field managers taken
over, its marks removed), what only the release names is pruned when the live object proves it
the release's, and the release's records are deleted last, so Helm no longer knows it."""

from __future__ import annotations

import dataclasses
import time

from trainerctl.cluster.client.client import object_path
from trainerctl.cluster.manager.apply import Planned, get_meta
from trainerctl.cluster.manager.inventory_configmap import Entry
from trainerctl.cluster.manager.objects import Ref, parse_label
from trainerctl.cluster.manager.prune import PruneRules
from trainerctl.cluster.manager.report import ObjectResult, RunFailed, StageResult
from trainerctl.cluster.operations import helm_releases
from trainerctl.cluster.trainer import helm_handover
from trainerctl.cluster.trainer.checklist import Facts
from trainerctl.cluster.trainer.policy import NEVER_PRUNE
from trainerctl.cluster.trainer.steps.base import Run, Step
from trainerctl.errors import InputError


class HelmHandOver(Step):
    def __init__(self, facts: Facts):
        self.facts = facts
        self.release = facts.release()  # None: no Helm release of Trainer here
        own = facts.own_previous()
        # What our own record (or the Go operator's install) named before any Helm hand-over.
        self.own_record = frozenset(own.entries if own else ())
        if self.release is not None:
            # What only the release names is proven its at the prune, on the live object; until then
            # it is not written to our record (an interrupted run reads the release again).
            self.unrecorded = frozenset(self.release.entries) - self.own_record
            self.more_legacy = helm_handover.helm_managers

    def _claim(self, ref: Ref, meta: dict):
        """What our own record names is ours by label; what only the release names is its only
        when the live object proves it (helm_handover.ReleaseObjects.claim)."""
        return None if ref.key in self.own_record else self.release.claim(ref, meta)

    def prepared(self, run: Run, planned: list[Planned]) -> None:
        """A hand-over needs --prune (a record that does not fit was refused by the Helm check)."""
        state = self.facts.helm()
        if not state.present:
            return
        state.check_namespace(run.session.namespace)
        if run.options.take_over_helm and not run.options.prune:
            raise InputError(f"{helm_handover.HAND_OVER_FLAG} and --no-prune: the hand-over prunes what the Helm "
                             "release had and the render does not (then forgets the release); drop --no-prune")

    def after_apply(self, run: Run, planned: list[Planned]) -> None:
        """Say which rendered objects were the release's, and remove Helm's marks our apply left
        (a mark another field manager also set, e.g. a `kubectl annotate`)."""
        if self.release is None:
            return
        s, dry = run.session, run.dry_run
        for p in planned:
            release = next((r for r in self.facts.helm().releases if r.owns((p.live or {}).get("metadata") or {})),
                           None)
            result = run.result_of(p)
            if release is None or result is None or result.action == "failed":
                continue
            notes = [helm_handover.adopted_note(release)]
            after = (p.applied or {}).get("metadata")
            if after is not None and helm_releases.ownership_patch(after):
                if helm_handover.unmark(s.cluster, p.path, after, field_manager=s.field_manager, dry_run=dry):
                    notes.append(f"Helm's ownership marks {'would be ' if dry else ''}removed")
            for note in notes:
                result.add_note(note)

    def prune_rules(self, rules: PruneRules) -> PruneRules:
        if self.release is None:
            return rules
        return dataclasses.replace(rules, keep=helm_handover.keeping_helm_policy(rules.keep), owned=self._claim)

    def after_prune(self, run: Run, gone: dict[str, Entry], results: list[ObjectResult], retry: set[str]) -> None:
        """What the release had that is neither rendered nor pruned: CRDs (never pruned) lose
        Helm's marks; what is kept for now (a runtime in use) also gets our label, so a later
        install prunes it like any object of ours."""
        if self.release is None:
            return
        s, dry = run.session, run.dry_run
        by_key = {r.key: r for r in results}
        for key, entry in sorted(gone.items()):
            ref = Ref.from_key(key)
            if key not in self.release.entries:
                continue
            never = (ref.group, ref.kind) in NEVER_PRUNE
            if not never and key not in retry:
                continue
            res = s.discovery.lookup(entry.api_version, ref.kind)
            path = res and object_path(res.group, res.version, res.resource, ref.namespace or None, ref.name)
            live = get_meta(s.cluster, path) if path else None
            claim = self._claim(ref, live.get("metadata") or {}) if live is not None else None
            if claim is None or not claim.owner:
                continue
            marked = helm_handover.unmark(s.cluster, path, live["metadata"], dry_run=dry,
                                          label=None if never else parse_label(s.owner_label),
                                          field_manager=s.field_manager)
            note = f"Helm's marks {'would be ' if dry else ''}removed" if marked else ""
            if never:
                result = ObjectResult(ref.kind, ref.name, ref.namespace, ref.group, entry.stage, "skipped",
                                      f"not pruned: {ref.kind} is never pruned")
                result.add_note(note)
                run.done(result)
            elif key in by_key and by_key[key].action == "skipped":
                by_key[key].add_note(f"{'would be ' if dry else ''}labelled as ours, pruned by a later install")

    def after_record(self, run: Run) -> None:
        """Last: delete the release's records, so Helm no longer knows it (helm list, uninstall)."""
        if self.release is None:
            return
        run.check_lock()
        run.enter("handover")
        t = time.monotonic()
        results = helm_handover.delete_records(run.session.cluster, self.facts.helm(), dry_run=run.dry_run,
                                               on_done=lambda r: run.done(r, add=False))
        run.report.objects.extend(results)
        run.report.stages.append(StageResult("handover", time.monotonic() - t, len(results)))
        failed = [r for r in results if r.action == "failed"]
        if failed:
            raise RunFailed(f"{failed[0].display}: {failed[0].message}; re-run with {helm_handover.HAND_OVER_FLAG} "
                            "to finish the hand-over", run.report)
