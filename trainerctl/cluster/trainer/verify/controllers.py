"""What the controllers say when something they should have done did not happen: the Warning
events of an object, the last log lines of the pods behind a group's webhooks (the controller's
own pods, found from its webhook Services), and a webhook call they report failing, explained.
Before the tiers: the installed controller Deployments that do not work, each with its cause
(its diagnosis, with what its log names: trainer/controller_log.py)."""

from __future__ import annotations

import json

from trainerctl.cluster.client.client import ApiError, Cluster, object_path
from trainerctl.cluster.client.views import Deployment, Event, Unreadable, by_time, read_each
from trainerctl.cluster.manager import diagnose
from trainerctl.cluster.manager.session import Session
from trainerctl.cluster.manager.objects import Ref
from trainerctl.cluster.manager.wait import deployment_is_available, service_endpoint_ready
from trainerctl.cluster.trainer import controller_log
from trainerctl.cluster.trainer.verify import webhooks
from trainerctl.cluster.trainer.verify.result import FAIL, Result
from trainerctl.errors import TrainerctlError

TIER = "controllers"

LOG_LINES = 6  # the controller's lines a failure shows
LINE_CHARS = 400  # of each (a JSON log line carries a stack trace)


def warnings(cluster: Cluster, namespace: str, uid: str) -> list[str]:
    """The Warning events of one object, newest last."""
    try:
        raw = cluster.items(object_path("", "v1", "events", namespace),
                            query={"fieldSelector": f"involvedObject.uid={uid}"})
    except ApiError:
        return []
    events = sorted(read_each(Event.read, raw, []), key=by_time)
    return [f"event {e.reason}: {e.message}" for e in events if e.type == "Warning"]


def log_lines(cluster: Cluster, group: str, about: str) -> tuple[list[str], list[str]]:
    """(the last lines of the controller of `group` that mention `about` or an error, the pods
    read), from the pods that back its webhook Services."""
    lines: list[str] = []
    pods: list[str] = []
    for namespace, name, _ in webhooks.services_for(cluster, group):
        diag = diagnose.service(cluster, namespace, name, logs=False)
        for pod in diag.pods:
            if f"{namespace}/{pod}" in pods:
                continue
            pods.append(f"{namespace}/{pod}")
            found, why = diagnose.recent_log(cluster, namespace, pod)
            lines.extend(line[:LINE_CHARS] for line in (found if not why else [why]))
    wanted = [line for line in lines if about in line or diagnose._ERROR_LINE.search(line)]
    return wanted[-LOG_LINES:], pods


def webhook_failure(cluster: Cluster, lines: list[str]) -> webhooks.WebhookFailure | None:
    """The last webhook call a controller logged as failing, explained."""
    for line in reversed(lines):
        text = _error_of(line)
        if "webhook" in text and webhooks.parse(text) is not None:
            return webhooks.explain(cluster, text)
    return None


def _error_of(line: str) -> str:
    """A log line's error: a JSON line's (controller-runtime's "Reconciler error") `error` field."""
    if line.startswith("{"):
        try:
            entry = json.loads(line)
        except ValueError:
            return line
        error = entry.get("error") if isinstance(entry, dict) else None
        return error if isinstance(error, str) else line
    return line


def webhook_down(cluster: Cluster, group: str) -> webhooks.WebhookFailure | None:
    """A webhook of `group` whose Service has no ready endpoint, explained."""
    for namespace, name, port in webhooks.services_for(cluster, group):
        try:
            ready, _, _ = service_endpoint_ready(cluster, namespace, name, port)()
        except ApiError:
            continue
        if not ready:
            diag = diagnose.service(cluster, namespace, name, logs=False)
            why = diag.short() + (f": {diag.causes[0].message}" if diag.causes and diag.causes[0].message else "")
            return webhooks.WebhookFailure(f"of {group}", "", service=(namespace, name, port),
                                           cause=webhooks.NO_ENDPOINTS, explanation=why)
    return None


def _rolled_out(dep: Deployment) -> bool:
    """Every replica runs the current spec and is available. An older replica still available
    does not count: the new spec is what the install put there, and the Service may no longer
    select the old pods (a new release's labels), so webhooks fail while the Deployment says
    Available."""
    try:
        return deployment_is_available(dep)[0]
    except TrainerctlError:  # its rollout failed (ProgressDeadlineExceeded)
        return False


def unhealthy(session: Session) -> list[Result]:
    """A failure for each controller Deployment of the install (its inventory's) that is not
    rolled out and has none of its replicas available, or whose log names why (a stored object
    it cannot decode, its configuration rejected, a permission it lacks). What verify may not
    read is skipped: the tiers still say what breaks."""
    cluster = session.cluster
    try:
        inventory = session.resources.read_inventory()
    except TrainerctlError:  # forbidden, or not fitting its view: the tiers go on without it
        return []
    if inventory is None:
        return []
    version = inventory.source.get("trainer_version")
    explain = controller_log.explainer(cluster, version if isinstance(version, str) else "")
    out = []
    for key in sorted(inventory.entries):
        ref = Ref.from_key(key)
        if (ref.group, ref.kind) != ("apps", "Deployment"):
            continue
        try:
            raw = cluster.get_or_none(object_path("apps", "v1", "deployments", ref.namespace, ref.name))
            dep = Deployment.read(raw) if raw is not None else None
        except (ApiError, Unreadable):
            continue
        if dep is None or _rolled_out(dep):
            continue
        diag = diagnose.deployment(cluster, ref.namespace, ref.name, explain_log=explain)
        if diag.causes and (dep.status.available == 0 or any(c.kind == "log" for c in diag.causes)):
            out.append(Result(TIER, diag.display, FAIL, f"not available: {diag.causes[0].text()}",
                              diag.lines()[2:]))
    return out
