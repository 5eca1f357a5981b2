"""The install history: one ConfigMap per revision in the install namespace, as Helm keeps one
Secret per release revision (its storage driver's `sh.helm.release.v1.NAME.vN`).

    trainerctl-history.v3   labels: app.kubernetes.io/managed-by=trainerctl,
                                    trainerctl.io/history=true, trainerctl.io/revision=3
    data: revision, time, who, version, action (install|rollback), description, rollbackTo,
          source (JSON), render (JSON: how the render was asked), objects (JSON: the inventory),
          objectCount

A ConfigMap, not a Secret: a record holds no credential (the inventory lists objects by name and
hash, never their bodies; the source's URL never carries a password), so anyone who may read the
namespace's ConfigMaps may read who installed what. Each record is bounded: above MAX_BYTES the
inventory's entries are left out (objectCount still says how many). The newest `history_max`
records are kept (0: all), like `helm --history-max`.

Records are read through their view (client/views/history_record.py): one edited by hand or truncated
is one `unreadable ConfigMap ...` line, never a traceback. Revision numbers come from the
records' names, so an unreadable record still holds its number; a name whose number is out of
1..MAX_REVISION (a hand-made `trainerctl-history.v9999999999`) is unreadable and holds none, so
the next number stays in range. A history already at MAX_REVISION, or a name already taken by a
ConfigMap that is not a record, leaves the install unrecorded with a line saying why, never failed.
"""

from __future__ import annotations

import datetime as _dt
import json
import re
from dataclasses import dataclass, field

from trainerctl import __version__
from trainerctl.cluster.client.client import ApiError, Cluster, object_path
from trainerctl.cluster.client.views import Entry, HistoryRecord, Unreadable, read_each
from trainerctl.cluster.client.views.field_types import INT32
from trainerctl.cluster.manager.delete import Proof, Target
from trainerctl.cluster.manager.listing import answers
from trainerctl.cluster.manager.session import Session
from trainerctl.cluster.operations.access import whoami
from trainerctl.cluster.operations.lock_holder import holder_from_env
from trainerctl.errors import InputError
from trainerctl.trust.safe_text import clean

PREFIX = "trainerctl-history"
LABEL = "trainerctl.io/history"
REVISION_LABEL = "trainerctl.io/revision"
SELECTOR = f"{LABEL}=true"
MAX_BYTES = 512 * 1024  # well under a ConfigMap's 1 MiB; an inventory of Trainer's ~80 objects is ~20 KiB
MAX_REVISION = INT32  # as the record's data.revision is read (views/history_record.py)
_NAME = re.compile(re.escape(PREFIX) + r"\.v([1-9][0-9]{0,9})")
_COLLECTION = ("", "v1", "configmaps")


@dataclass(frozen=True)
class NewRevision:
    """What one install or rollback records about itself."""

    source: dict
    entries: dict[str, Entry]
    render: dict = field(default_factory=dict)  # how the render was asked for ({} for -f FILE)
    action: str = "install"
    description: str = ""
    rollback_to: int | None = None


def name(revision: int) -> str:
    return f"{PREFIX}.v{revision}"


def revision_of(record_name: str) -> int | None:
    """The revision a record's name holds, None when it is not a record's name or its number is
    out of 1..MAX_REVISION."""
    found = _NAME.fullmatch(record_name)
    return int(found.group(1)) if found and int(found.group(1)) <= MAX_REVISION else None


def to_configmap(namespace: str, revision: int, new: NewRevision, *, when: _dt.datetime, who: str) -> dict:
    objects = json.dumps({k: e.__dict__ for k, e in sorted(new.entries.items())}, sort_keys=True,
                         separators=(",", ":"))
    data = {
        "revision": str(revision),
        "time": when.astimezone(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "who": who,
        "version": __version__,
        "action": new.action,
        "description": new.description or new.action,
        "source": json.dumps(new.source, sort_keys=True),
        "render": json.dumps(new.render, sort_keys=True),
        "objects": objects,
        "objectCount": str(len(new.entries)),
    }
    if new.rollback_to is not None:
        data["rollbackTo"] = str(new.rollback_to)
    if sum(len(v) for v in data.values()) > MAX_BYTES:
        data["objects"] = "{}"  # bounded: the count stays, the entries go
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name(revision), "namespace": namespace,
                     "labels": {"app.kubernetes.io/managed-by": "trainerctl", LABEL: "true",
                                REVISION_LABEL: str(revision)}},
        "data": data,
    }


def _path(namespace: str, revision: int | None = None) -> str:
    return object_path(*_COLLECTION, namespace, name(revision) if revision is not None else None)


def _listed(session: Session, unreadable: list[str] | None = None) -> list[dict]:
    """Every record's raw ConfigMap (each a mapping with a name of ours), by revision; a labelled
    one whose name holds no revision in range is one line in `unreadable`, and left out."""
    cluster, namespace = session.cluster, session.namespace
    items = answers(cluster.items(_path(namespace), query={"labelSelector": SELECTOR}), namespace, SELECTOR)
    named = []
    for item in items:
        found = str(((item or {}).get("metadata") or {}).get("name") or "") if isinstance(item, dict) else ""
        revision = revision_of(found)
        if revision is not None:
            named.append((revision, item))
        elif unreadable is not None and found.startswith(f"{PREFIX}.v"):
            unreadable.append(str(Unreadable("ConfigMap", f"{namespace}/{clean(found, 200)}", "metadata.name",
                                              f"{PREFIX}.vN, N a revision 1..{MAX_REVISION}")))
    return [raw for _, raw in sorted(named, key=lambda pair: pair[0])]


def revisions(session: Session) -> list[int]:
    """Every recorded revision number of the session's namespace, readable or not, oldest first."""
    return [revision_of(raw["metadata"]["name"]) for raw in _listed(session)]


def read_all(session: Session, unreadable: list[str]) -> list[HistoryRecord]:
    """The records that fit their view, oldest first; one line in `unreadable` for each that does not."""
    return read_each(HistoryRecord.read, _listed(session, unreadable), unreadable)


def read(session: Session, revision: int) -> HistoryRecord:
    """One revision; InputError (exit 2) naming the revisions there are when it is not one of them,
    views.Unreadable (exit 3) when its record does not fit."""
    namespace = session.namespace
    raw = session.cluster.get_or_none(_path(namespace, revision))
    if raw is None:
        there = revisions(session)
        held = f"revisions {there[0]}..{there[-1]}" if len(there) > 1 else \
            f"revision {there[0]}" if there else "no revisions"
        raise InputError(f"revision {revision}: not in the install history of namespace {namespace} (it holds "
                         f"{held}; `trainerctl history -n {namespace}` lists them)")
    return HistoryRecord.read(raw)


def who(cluster: Cluster) -> str:
    """The API server's name for the user, and where the run came from (user@host, a CI job)."""
    holder = holder_from_env("install")
    local = f"{holder.user}@{holder.host}" + (f" ({holder.ci})" if holder.ci else "")
    user = whoami(cluster)
    return f"{user} ({local})" if isinstance(user, str) and user else local


def record(session: Session, new: NewRevision, *, history_max: int, when: _dt.datetime | None = None) -> dict:
    """Write the next revision, then delete the records beyond the newest `history_max` (0: keep
    all); what the report says of it. An install that changed nothing since the newest record
    (same source, render and objects) adds none: a pipeline that re-applies on every run would
    otherwise push the revisions worth going back to out of the history. Called while the
    install lock is held, so no other run numbers a record meanwhile."""
    cluster, namespace = session.cluster, session.namespace
    listed = _listed(session)
    there = [revision_of(raw["metadata"]["name"]) for raw in listed]
    newest = read_each(HistoryRecord.read, listed[-1:], [])
    if new.action == "install" and newest and _same(newest[0], new):
        return {"revision": there[-1], "recorded": False,
                "message": f"revision {there[-1]} unchanged (this install changed nothing it records)"}
    if there and there[-1] >= MAX_REVISION:
        return {"revision": there[-1], "recorded": False,
                "message": f"not recorded: revision {there[-1]} is the highest the history numbers (ConfigMap "
                           f"{namespace}/{name(there[-1])} looks made by hand: delete it)"}
    revision = (there[-1] if there else 0) + 1
    body = to_configmap(namespace, revision, new, when=when or _dt.datetime.now(_dt.timezone.utc), who=who(cluster))
    try:
        cluster.request("POST", _path(namespace), body=body, query={"fieldManager": session.field_manager})
    except ApiError as exc:
        if exc.status != 409:
            raise
        return {"revision": there[-1] if there else None, "recorded": False,
                "message": f"not recorded: ConfigMap {namespace}/{name(revision)} is already there without the "
                           f"label {SELECTOR}, so it is no record of ours (delete it, and the next install records)"}
    removed = [old for old in [*there, revision][:-history_max] if history_max > 0]
    for old in removed:
        _delete(session, old)
    kept = f"; {len(removed)} older revision(s) removed (--history-max {history_max})" if removed else ""
    return {"revision": revision, "recorded": True, "message": f"revision {revision} recorded{kept}"}


def _same(old: HistoryRecord, new: NewRevision) -> bool:
    as_read = json.loads(json.dumps({"source": new.source, "render": new.render}))
    return (as_read == {"source": old.source, "render": old.render}
            and {k: e.hash for k, e in old.entries.items()} == {k: e.hash for k, e in new.entries.items()})


def _delete(session: Session, revision: int, dry_run: bool = False) -> None:
    """Delete one record through the one delete: a ConfigMap of ours by its name and label, in the
    namespace (a record that is not, though listed as one, stays)."""
    namespace = session.namespace
    session.resources.delete(Target(*_COLLECTION, True, namespace, name(revision), "ConfigMap"),
           Proof("the install history", label=LABEL, value="true", name=_NAME, namespace=namespace), dry_run=dry_run)


def delete_all(session: Session, dry_run: bool = False) -> int:
    """Delete every record of the session's namespace; how many there were."""
    there = revisions(session)
    for revision in there:
        _delete(session, revision, dry_run)
    return len(there)


def latest(session: Session, unreadable: list[str]) -> HistoryRecord | None:
    """The newest record (status shows its revision); None when there is none, or when it does
    not fit its view (then one line in `unreadable`) or may not be listed."""
    try:
        newest = _listed(session)[-1:]
    except ApiError as exc:
        if exc.status == 403:
            return None
        raise
    found = read_each(HistoryRecord.read, newest, unreadable)
    return found[0] if found else None
