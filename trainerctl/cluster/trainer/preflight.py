"""Checks that must pass before anything is written; each failure is one line and exit 3.

Each check returns a Finding, so `trainerctl check` can list them all while `install` stops at
the first failure: the API server answers, it is at least the Kubernetes the target Trainer
release documents (floors.py), every rendered kind is served, the current user may do what the
install does (operations/access.py), JobSet is there (dependencies.py) at a version the release works
with, the upgrade path is supported; an Istio sidecar-injection label on the namespace is a
warning (the webhooks may become unreachable).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from trainerctl.cluster.operations import access
from trainerctl.cluster.manager.apply import Planned
from trainerctl.cluster.client.client import ApiError, Cluster, Unreachable
from trainerctl.cluster.client.discovery import Discovery
from trainerctl.cluster.client.views import ServerVersion
from trainerctl.cluster.manager.inventory_configmap import NAME as INVENTORY, Inventory
from trainerctl.cluster.manager.objects import Ref
from trainerctl.cluster.trainer import dependencies, floors
from trainerctl.cluster.trainer.go_operator import TRAINER_API
from trainerctl.cluster.trainer.policy import NEVER_PRUNE, STAGES
from trainerctl.errors import EXIT_PREFLIGHT, PreflightError

OPENSHIFT_GROUP = "image.openshift.io"
# Istio injects a sidecar into pods of a namespace labelled so; the sidecar then sits in front of
# the webhook port, and the API server (outside the mesh) may not get through.
ISTIO_LABELS = ("istio-injection", "istio.io/rev")
ISTIO_OPT_OUT = "sidecar.istio.io/inject"

OK, FAIL, WARN = "ok", "fail", "warn"


@dataclass
class Finding:
    check: str  # kubernetes, kinds, permissions, jobset, upgrade-path, istio, ...
    status: str  # ok, fail, warn
    message: str
    details: list[str] = field(default_factory=list)
    exit_code: int = EXIT_PREFLIGHT  # the command's, when this is the refusal (a held lock: 4)
    error: BaseException | None = field(default=None, repr=False, compare=False)  # what install raises

    @property
    def failed(self) -> bool:
        return self.status == FAIL

    def to_dict(self) -> dict:
        return {"check": self.check, "status": self.status, "message": self.message,
                **({"details": self.details} if self.details else {}),
                **({"exitCode": self.exit_code} if self.failed else {})}


def server_version(cluster: Cluster) -> tuple[str, tuple[int, int]]:
    """GET /version: also the reachability and credentials check."""
    try:
        info = cluster.request("GET", "/version", timeout=15)
    except Unreachable as exc:
        raise PreflightError(str(exc)) from None
    except ApiError as exc:
        if exc.status in (401, 403):
            raise PreflightError(str(exc)) from None
        raise PreflightError(f"API server {cluster.server} answered /version with {exc.status}: {exc}") from None
    version = ServerVersion.read(info)  # an answer that does not fit: views.Unreadable, exit 3
    return version.git_version, (version.major, version.minor)


parse_version = floors.parse_version


# -- the checks -------------------------------------------------------------------------------
def kubernetes(version: tuple[str, tuple[int, int]], target_version: str | None) -> Finding:
    text, (major, minor) = version
    floor = floors.for_release(target_version)
    need = f"{floor.kubernetes[0]}.{floor.kubernetes[1]}"
    if (major, minor) < floor.kubernetes:
        return Finding("kubernetes", FAIL, f"server version {text} is too old: Trainer {floor.release} needs "
                       f"Kubernetes {need} or newer ({floor.kubernetes_source})")
    return Finding("kubernetes", OK, f"Kubernetes {text} (Trainer {floor.release} needs {need} or newer)")


def unserved_kinds(discovery: Discovery, objects: list[dict]) -> list[str]:
    missing = []
    for obj in objects:
        if discovery.lookup(obj.get("apiVersion", ""), obj.get("kind", "")) is None:
            label = f"{obj.get('kind')} ({obj.get('apiVersion')})"
            if label not in missing:
                missing.append(label)
    return missing


def kinds(discovery: Discovery, objects: list[dict]) -> Finding:
    missing = unserved_kinds(discovery, objects)
    if missing:
        return Finding("kinds", FAIL, f"the cluster does not serve {', '.join(missing)} and no rendered CRD "
                       "defines it: install the API that provides it (or leave it out of the render)")
    return Finding("kinds", OK, "every rendered kind is served or defined by a rendered CRD")


def access_needs(planned: list[Planned], namespace: str) -> list[access.Need]:
    """What an install reads and writes, before it can tell what exists: each object's resource
    (apply, get), the inventory ConfigMap, and the Go operator's CR (read to refuse a hand-over
    that would fight it). Install asks it when a read was forbidden, to name what is missing;
    `check` asks it always."""
    inventory = f"the inventory ConfigMap {namespace}/{INVENTORY}"
    in_order = sorted(planned, key=lambda p: STAGES.index(p.stage))  # the first missing is the first apply's
    return [*access.apply_needs(in_order),
            access.Need(access.Permission("get", "", "configmaps", namespace), inventory),
            access.Need(access.Permission("patch", "", "configmaps", namespace), inventory),
            access.Need(access.Permission("get", TRAINER_API[0].rpartition("/")[0], "trainers"),
                        "the Go operator's Trainer CR check")]


def change_needs(planned: list[Planned], namespace: str, previous: Inventory | None, prune: bool,
                 will_apply=lambda p: True) -> list[access.Need]:
    """Once the live objects are read: apply what `will_apply` (create what is missing), record the
    inventory, delete what a prune removes. A no-op run needs nothing here, and asks nothing."""
    applied = [p for p in sorted(planned, key=lambda p: STAGES.index(p.stage)) if will_apply(p)]
    needs = [*access.create_needs(applied),
             *(n for n in access.apply_needs(applied) if n.permission.verb == "patch")]
    gone = []
    if prune and previous is not None:
        current = {p.ref.key for p in planned}
        for key, entry in previous.entries.items():
            ref = Ref.from_key(key)
            if key not in current and (ref.group, ref.kind) not in NEVER_PRUNE:
                gone.append((ref, entry.api_version.rpartition("/")[0], entry.resource))
    needs.extend(access.delete_needs(gone))
    if needs:  # anything to do is recorded in the inventory
        inventory = f"the inventory ConfigMap {namespace}/{INVENTORY}"
        needs.append(access.Need(access.Permission("patch", "", "configmaps", namespace), inventory))
        if previous is None:
            needs.append(access.Need(access.Permission("create", "", "configmaps", namespace), inventory))
    return needs


def permissions(cluster: Cluster, needs: list[access.Need]) -> Finding:
    lacking = access.missing(cluster, needs)
    if not lacking:
        return Finding("permissions", OK, f"{len({n.permission for n in needs})} permission(s) checked, none missing")
    user = access.whoami(cluster)
    who = f"user {user}" if user else "the current user"
    return Finding("permissions", FAIL,
                   f"{who} may not {lacking[0].permission.text()}, which this install needs for {lacking[0].why}"
                   + (f"; {len(lacking) - 1} more permission(s) missing" if len(lacking) > 1 else "")
                   + " (nothing was applied; `trainerctl check` lists them all)",
                   [f"{n.permission.text()} (for {n.why})" for n in lacking])


def dependencies_found(cluster: Cluster, discovery: Discovery, objects: list[dict],
                       openshift: bool) -> tuple[Finding, dependencies.DependencyState]:
    rendered_crds = {(o.get("metadata") or {}).get("name") for o in objects if o.get("kind") == "CustomResourceDefinition"}
    deps = dependencies.check(cluster, discovery, openshift=openshift, rendered_crds=rendered_crds)
    if not deps.ok:
        return Finding("dependencies", FAIL, deps.line()), deps
    return Finding("dependencies", OK, f"{deps.message} (JobSet from the {deps.jobset})"), deps


def jobset_version(cluster: Cluster, deps: dependencies.DependencyState, target_version: str | None) -> Finding:
    """JobSet installed rather than rendered must be a release the target Trainer works with."""
    floor = floors.for_release(target_version)
    need = ".".join(map(str, floor.jobset))
    if deps.jobset != "cluster":
        return Finding("jobset", OK, "JobSet comes with this render")
    running = floors.installed_jobset(cluster)
    if running is None:
        return Finding("jobset", OK, f"JobSet's version is not known (no controller image with a version tag "
                       f"found); Trainer {floor.release} needs {need} or newer")
    version, where = running
    if parse_version(version) < floor.jobset:
        return Finding("jobset", FAIL, f"JobSet {version} runs here ({where}), but Trainer {floor.release} needs "
                       f"JobSet {need} or newer ({floor.jobset_source}): upgrade JobSet first")
    return Finding("jobset", OK, f"JobSet {version} (Trainer {floor.release} needs {need} or newer)")


def upgrade_path(installed: str | None, target: str | None) -> Finding:
    """Upstream migrates stored objects in 2.3: 2.0-2.2 must pass through it."""
    old, new = parse_version(installed), parse_version(target)
    if old and new and old[:2] in ((2, 0), (2, 1), (2, 2)) and new[:2] > (2, 3):
        return Finding("upgrade-path", FAIL, f"upgrade from Trainer {installed} straight to {target} is not "
                       "supported: upgrade to a 2.3 release first, then to the target")
    return Finding("upgrade-path", OK, f"from {installed or 'nothing'} to {target or 'the render'}")


def istio(namespace: str, labels: dict, objects: list[dict]) -> Finding:
    """A sidecar-injection label on the namespace (its live `labels`), when a controller pod does
    not opt out."""
    label = next((f"{k}={labels[k]}" for k in ISTIO_LABELS if k in labels and labels[k] != "disabled"), "")
    if not label:
        return Finding("istio", OK, f"namespace {namespace} has no Istio sidecar-injection label")
    exposed = []
    for obj in objects:
        if obj.get("kind") != "Deployment":
            continue
        template = ((obj.get("spec") or {}).get("template") or {}).get("metadata") or {}
        opt_out = {**(template.get("labels") or {}), **(template.get("annotations") or {})}.get(ISTIO_OPT_OUT)
        if str(opt_out).lower() != "false":
            exposed.append(obj["metadata"]["name"])
    if not exposed:
        return Finding("istio", OK, f"namespace {namespace} has {label}, and every controller pod opts out "
                       f"({ISTIO_OPT_OUT}: \"false\")")
    return Finding("istio", WARN, f"namespace {namespace} has {label}: a sidecar in front of the webhook port of "
                   f"{', '.join(exposed)} can keep the API server's webhook calls from reaching it; mark the pods "
                   f"{ISTIO_OPT_OUT}: \"false\" (kubeflow's overlays/kubeflow-platform does) or allow the calls "
                   "in the mesh")
