"""Checks that must pass before anything is written; each failure is one line and exit 3."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from trainerctl.cluster.trainer import dependencies
from trainerctl.cluster.engine.client import ApiError, Cluster, Unreachable
from trainerctl.cluster.engine.discovery import Discovery
from trainerctl.errors import PreflightError

MIN_SERVER = (1, 28)
OPENSHIFT_GROUP = "image.openshift.io"


@dataclass
class PreflightResult:
    server_version: str = ""
    openshift: bool = False
    jobset: str = ""  # "cluster" or "render"
    notes: list[str] = field(default_factory=list)


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
    major = int(re.sub(r"\D.*", "", str(info.get("major", "0"))) or 0)
    minor = int(re.sub(r"\D.*", "", str(info.get("minor", "0"))) or 0)
    return info.get("gitVersion", f"v{major}.{minor}"), (major, minor)


def parse_version(text: str | None) -> tuple[int, int, int] | None:
    m = re.match(r"v?(\d+)\.(\d+)(?:\.(\d+))?", (text or "").strip())
    return (int(m.group(1)), int(m.group(2)), int(m.group(3) or 0)) if m else None


def check_upgrade_path(installed: str | None, target: str | None) -> None:
    """Upstream migrates stored objects in 2.3: 2.0-2.2 must pass through it."""
    old, new = parse_version(installed), parse_version(target)
    if not old or not new:
        return
    if old[:2] in ((2, 0), (2, 1), (2, 2)) and new[:2] > (2, 3):
        raise PreflightError(f"upgrade from Trainer {installed} straight to {target} is not supported: "
                             "upgrade to a 2.3 release first, then to the target")


def unserved_kinds(discovery: Discovery, objects: list[dict]) -> list[str]:
    missing = []
    for obj in objects:
        if discovery.lookup(obj.get("apiVersion", ""), obj.get("kind", "")) is None:
            label = f"{obj.get('kind')} ({obj.get('apiVersion')})"
            if label not in missing:
                missing.append(label)
    return missing


def run(cluster: Cluster, discovery: Discovery, objects: list[dict], *, installed_version: str | None = None,
        target_version: str | None = None, version: tuple[str, tuple[int, int]] | None = None) -> PreflightResult:
    version, (major, minor) = version or server_version(cluster)
    if (major, minor) < MIN_SERVER:
        raise PreflightError(f"server version {version} is too old: Trainer needs Kubernetes "
                             f"{MIN_SERVER[0]}.{MIN_SERVER[1]} or newer")
    result = PreflightResult(server_version=version, openshift=discovery.has_group(OPENSHIFT_GROUP))
    rendered_crds = {(o.get("metadata") or {}).get("name") for o in objects if o.get("kind") == "CustomResourceDefinition"}
    deps = dependencies.check(cluster, discovery, openshift=result.openshift, rendered_crds=rendered_crds)
    if not deps.ok:
        raise PreflightError(deps.line())
    result.jobset = deps.jobset
    missing = unserved_kinds(discovery, objects)
    if missing:
        raise PreflightError(f"the cluster does not serve {', '.join(missing)} and no rendered CRD "
                             "defines it: install the API that provides it (or leave it out of the render)")
    check_upgrade_path(installed_version, target_version)
    return result
