"""The one DELETE: every object trainerctl deletes, whichever command deletes it, goes through
`delete` (tests/cli/test_layout.py fails when another module sends a DELETE).

Where a caller found the object (a list answer, a record on the server, an inventory) proves
nothing: a list may hold items outside its selector, a record anyone could have written may name
anything. So the object is read again just before its DELETE and the caller's `Proof` is checked
on that live object: its name and namespace, its label key with a value the caller accepts, the
name pattern the caller's objects have, the namespace they live in, and whatever else the caller
needs (a Lease's holder, a previous owner's marks). The DELETE then carries `preconditions` with
the uid and resourceVersion of the object proved, so it deletes that very object, unchanged since;
if it changed in between (409), it is read and proved again, a few times, and never deleted blind.

The name and namespace are checked against Kubernetes' name rules before any URL is built, so a
name the server or a record supplied (`..`, `a/../../kube-system`) never reaches a path.

The engine knows nothing of what its callers own: each passes its own proof.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from typing import Callable

from trainerctl.cluster.client.client import ApiError, Cluster, object_path
from trainerctl.cluster.client.discovery import Resource
from trainerctl.cluster.client.views import Meta, Unreadable
from trainerctl.cluster.client.views.field_types import LABEL_NAME, SUBDOMAIN_NAME, Cursor
from trainerctl.cluster.manager.webhook_retry import until_webhook_answers
from trainerctl.errors import WaitTimeout
from trainerctl.trust.safe_text import clean

PARTIAL_META = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json"
ATTEMPTS = 3  # reads and proofs of an object that keeps changing under its guarded DELETE

DELETED, GONE, REFUSED = "deleted", "gone", "refused"

# Kubernetes' rule for an object's name depends on its kind: a namespace is a DNS-1123 label,
# RBAC objects only have to be a path segment (`system:controller:x`), the rest (custom resources
# included) a DNS-1123 subdomain.
_PATH_SEGMENT_GROUPS = frozenset({"rbac.authorization.k8s.io"})
_PATH_SEGMENT = re.compile(r"(?!\.{1,2}\Z)[^/%]{1,253}", re.DOTALL)


@dataclass(frozen=True)
class Target:
    """What a caller asks to delete, as it found it; nothing of it is believed until the live
    object proves it (`delete`)."""

    group: str
    version: str
    resource: str
    namespaced: bool
    namespace: str  # "" for a cluster-scoped object
    name: str
    kind: str = ""  # how messages name it

    @classmethod
    def of(cls, res: Resource, namespace: str, name: str) -> "Target":
        return cls(res.group, res.version, res.resource, res.namespaced, namespace if res.namespaced else "", name,
                   res.kind)

    @property
    def display(self) -> str:
        shown = clean(self.name, 120) if isinstance(self.name, str) else "?"
        where = f"{clean(self.namespace, 80)}/" if self.namespaced and isinstance(self.namespace, str) else ""
        return f"{self.kind or self.resource} {where}{shown}"

    def bad_name(self) -> str:
        """Why the name or namespace breaks Kubernetes' rules for this kind ("" when they keep them)."""
        if not isinstance(self.name, str) or not isinstance(self.namespace, str):
            return "its name is not a string"
        if self.group in _PATH_SEGMENT_GROUPS:
            rule, what = _PATH_SEGMENT, "a path segment name (no '/', '%', not '.' or '..')"
        elif (self.group, self.resource) == ("", "namespaces"):
            rule, what = LABEL_NAME, "a DNS-1123 label"
        else:
            rule, what = SUBDOMAIN_NAME, "a DNS-1123 subdomain"
        if not rule.fullmatch(self.name):
            return f"name {clean(self.name, 80)!r} is not {what}"
        if self.namespaced and not LABEL_NAME.fullmatch(self.namespace):
            return f"namespace {clean(self.namespace, 80)!r} is not a DNS-1123 label"
        if not self.namespaced and self.namespace:
            return f"a cluster-scoped {self.kind or self.resource} has no namespace, got {clean(self.namespace, 80)!r}"
        return ""

    @property
    def path(self) -> str:
        """The object's URL; only for a target whose names keep the rules (bad_name)."""
        if self.bad_name():
            raise ValueError(f"{self.display}: {self.bad_name()}")
        return object_path(self.group, self.version, self.resource, self.namespace or None, self.name)


# rule(live metadata, the live object as read) -> "" when the caller's own proof holds, else why not
Rule = Callable[[Meta, dict], str]


@dataclass(frozen=True)
class Proof:
    """What makes a live object the caller's. A label or a uid is required: a proof made of a
    name alone would prove nothing."""

    owner: str  # whose the object must be, as messages say it
    label: str = ""  # a label key the object carries...
    value: str | Callable[[str], bool] = ""  # ...with this value, or one this accepts
    name: re.Pattern | None = None  # the pattern the caller's names have (matched whole)
    namespace: str | None = None  # the namespace a namespaced object must be in (None: any)
    uid: str = ""  # the very object the caller read or made (its uid)
    rule: Rule | None = None
    whole: bool = False  # the rule reads more than metadata: read the whole object

    def __post_init__(self) -> None:
        if not (self.label or self.uid):
            raise ValueError(f"a proof of {self.owner} names a label or a uid")

    def refuses(self, target: Target, meta: Meta, raw: dict) -> str:
        """Why the live object is not provably the caller's ("" when it is)."""
        if meta.name != target.name or meta.namespace != target.namespace:
            return f"the server answered another object ({clean(meta.display, 120)})"
        if target.namespaced and self.namespace is not None and meta.namespace != self.namespace:
            return f"it is in namespace {meta.namespace}, not {self.namespace}"
        if self.name is not None and not self.name.fullmatch(meta.name):
            return f"its name is not one of {self.owner}'s"
        if self.uid and meta.uid != self.uid:
            return f"it is not the object {self.owner} made or read (another uid)"
        if self.label:
            found = meta.labels.get(self.label)
            if found is None:
                return f"it has no {self.label} label"
            if not (found == self.value if isinstance(self.value, str) else self.value(found)):
                return f"its {self.label} label is {clean(found, 80)!r}, not {self.owner}'s"
        if self.rule is not None and (why := self.rule(meta, raw)):
            return why
        if not meta.uid or not meta.resource_version:
            return "the server gave no uid and resourceVersion to guard the delete with"
        return ""


@dataclass(frozen=True)
class Outcome:
    """What became of one target: DELETED, GONE (there was nothing to delete) or REFUSED (`why`)."""

    done: str
    why: str = ""
    meta: Meta | None = None  # the object proved and deleted

    @property
    def deleted(self) -> bool:
        return self.done == DELETED


def _read(cluster: Cluster, target: Target, proof: Proof, known: dict | None) -> tuple[Outcome | None, Meta, dict]:
    """The live object (or `known`, see delete) and its metadata, proved; an Outcome instead when
    it is gone or not proved."""
    raw = known
    if raw is None:
        try:
            raw = cluster.request("GET", target.path, accept="application/json" if proof.whole else PARTIAL_META)
        except ApiError as exc:
            if exc.status == 404:
                return Outcome(GONE), Meta(""), {}
            raise
    try:
        meta = Meta.read(Cursor.of(target.kind or target.resource, raw))
    except Unreadable as exc:
        return Outcome(REFUSED, str(exc)), Meta(""), raw
    why = proof.refuses(target, meta, raw)
    return (Outcome(REFUSED, why) if why else None), meta, raw


def delete(cluster: Cluster, target: Target, proof: Proof, *, dry_run: bool = False,
           propagation: str = "Background", known: dict | None = None) -> Outcome:
    """Delete `target` if the live object proves to be the caller's (`proof`); never raises for a
    refusal, only for the API's own errors (ApiError).

    `known`: the object as the server last gave it to this run, in the answer to the run's own
    create or update of it, or to a read just made. It is proved in place of a first read: the
    preconditions pin that very version, so the DELETE goes through only if the object is still
    exactly that; once it changed (409) only a fresh read proves it. This saves a round trip, and
    lets a caller who may delete what it made but not read it (verify's least privileges) delete
    it still."""
    if why := target.bad_name():
        return Outcome(REFUSED, why)
    for _ in range(ATTEMPTS):
        stop, meta, _raw = _read(cluster, target, proof, known)
        if stop is not None:
            return stop
        known = None
        # With a body, the API server reads every delete option from it and ignores the query:
        # dryRun must be in the body, or a "dry-run" deletes for real (the query is for servers
        # that read only it).
        options = {"propagationPolicy": propagation,
                   "preconditions": {"uid": meta.uid, "resourceVersion": meta.resource_version},
                   **({"dryRun": ["All"]} if dry_run else {})}
        try:
            cluster.request("DELETE", target.path, body=options, query={"dryRun": "All"} if dry_run else None)
            return Outcome(DELETED, meta=meta)
        except ApiError as exc:
            if exc.status == 404:
                return Outcome(GONE)
            if exc.status != 409:
                raise
    return Outcome(REFUSED, f"it changed between each read and its delete ({ATTEMPTS} times); not deleted")


def remove_finalizer(cluster: Cluster, path: str, meta: dict, finalizer: str, deadline: float | None = None) -> str:
    """Remove one finalizer, guarded by its position; the new resourceVersion, or "" when absent."""
    finalizers = meta.get("finalizers") or []
    if finalizer not in finalizers:
        return ""
    idx = finalizers.index(finalizer)
    patch = [{"op": "test", "path": f"/metadata/finalizers/{idx}", "value": finalizer},
             {"op": "remove", "path": f"/metadata/finalizers/{idx}"}]
    out = until_webhook_answers(
        lambda: cluster.request("PATCH", path, body=patch, content_type="application/json-patch+json"),
        f"removing finalizer {finalizer} from {path}", deadline)
    return (out.get("metadata") or {}).get("resourceVersion", "") or "stripped"


def delete_and_wait(cluster: Cluster, target: Target, proof: Proof, deadline: float, dry_run: bool = False,
                    strip_finalizers: tuple[str, ...] = ()) -> Outcome:
    """Delete (background propagation: no garbage-collector round trip) and wait until it is gone.

    `strip_finalizers` are removed first, from the object proved: finalizers whose controller is
    gone would hold the delete forever. They are removed again while it waits: a controller may
    put one back between our removal and the DELETE, and once the object is being deleted nobody
    can add one again, so one more removal ends the wait. An object of the same name but another
    uid (made again meanwhile) is not waited for."""
    if why := target.bad_name():
        return Outcome(REFUSED, why)
    path = target.path
    stop, _meta, raw = _read(cluster, target, proof, None)
    if stop is not None:
        return stop
    for finalizer in () if dry_run else strip_finalizers:
        if remove_finalizer(cluster, path, _raw_meta(raw), finalizer, deadline):
            stop, _meta, raw = _read(cluster, target, proof, None)
            if stop is not None:
                return stop
    outcome = delete(cluster, target, proof, dry_run=dry_run, known=raw)
    if dry_run or not outcome.deleted:
        return outcome
    uid = outcome.meta.uid if outcome.meta else ""
    delay = 0.05
    while True:
        try:
            meta = _metadata(cluster, path)
            if meta.get("uid") != uid:
                return outcome  # another object of that name now: ours is gone
            back = next((f for f in strip_finalizers if f in (meta.get("finalizers") or [])), None)
            if back is not None and time.monotonic() <= deadline:
                remove_finalizer(cluster, path, meta, back, deadline)
                continue  # read it again: its finalizers moved
        except ApiError as exc:
            if exc.status == 404:
                return outcome
            if exc.status not in (409, 422):  # the finalizers changed under the guarded patch: read again
                raise
        if time.monotonic() > deadline:
            raise WaitTimeout(f"timed out waiting for {path} to be deleted")
        time.sleep(delay)
        delay = min(delay * 2, 1.0)


def _metadata(cluster: Cluster, path: str) -> dict:
    return _raw_meta(cluster.request("GET", path, accept=PARTIAL_META))


def _raw_meta(raw: dict) -> dict:
    meta = raw.get("metadata") if isinstance(raw, dict) else None
    return meta if isinstance(meta, dict) else {}


class DeleteMethods:
    """The one delete, through the session's client: methods of the ResourceManager
    (resource_manager.py). The proof is still the caller's: a session's label proves nothing of
    what a hand-over or a record deletes."""

    cluster: Cluster

    def delete(self, target: Target, proof: Proof, *, dry_run: bool = False, propagation: str = "Background",
               known: dict | None = None) -> Outcome:
        return delete(self.cluster, target, proof, dry_run=dry_run, propagation=propagation, known=known)

    def delete_and_wait(self, target: Target, proof: Proof, deadline: float, dry_run: bool = False,
                        strip_finalizers: tuple[str, ...] = ()) -> Outcome:
        return delete_and_wait(self.cluster, target, proof, deadline, dry_run=dry_run,
                               strip_finalizers=strip_finalizers)
