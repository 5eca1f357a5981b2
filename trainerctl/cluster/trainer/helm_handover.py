"""Taking over a Trainer that the upstream Helm chart (charts/kubeflow-trainer) installed.

Detected by its release records (a release of the `kubeflow-trainer` chart) or by Helm's
ownership annotations on an object the render has. `install` refuses until it is told to hand
over; with `--take-over-helm` the release counts as the previous install:

- every object the render shares with the release is adopted in place: the fields Helm's field
  manager owns move to ours (engine fields.take_over), so our apply owns them alone and drops
  what we do not render, Helm's ownership annotations and labels included; nothing is deleted and
  recreated unless Kubernetes forbids the change (a Deployment's selector);
- what the release had and the render does not (its manifest, its hooks, and the runtimes its
  runtime-installer hook applies from its ConfigMap) is the prune set of this install, pruned by
  the usual rules: never CRDs, never a runtime an unfinished TrainJob uses. What is kept loses
  Helm's marks; a kept runtime gets our label so a later install prunes it once the job is done;
- the release records are deleted last, so `helm list` no longer shows the release and a later
  `helm uninstall` cannot delete what trainerctl now owns. Until then every step is safe to
  repeat: an interrupted hand-over is finished by the next run with the flag.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field
from typing import Callable, Iterable

from trainerctl.cluster.operations import helm_releases
from trainerctl.cluster.client.client import ApiError, Cluster
from trainerctl.cluster.client.discovery import Discovery
from trainerctl.cluster.manager.delete import REFUSED, Proof, Target, delete
from trainerctl.cluster.manager.inventory_configmap import Entry, Inventory
from trainerctl.cluster.manager.objects import Ref
from trainerctl.cluster.manager.prune import Claim, KeepRule
from trainerctl.cluster.manager.report import ObjectResult
from trainerctl.cluster.manager.stages import WebhookRules
from trainerctl.cluster.trainer.policy import RUNTIME_KINDS, STAGES
from trainerctl.errors import EXIT_PREFLIGHT, InputError, TrainerctlError

CHART = "kubeflow-trainer"
HAND_OVER_FLAG = "--take-over-helm"
GUIDE = "docs/migration-helm-kubectl.md#from-a-helm-release"
# The chart's runtime-installer hook (2.3.0 on) applies the runtimes listed in its ConfigMap with
# kubectl and labels them so; they are not in the release's manifest, but they are the release's.
INSTALLER_KEY = "runtimes.yaml"
INSTALLER_LABEL = ("trainer.kubeflow.org/managed-by", "runtimes-installer")


@dataclass
class HelmState:
    """The Helm releases of Trainer found on the cluster (read after the lock is taken)."""

    releases: list[helm_releases.Release] = field(default_factory=list)

    @property
    def present(self) -> bool:
        return bool(self.releases)

    def describe(self) -> str:
        return "; ".join(r.describe() for r in self.releases)

    def refusal(self) -> str:
        return (f"Trainer here was installed by Helm ({self.describe()}): re-run with {HAND_OVER_FLAG} to hand "
                f"it over to trainerctl (--dry-run shows the plan; see {GUIDE})")

    def check_namespace(self, namespace: str) -> None:
        for release in self.releases:
            if release.namespace != namespace:
                raise InputError(f"-n {namespace}: Helm release {release.name} is in namespace {release.namespace}; "
                                 f"install into the same namespace to take it over: -n {release.namespace}")


class UnreadableRecord(TrainerctlError):
    """A Helm release record that does not fit its view: which chart it holds, and so whether
    Helm is in charge of Trainer here, cannot be judged (exit 3, before anything is written)."""

    exit_code = EXIT_PREFLIGHT


def refuse_unreadable(releases: list[helm_releases.Release], unreadable: Iterable[str] = ()) -> None:
    """One line naming the first record that does not fit (the view's own line), if any does:
    `unreadable` are the records the record view refused, each release's those whose revision
    it could not read."""
    lines = [*unreadable, *(line for r in releases for line in r.unreadable)]
    if lines:
        more = f" ({len(lines) - 1} more record(s) do not fit)" if len(lines) > 1 else ""
        raise UnreadableRecord(f"{lines[0]}{more}; whether Helm installed Trainer here cannot be judged from a "
                               "record that does not fit, so this run stopped before changing anything; repair or "
                               f"delete the record (Helm keeps one per revision; see {GUIDE})")


def trainer_releases(releases: list[helm_releases.Release], owners: set[tuple[str, str]] = frozenset(),
                     unreadable: Iterable[str] = ()) -> HelmState:
    """Releases of the Trainer chart, and any release that owns an object the render has
    (`owners`: (name, namespace) from Helm's annotations on live rendered objects). An owner
    without records (deleted by hand) still counts: its objects carry its marks. A record that
    does not fit (`unreadable`, and each release's) is UnreadableRecord: its chart is unknown."""
    refuse_unreadable(releases, unreadable)
    chosen = [r for r in releases if r.chart == CHART or (r.name, r.namespace) in owners]
    known = {(r.name, r.namespace) for r in chosen}
    chosen += [helm_releases.Release(name, ns) for name, ns in sorted(owners) if (name, ns) not in known]
    return HelmState(chosen)


def installer_runtimes(release: helm_releases.Release) -> list[dict]:
    """The runtimes the release's runtime-installer hook applies (from the ConfigMap it mounts; the
    record's reading checked that its data maps strings to strings). Runtimes it cannot read are
    an UnreadableRecord: which the hook installed, and so what the hand-over prunes, is unknown."""
    out = []
    for obj in release.manifest_objects():
        text = (obj.get("data") or {}).get(INSTALLER_KEY) if obj["kind"] == "ConfigMap" else None
        if text is None:
            continue
        try:
            docs = helm_releases.parse_manifest(text)
        except helm_releases.ReleaseDecodeError as exc:
            raise UnreadableRecord(f"Helm release {release.display}: ConfigMap {obj['metadata']['name']} "
                                   f"{INSTALLER_KEY}: {exc}; which runtimes its installer applied cannot be "
                                   "judged, so this run stopped before changing anything") from None
        out.extend(d for d in docs if d["kind"] in RUNTIME_KINDS)
    return out


@dataclass
class ReleaseObjects:
    """What a hand-over prunes from: each release object's Ref, and how it is recognised live."""

    entries: dict[str, Entry] = field(default_factory=dict)
    release_of: dict[str, helm_releases.Release] = field(default_factory=dict)  # Ref key -> release
    how: dict[str, str] = field(default_factory=dict)  # Ref key -> manifest | hook | installer

    def claim(self, ref: Ref, meta: dict) -> Claim | None:
        """Whether the live object is provably the release's (None: the release does not name it).
        The record that names it proves nothing (anyone allowed to create a Secret in the
        namespace can write one), so the proof is the object's own marks, and only in the
        release's namespace or cluster-wide: for its manifest, Helm's annotations naming this
        release and namespace; for hooks, which Helm creates without them, Helm's hook annotation
        on an object in the release's namespace; for the installer's runtimes, the installer's
        label (what the installer itself prunes by). Another release's annotations always win."""
        release = self.release_of.get(ref.key)
        if release is None:
            return None
        name = f"Helm release {release.name}"
        how = self.how[ref.key]
        owner = helm_releases.owner_of(meta)
        if how == "manifest" or (ref.namespace and ref.namespace != release.namespace):
            refused = release.not_owned(ref.namespace, meta)
            return Claim(refused=refused) if refused else Claim(name)
        if owner is not None and owner != (release.name, release.namespace):
            return Claim(refused=f"Helm's annotations name release {owner[0]} in {owner[1]}, not {name}")
        if how == "hook":
            if ref.namespace and helm_releases.HOOK_ANNOTATION in (meta.get("annotations") or {}):
                return Claim(f"{name} (hook)")
            return Claim(refused=f"not marked {helm_releases.HOOK_ANNOTATION} in {release.namespace}, as {name}'s hooks are")
        if (meta.get("labels") or {}).get(INSTALLER_LABEL[0]) == INSTALLER_LABEL[1]:
            return Claim(f"{name} (its runtime installer)")
        return Claim(refused=f"no {INSTALLER_LABEL[0]}={INSTALLER_LABEL[1]} label, as {name}'s installed runtimes have")


def release_objects(state: HelmState, discovery: Discovery, objects: list[dict]) -> ReleaseObjects:
    """The prune set the releases amount to, with stages as our own install would give them.
    Kinds the cluster no longer serves are left out: their objects are gone with them."""
    rules = WebhookRules.from_objects(objects)
    out = ReleaseObjects()
    for release in state.releases:
        groups = (("manifest", release.manifest_objects()), ("hook", release.hook_objects()),
                  ("installer", installer_runtimes(release)))
        for how, items in groups:
            for obj in items:
                res = discovery.lookup(obj.get("apiVersion", ""), obj.get("kind", ""))
                if res is None or not res.served:
                    continue
                ref = helm_releases.ref_in(obj, release.namespace, res.namespaced)
                if ref.key in out.entries:
                    continue
                stage = STAGES.stage_of(ref.kind, res.group, res.resource, rules)
                out.entries[ref.key] = Entry(res.api_version, res.resource, res.namespaced, stage)
                out.release_of[ref.key] = release
                out.how[ref.key] = how
    return out


RESOURCE_POLICY = "helm.sh/resource-policy"  # "keep": Helm itself never deletes it


def keeping_helm_policy(keep: KeepRule | None) -> KeepRule:
    """`keep`, and what the chart or its user marked `helm.sh/resource-policy: keep`: Helm would
    never delete it, so neither does the hand-over (it is reported, and not kept on record)."""
    def rule(ref: Ref, path: str, meta: dict, dry_run: bool) -> str:
        if ((meta.get("annotations") or {}).get(RESOURCE_POLICY) or "").strip() == "keep":
            return f"not pruned: {RESOURCE_POLICY} is keep (Helm would not delete it either)"
        return keep(ref, path, meta, dry_run) if keep is not None else ""

    return rule


def helm_managers(meta: dict | None) -> tuple[str, ...]:
    """Helm's field managers on an object: `helm`, and whoever set Helm's ownership annotation
    (Helm names its manager after its binary, so a renamed binary is found this way too)."""
    found = {helm_releases.FIELD_MANAGER}
    for entry in (meta or {}).get("managedFields") or []:
        annotations = (((entry.get("fieldsV1") or {}).get("f:metadata") or {}).get("f:annotations") or {})
        if f"f:{helm_releases.NAME_ANNOTATION}" in annotations and entry.get("manager"):
            found.add(entry["manager"])
    return tuple(sorted(found))


def unmark(cluster: Cluster, path: str, meta: dict, *, label: tuple[str, str] | None = None,
           field_manager: str, dry_run: bool = False) -> bool:
    """Remove Helm's ownership marks (and add `label`, making a kept object ours); one JSON patch
    guarded by the resourceVersion, recomputed when something wrote in between. True when there
    was something to do."""
    for attempt in range(5):
        ops = helm_releases.ownership_patch(meta)
        labels = meta.get("labels") or {}
        if label is not None and labels.get(label[0]) != label[1]:
            if not labels:
                ops.append({"op": "add", "path": "/metadata/labels", "value": {label[0]: label[1]}})
            else:
                ops.append({"op": "add", "path": f"/metadata/labels/{helm_releases.json_pointer(label[0])}", "value": label[1]})
        if not ops:
            return False
        if dry_run:
            return True
        patch = [{"op": "test", "path": "/metadata/resourceVersion", "value": meta.get("resourceVersion", "")}, *ops]
        try:
            cluster.request("PATCH", path, body=patch, content_type="application/json-patch+json",
                            query={"fieldManager": field_manager})
            return True
        except ApiError as exc:
            if exc.status == 404:
                return False
            if attempt == 4 or exc.status not in (409, 422, 500):
                raise
        fresh = cluster.get_or_none(path)
        if fresh is None:
            return False
        meta = fresh.get("metadata") or {}
    return False


def delete_records(cluster: Cluster, state: HelmState, *, dry_run: bool,
                   on_done: Callable[[ObjectResult], None] | None = None) -> list[ObjectResult]:
    """Delete every stored revision of the releases: the last step, so `helm list` forgets them."""
    results = []
    for release in state.releases:
        for record in release.records:
            result = ObjectResult(record.kind, record.name, record.namespace, "", "handover", "deleted",
                                  f"Helm's record of {release.name} revision {record.revision}")
            if not dry_run:
                try:
                    done = delete(cluster, _record_target(record), _record_proof(release))
                    if done.done == REFUSED:
                        result.action, result.message = "skipped", f"not Helm's release record: {done.why}"
                except ApiError as exc:
                    result.action, result.message = "failed", f"deleting Helm's release record: {exc}"
            results.append(result)
            if on_done:
                on_done(result)
    return results


def _record_target(record: helm_releases.Record) -> Target:
    return Target("", "v1", "secrets" if record.kind == "Secret" else "configmaps", True, record.namespace, record.name,
                  record.kind)


def _record_proof(release: helm_releases.Release) -> Proof:
    """A record of this release, as Helm's storage driver writes one: labelled owner=helm and with
    the release's name, named after it, in its namespace."""
    return Proof(f"Helm release {release.name}", label="name", value=release.name, namespace=release.namespace,
                 name=re.compile(re.escape(f"{helm_releases.RECORD_PREFIX}{release.name}.v") + "[1-9][0-9]*"),
                 rule=lambda meta, raw: "" if meta.labels.get("owner") == "helm" else "it has no owner=helm label")


def adopted_note(release: helm_releases.Release) -> str:
    return f"adopted from Helm release {release.name}"


def with_release(previous: Inventory | None, release: ReleaseObjects, namespace: str) -> Inventory:
    """The previous install: our inventory (a half-done hand-over wrote one) with the release's
    objects added, or the release alone on the first run."""
    if previous is None:
        return Inventory(namespace, {"installed_by": "helm"}, dict(release.entries), complete=True)
    return dataclasses.replace(previous, entries={**release.entries, **previous.entries})
