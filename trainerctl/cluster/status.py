"""`status`: what is installed (from the inventory), whether each object is there and as rendered,
and the Go operator's conditions over it (conditions.py), so a pipeline can gate on `Ready`.

Server objects are read through their views (client/views): a Deployment or the lock's Lease
that does not fit is one line under `unreadable` (a Deployment then counts as not available),
and the rest is still reported."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable

from trainerctl.cluster.manager import diagnose
from trainerctl.cluster.manager import inventory_configmap
from trainerctl.cluster.operations import install_history, lock_lease
from trainerctl.cluster.manager.apply import get_meta
from trainerctl.cluster.client.client import object_path
from trainerctl.cluster.client.views import Deployment, Unreadable
from trainerctl.cluster.client.discovery import Discovery
from trainerctl.cluster.manager.objects import Ref
from trainerctl.cluster.client.pool import parallel_map
from trainerctl.cluster.manager.prune import resolve_entry
from trainerctl.cluster.manager.session import Session
from trainerctl.cluster.manager.wait import deployment_is_available
from trainerctl.cluster.trainer import conditions, controller_log, dependencies, go_operator
from trainerctl.cluster.trainer.policy import NEVER_PRUNE, STAGES
from trainerctl.cluster.trainer.preflight import OPENSHIFT_GROUP
from trainerctl.cluster.trainer.status_report import StatusReport, ready_condition, status_text
from trainerctl.cluster.trainer.verify import consumers
from trainerctl.errors import TrainerctlError
from trainerctl.trust.safe_text import bounded

__all__ = ["Status", "StatusReport", "status", "status_text", "wait_ready"]

_CRD_PREFIX = "apiextensions.k8s.io/CustomResourceDefinition//"


def _text(value) -> str:
    """A value the inventory (on the server, so anything) says is a string."""
    return value if isinstance(value, str) else ""


def status(session: Session, objects: list[dict] | None = None, *, logs: bool = True) -> dict:
    """What is installed in the session's namespace: objects from the render when given (drift checked by server-side dry-run), else the inventory
    (drift seen in our managed fields). A Deployment that is not available carries its causes
    (manager/diagnose.py; `logs`: with a crashed container's last log lines, and the consumers of
    Trainer found on the cluster against the version each needs, verify's consumers tier; what the
    controller's log names, trainer/controller_log.py)."""
    cluster, namespace, resources = session.cluster, session.namespace, session.resources
    discovery = Discovery(cluster)
    discovery.refresh()
    inventory = resources.read_inventory()
    source = inventory.source if inventory else {}
    recorded = bounded(source)  # the server's copy: each text cut, as the report shows it
    out: dict = {"namespace": namespace, "installed": inventory is not None, "ready": False, "source": recorded,
                 "trainerVersion": _text(recorded.get("trainer_version")), "channel": _text(recorded.get("channel")),
                 "releases": [r for r in recorded.get("releases") or [] if isinstance(r, dict)]
                 if isinstance(recorded.get("releases"), list) else [], "conditions": [], "objects": [],
                 "deployments": []}
    unreadable: list[str] = []
    states: dict[str, str] = {}
    if objects is not None:
        result = resources.diff(objects, stages=STAGES, never_prune=NEVER_PRUNE)
        names = {"unchanged": "present", "changed": "drifted", "create": "missing", "prune": "extra",
                 "error": "error"}
        for d in result.diffs:
            states[d.ref.key] = names[d.state]
    elif inventory is not None:
        def present(item) -> str:
            key, entry = item
            ref = Ref.from_key(key)
            res = resolve_entry(discovery, ref, entry)
            if res is None:
                return "missing"
            meta = get_meta(cluster, object_path(res.group, res.version, res.resource, ref.namespace or None, ref.name))
            if not meta:
                return "missing"
            # Someone edited or took a field we applied: it left our apply's field set (inventory.py).
            drifted = entry.fields and inventory_configmap.fields_digest(meta.get("metadata"), session.field_manager) != entry.fields
            return "drifted" if drifted else "present"

        items = sorted(inventory.entries.items())
        states = dict(zip([k for k, _ in items], parallel_map(present, items)))
    for key in sorted(states):
        ref = Ref.from_key(key)
        out["objects"].append({"kind": ref.kind, "group": ref.group, "namespace": ref.namespace, "name": ref.name,
                               "state": states[key]})
        if ref.kind == "Deployment" and ref.group == "apps" and states[key] != "missing":
            raw = cluster.request("GET", object_path("apps", "v1", "deployments", ref.namespace, ref.name))
            try:
                ok, why = deployment_is_available(Deployment.read(raw))
            except Unreadable as exc:
                unreadable.append(str(exc))
                ok, why = False, "unreadable"
            except TrainerctlError as exc:
                ok, why = False, str(exc)
            entry = {"namespace": ref.namespace, "name": ref.name, "available": ok, **({"reason": why} if why else {})}
            if not ok:
                found = diagnose.deployment(cluster, ref.namespace, ref.name, logs=logs, image_origins=source.get("images"),
                                            explain_log=controller_log.explainer(cluster, out["trainerVersion"]))
                entry["causes"] = [c.to_dict() for c in found.causes]
                if found.causes:  # the cause, where the conditions and the not-Ready line show the reason
                    entry["reason"] = f"{why}: {found.short()}" if why else found.short()
                if found.unreadable:
                    entry["unreadable"] = found.unreadable
            out["deployments"].append(entry)
    counts: dict[str, int] = {}
    for o in out["objects"]:
        counts[o["state"]] = counts.get(o["state"], 0) + 1
    out["summary"] = counts
    rendered_crds = {k[len(_CRD_PREFIX):] for k in states if k.startswith(_CRD_PREFIX)}
    deps = dependencies.check(cluster, discovery, openshift=discovery.has_group(OPENSHIFT_GROUP),
                              rendered_crds=rendered_crds)
    operator_managed = inventory is None and go_operator.read_cr(cluster) is not None
    out["conditions"] = conditions.conditions(
        deps, conditions.provisioning(inventory is not None, bool(inventory and inventory.complete), namespace,
                                  out["objects"], operator_managed),
        conditions.deployments(out["deployments"]))
    out["ready"] = conditions.is_ready(out["conditions"])
    try:
        held = lock_lease.read(session)
    except Unreadable as exc:
        unreadable.append(str(exc))
        held = None
    if held is not None:  # another run is installing or uninstalling right now
        out["lock"] = {**held.to_dict(), "since": held.since()}
    newest = install_history.latest(session, unreadable) if inventory is not None else None
    if newest is not None:
        out["revision"] = {"revision": newest.revision, "time": newest.time.strftime("%Y-%m-%dT%H:%M:%SZ"),
                           "action": newest.action, "description": newest.description,
                           **({"rollbackTo": newest.rollback_to} if newest.rollback_to is not None else {})}
    if unreadable:
        out["unreadable"] = unreadable
    if logs and out["installed"]:  # the last word, not each look of a --wait
        out["consumers"] = [r.to_dict() for r in consumers.check(session)]
    return out


def wait_ready(session: Session, timeout: float, on_wait=None, objects: list[dict] | None = None) -> tuple[dict, bool]:
    """`status(session, objects)` until Ready or `timeout` seconds: (the last status, whether it is Ready)."""
    deadline = time.monotonic() + timeout
    delay = 0.5
    while True:
        st = status(session, objects, logs=False)
        now = time.monotonic()
        if st["ready"]:
            return st, True
        if now >= deadline:
            st = status(session, objects)  # the last word, with a crashed container's log lines
            return st, st["ready"]
        if on_wait:
            on_wait(ready_condition(st))
        time.sleep(min(delay, max(0.0, deadline - now)))
        delay = min(delay * 2, 2.0)


@dataclass(frozen=True)
class Status:
    """The status action: `objects`, a render to compare with (else the inventory is); `wait`,
    seconds to wait for Ready (None: ask once), calling `on_wait(the Ready condition)` while not."""

    objects: list[dict] | None = None
    wait: float | None = None
    on_wait: Callable[[dict], None] | None = None

    def run(self, session: Session) -> StatusReport:
        return StatusReport(status(session, self.objects) if self.wait is None
                            else wait_ready(session, self.wait, self.on_wait, self.objects)[0])
