"""The oldest Kubernetes and JobSet a Trainer release works with (data/floors.yaml, with sources),
and the JobSet version a cluster runs when JobSet is installed rather than rendered."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from trainerctl.cluster.client.client import ApiError, Cluster, object_path
from trainerctl.cluster.client.views import Deployment, read_each
from trainerctl.own_data import load_yaml

# How the JobSet release manifests label their controller (every release since v0.8).
JOBSET_DEPLOYMENT_SELECTOR = "app.kubernetes.io/part-of=jobset,control-plane=controller-manager"


@dataclass(frozen=True)
class Floors:
    release: str  # the floors' Trainer major.minor
    kubernetes: tuple[int, int]
    kubernetes_source: str
    jobset: tuple[int, int, int]
    jobset_source: str


def parse_version(text: str | None) -> tuple[int, int, int] | None:
    match = re.match(r"v?(\d+)\.(\d+)(?:\.(\d+))?", (text or "").strip())
    return (int(match.group(1)), int(match.group(2)), int(match.group(3) or 0)) if match else None


@lru_cache(maxsize=1)
def table() -> dict[tuple[int, int], Floors]:
    out = {}
    for release, entry in load_yaml("floors.yaml").items():
        major, minor, _ = parse_version(str(release))
        out[(major, minor)] = Floors(str(release), parse_version(entry["kubernetes"])[:2],
                                     " ".join(entry["kubernetes_source"].split()),
                                     parse_version(entry["jobset"]), " ".join(entry["jobset_source"].split()))
    return out


def for_release(trainer_version: str | None) -> Floors:
    """The floors of this Trainer version's release; a version newer than every entry (or one we
    cannot read) gets the newest entry's."""
    floors = table()
    version = parse_version(trainer_version)
    known = sorted(floors)
    if version is None:
        return floors[known[-1]]
    older = [k for k in known if k <= version[:2]]
    return floors[older[-1]] if older else floors[known[0]]


def installed_jobset(cluster: Cluster) -> tuple[str, str] | None:
    """(version, where) of a JobSet controller already running, read from its image tag; None
    when there is none we can see or its image has no version tag (a digest, as OpenShift's)."""
    try:
        items = cluster.items(object_path("apps", "v1", "deployments", None),
                              query={"labelSelector": JOBSET_DEPLOYMENT_SELECTOR})
    except ApiError as exc:
        if exc.status in (401, 403, 404):
            return None
        raise
    for dep in read_each(Deployment.read, items, []):  # one that does not fit is not a JobSet we can see
        for container in dep.containers:
            image = container.image
            tag = image.rsplit(":", 1)[1] if ":" in image.rsplit("/", 1)[-1] and "@" not in image else ""
            if parse_version(tag) and tag.startswith("v"):
                return tag, f"{dep.display} image {image}"
    return None
