"""Delete what the previous install applied and this one no longer renders.

An object is pruned only when it is in the previous inventory AND is provably the previous
install's AND is not exempted by `trainerctl.io/managed: "false"` AND the caller's `keep` rule does
not hold it back. Kinds in `never` are never pruned.

Provably the previous install's: for what our own record names, the ownership label; for what a
previous owner being taken over names (a Helm release, whose record anyone allowed to create a
Secret could have written), the caller's `owned` rule alone, from the live object's marks. Our
label proves nothing there: a user's object may carry it (a copy of ours, in another namespace).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable

from trainerctl.cluster.manager.apply import get_meta
from trainerctl.cluster.client.client import ApiError, Cluster
from trainerctl.cluster.manager.delete import REFUSED, Proof, Target, delete_and_wait
from trainerctl.cluster.client.discovery import Discovery, split_api_version
from trainerctl.cluster.manager.inventory_configmap import Entry
from trainerctl.cluster.manager.objects import EXEMPT, Ref, is_exempt, not_exempt, parse_label
from trainerctl.cluster.client.pool import parallel_map
from trainerctl.cluster.manager.report import ObjectResult
from trainerctl.cluster.manager.stages import StagePlan

# keep(ref, path, live metadata, dry_run) -> why it is kept ("" to prune it)
KeepRule = Callable[[Ref, str, dict, bool], str]


@dataclass(frozen=True)
class Claim:
    """A previous owner's claim on an object, judged on the live object: whose it provably was
    (`owner`), or why it is not provably theirs (`refused`, then it is listed and left alone)."""

    owner: str = ""
    refused: str = ""


# owned(ref, live metadata) -> None for what our own record names (our label decides), else the
# previous owner's Claim, which alone decides
OwnedRule = Callable[[Ref, dict], "Claim | None"]


@dataclass
class PruneRules:
    stages: StagePlan  # pruned in reverse stage order
    never: frozenset[tuple[str, str]] = frozenset()  # (group, kind) never pruned
    keep: KeepRule | None = None
    strip_finalizers: tuple[str, ...] = ()  # removed before a delete (see apply.delete_and_wait)
    kept_prefix: str = "kept"  # how a kept object's message starts (what stays on record)
    owned: OwnedRule | None = None


def resolve_entry(discovery: Discovery, ref: Ref, entry: Entry):
    """The resource for an inventory entry; None when its kind is no longer served."""
    res = discovery.lookup(entry.api_version, ref.kind)
    if res is None or not res.served:
        res = discovery.preferred(split_api_version(entry.api_version)[0], ref.kind)
    return res


class PruneMethods:
    """Prune: a method of the ResourceManager (resource_manager.py), which reads through the
    session's client and discovery and proves what it deletes by the session's ownership label."""

    cluster: Cluster
    discovery: Discovery
    owner_label: str

    def prune(self, candidates: dict[str, Entry], rules: PruneRules, *, dry_run: bool = False, timeout: float,
              on_done=None) -> list[ObjectResult]:
        results: list[ObjectResult] = []
        by_stage: dict[int, list[tuple[Ref, Entry]]] = {}
        for key, entry in candidates.items():
            ref = Ref.from_key(key)
            if (ref.group, ref.kind) in rules.never:
                continue
            by_stage.setdefault(rules.stages.index(entry.stage), []).append((ref, entry))

        def one(item: tuple[Ref, Entry]) -> ObjectResult | None:
            ref, entry = item
            res = resolve_entry(self.discovery, ref, entry)
            if res is None:
                return None  # the kind is gone, so is the object
            result = ObjectResult(ref.kind, ref.name, ref.namespace, ref.group, entry.stage, "pruned")
            target = Target.of(res, ref.namespace, ref.name)
            if why := target.bad_name():  # the inventory lives on the server: its names are checked too
                result.action, result.message = "skipped", f"not pruned: {why}"
            elif not self._prune_one(target, ref, result, rules, dry_run=dry_run, timeout=timeout):
                return None  # gone already
            if on_done:
                on_done(result)
            return result

        # Reverse apply order: what a webhook admits before the controller that serves it, RBAC last.
        for idx in sorted(by_stage, reverse=True):
            results.extend(r for r in parallel_map(one, sorted(by_stage[idx])) if r is not None)
        return results

    def _prune_one(self, target: Target, ref: Ref, result: ObjectResult, rules: PruneRules, *, dry_run: bool,
                   timeout: float) -> bool:
        """Judge one object by its live metadata and prune it, filling `result`; False when it is gone."""
        cluster, owner_label = self.cluster, self.owner_label
        label_key, label_value = parse_label(owner_label)
        meta = get_meta(cluster, target.path)
        if meta is None:
            return False
        md = meta.get("metadata") or {}
        uid = md.get("uid") if isinstance(md.get("uid"), str) else ""
        claim = rules.owned(ref, md) if rules.owned is not None else None
        whose = claim.owner if claim is not None else ""
        if not uid:
            result.action, result.message = "skipped", "not pruned: the server gave no uid to guard the delete with"
        elif claim is not None and not whose:
            result.action, result.message = "skipped", f"not pruned: {claim.refused}"
        elif claim is None and (md.get("labels") or {}).get(label_key) != label_value:
            result.action, result.message = "skipped", f"not pruned: no {owner_label} label"
        elif is_exempt(md):
            result.action, result.message = "skipped", f"not pruned: {EXEMPT}"
        elif rules.keep and (why := rules.keep(ref, target.path, md, dry_run)):
            result.action, result.message = "skipped", why
        else:
            try:
                done = delete_and_wait(cluster, target, _proof(ref, uid, whose, owner_label, rules),
                                       time.monotonic() + timeout, dry_run=dry_run,
                                       strip_finalizers=rules.strip_finalizers)
                if done.done == REFUSED:
                    result.action, result.message = "skipped", f"not pruned: {done.why}"
            except ApiError as exc:
                if exc.status != 404:
                    result.action, result.message = "failed", f"prune: {exc}"
            if whose and result.action == "pruned":
                result.message = f"was {whose}'s"
        return True


def _proof(ref: Ref, uid: str, whose: str, owner_label: str, rules: PruneRules) -> Proof:
    """What the object read above proved, proved again on the object the delete reads: that very
    object (its uid), with our label or the previous owner's claim, and not exempted meanwhile."""
    def still(meta, raw: dict) -> str:
        if why := not_exempt(meta, raw):
            return why
        claim = rules.owned(ref, raw.get("metadata") or {}) if rules.owned is not None else None
        return claim.refused if claim is not None else ""

    if whose:
        return Proof(whose, uid=uid, rule=still)
    label_key, label_value = parse_label(owner_label)
    return Proof(owner_label, label=label_key, value=label_value, uid=uid, rule=still)


def still_wanted(results: list[ObjectResult], rules: PruneRules) -> set[str]:
    """Keys of what could not be pruned or is kept: it stays on record so a later run tries again."""
    return {f"{r.group}/{r.kind}/{r.namespace}/{r.name}" for r in results
            if r.action == "failed" or (r.action == "skipped" and r.message.startswith(rules.kept_prefix))}
