"""What uses Trainer on a cluster, and the Trainer version each needs (data/consumers.yaml, with
the upstream threads of each floor): the one reading of it.

Kueue is found from its controller Deployment, in any namespace, its version from its image tag.
Before anything is applied, the checklist's `consumers` check refuses a target Trainer older than
an installed Kueue needs (exit 3, naming both versions and the thread; `--allow-breaking` goes
ahead with a warning; a user who may not list Deployments in every namespace is not judged, as
for JobSet's version); after it, verify's consumers tier and `status` warn when the installed
Trainer is too old (verify/consumers.py). A consumer whose version cannot be read (an image by
digest alone) is not judged, and says so.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from trainerctl.cluster.client.client import ApiError, Cluster, object_path
from trainerctl.cluster.client.views import Deployment, read_each
from trainerctl.cluster.trainer.floors import parse_version
from trainerctl.cluster.trainer.preflight import FAIL, OK, WARN, Finding
from trainerctl.own_data import load_yaml
from trainerctl.trust.safe_text import clean

CHECK = "consumers"
# Where a render says which Trainer it is, when its source does not (kubeflow's overlays/manager
# from a local checkout): the SDK's ConfigMap (2.2 on), else the controller image's version tag.
PUBLIC_CONFIGMAP = ("kubeflow-trainer-public", "kubeflow_trainer_version")
CONTROLLER_IMAGE = "trainer-controller-manager"


@lru_cache(maxsize=1)
def table() -> dict:
    return load_yaml("consumers.yaml")


@dataclass(frozen=True)
class Floor:
    since: str  # from this consumer version on ...
    trainer: str  # ... Trainer at least this
    threads: tuple[str, ...]  # the upstream threads that set it, the first one first
    note: str = ""  # what the floor rests on, when the threads alone do not settle it

    def cited(self) -> str:
        """The thread that sets it, and the note: what a refusal or a warning quotes."""
        return self.threads[0] + (f": {' '.join(self.note.split())}" if self.note else "")


@lru_cache(maxsize=1)
def kueue_floors() -> tuple[Floor, ...]:
    return tuple(Floor(f["kueue"], f["trainer"], tuple(f["threads"]), f.get("note") or "")
                 for f in table()["kueue"]["floors"])


def floor_for(version: str) -> Floor | None:
    """The floor of a Kueue version: the highest Trainer any floor at or below it needs."""
    have = parse_version(version)
    if have is None:
        return None
    floors = [f for f in kueue_floors() if have >= parse_version(f.since)]
    return max(floors, key=lambda f: parse_version(f.trainer), default=None)


def below(trainer: str, needed: str) -> bool:
    have, want = parse_version(trainer), parse_version(needed)
    return bool(have and want and have < want)


@dataclass(frozen=True)
class Consumer:
    """One consumer of Trainer found on the cluster."""

    name: str  # "Kueue"
    version: str  # from its image tag; "" when it has none
    where: str  # "Deployment kueue-system/kueue-controller-manager"
    floor: Floor | None  # what its version needs (None: nothing, or its version is not known)

    @property
    def label(self) -> str:
        return f"{self.name} {self.version or '(version unknown)'} ({self.where})"

    def too_new_for(self, trainer: str) -> bool:
        return self.floor is not None and below(trainer, self.floor.trainer)

    def needs_line(self, trainer: str, installed: str) -> str:
        """`installed`: how the Trainer it is compared with is there ("installed", "this install")."""
        assert self.floor is not None
        return (f"{self.label} needs Trainer {self.floor.trainer} or later, and {installed} is Trainer {trainer} "
                f"({self.floor.cited()})")


def _image_version(image: str) -> str:
    """The version tag of an image reference ("" for a digest alone, or a tag that is no version)."""
    last = image.split("@", 1)[0].rsplit("/", 1)[-1]
    tag = last.rsplit(":", 1)[1] if ":" in last else ""
    return tag if parse_version(tag) else ""


def kueue(cluster: Cluster) -> list[Consumer]:
    """Kueue's controller Deployments, in every namespace; an ApiError when they cannot be listed."""
    name = table()["kueue"]["deployment"]
    items = cluster.items(object_path("apps", "v1", "deployments", None), query={"fieldSelector": f"metadata.name={name}"})
    out = []
    for dep in read_each(Deployment.read, items, []):  # one that does not fit is not a Kueue we can judge
        # Kueue's own image, not a sidecar's (an older Kueue ran kube-rbac-proxy beside it).
        images = sorted((c.image for c in dep.containers), key=lambda i: "kueue" not in i.rsplit("/", 1)[-1])
        version = next((v for v in map(_image_version, images) if v), "")
        out.append(Consumer("Kueue", clean(version, 40), dep.display, floor_for(version)))
    return out


@dataclass(frozen=True)
class Found:
    """What the preflight found: the consumers, or why it could not look (or need not)."""

    consumers: tuple[Consumer, ...] = ()
    unreadable: str = ""
    looked: bool = True


def worth_a_look(target: str) -> bool:
    """Whether any consumer could need more than `target` (an unknown one: yes)."""
    return not target or any(below(target, f.trainer) for f in kueue_floors())


def installed(cluster: Cluster, target: str = "") -> Found:
    """The consumers on the cluster; none looked for when no floor is above `target` (a no-op
    install of the newest Trainer asks nothing more). A read the user may not make is said, not
    raised (a user who may install Trainer in one namespace may not list Deployments in all)."""
    if not worth_a_look(target):
        return Found(looked=False)
    try:
        return Found(tuple(kueue(cluster)))
    except ApiError as exc:
        if exc.status in (401, 403):
            return Found(unreadable=f"cannot look for Kueue's Deployment {table()['kueue']['deployment']} in any "
                                    f"namespace: {exc}")
        raise


def render_version(source_version: str | None, objects: list[dict]) -> str:
    """The Trainer version a render installs: its source's (component_metadata.yaml, a tag), else
    the version its public ConfigMap states, else its controller image's version tag; "" unknown."""
    if parse_version(source_version):
        return str(source_version)
    name, key = PUBLIC_CONFIGMAP
    for obj in objects:
        meta = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
        if obj.get("kind") == "ConfigMap" and meta.get("name") == name and isinstance(obj.get("data"), dict):
            value = obj["data"].get(key)
            if isinstance(value, str) and parse_version(value):
                return value
    for obj in objects:
        if obj.get("kind") != "Deployment":
            continue
        spec = ((obj.get("spec") or {}).get("template") or {}).get("spec") or {}
        for container in spec.get("containers") or []:
            image = container.get("image") if isinstance(container, dict) else None
            if isinstance(image, str) and CONTROLLER_IMAGE in image.rsplit("/", 1)[-1] and _image_version(image):
                return _image_version(image)
    return ""


def verdict(found: Found, target: str, allow_breaking: bool) -> Finding:
    """The preflight's: a target older than an installed consumer needs is refused."""
    if not found.looked:
        top = max(kueue_floors(), key=lambda f: parse_version(f.trainer))
        return Finding(CHECK, OK, f"Trainer {target} meets every consumer's floor (the highest: Kueue {top.since} "
                       f"needs Trainer {top.trainer}), so none was looked for")
    if found.unreadable:  # as JobSet's version when its Deployment cannot be read: not judged, and said
        return Finding(CHECK, OK, f"{found.unreadable} (its Trainer floor is not checked)")
    if not found.consumers:
        return Finding(CHECK, OK, "no consumer of Trainer with a version floor found (Kueue)")
    judged = [c for c in found.consumers if c.floor is not None]
    unknown = [c.label for c in found.consumers if c.floor is None and not c.version]
    notes = [f"{label}: not judged (its image has no version tag)" for label in unknown]
    if judged and not target:
        return Finding(CHECK, WARN, f"the render does not say which Trainer it is, so {judged[0].label} (which needs "
                       f"Trainer {judged[0].floor.trainer} or later) is not checked against it", notes)
    refused = [c for c in judged if c.too_new_for(target)]
    if not refused:
        enough = ", ".join(f"{c.label} needs {c.floor.trainer}" for c in judged)
        return Finding(CHECK, OK, f"Trainer {target} is enough" + (f" ({enough})" if enough else "")
                       if judged else "no installed consumer sets a Trainer floor", notes)
    line = refused[0].needs_line(target, "this install")
    more = f"; {len(refused) - 1} more consumer(s) need a newer Trainer" if len(refused) > 1 else ""
    details = [c.needs_line(target, "this install") for c in refused[1:]] + notes
    if allow_breaking:
        return Finding(CHECK, WARN, f"{line}{more} (--allow-breaking: installing it anyway)", details)
    return Finding(CHECK, FAIL, f"{line}{more}: install a Trainer release it works with, or pass --allow-breaking "
                   "to install this one anyway", details)
