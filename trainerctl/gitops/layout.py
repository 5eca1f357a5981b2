"""The engine-neutral part of a GitOps folder: the render split into trainerctl's install stages,
without the fields controllers write, and what it was rendered from.

The split is trainerctl's own stage policy (which kinds go out together, in which order, and which
objects wait for admission webhooks), read offline: without a cluster to ask, a kind's resource
name comes from the CRD in the render that defines it, else from Kubernetes' own kind-to-resource
rule, which every built-in kind follows.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass, field
from pathlib import Path

from trainerctl.cluster.manager.objects import without_controller_fields
from trainerctl.cluster.manager.plan import ensure_namespace
from trainerctl.cluster.manager.stages import StageSpec, WebhookRules
from trainerctl.cluster.trainer.policy import STAGES
from trainerctl.errors import InputError
from trainerctl.render.image_refs import iter_images
from trainerctl.source.validate import validate_ref, validate_url

ENGINES = ("flux", "argocd")
STAGES_DIR = "stages"
# Written on the engine objects and the folder's kustomization.yaml: what the folder came from.
ANNOTATION_PREFIX = "trainerctl.io/"
ENGINE_ANNOTATION = ANNOTATION_PREFIX + "gitops"


@dataclass(frozen=True)
class GitopsSettings:
    engine: str  # "flux" | "argocd"
    path: str  # the output folder's path inside its git repository, "/"-separated ("" = the root)
    repo: str | None = None  # the repository's URL: Argo CD's repoURL; Flux gets a GitRepository for it
    branch: str = "main"

    def in_repo(self, *parts: str) -> str:
        return posixpath.join(self.path, *parts) if self.path else posixpath.join(*parts)


@dataclass
class Stage:
    spec: StageSpec
    index: int  # the stage's place in trainerctl's order (stable when other stages are empty)
    objects: list[dict] = field(default_factory=list)

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def folder(self) -> str:
        return f"{self.index:02d}-{self.spec.name}"


@dataclass(frozen=True)
class Provenance:
    source: str  # the git URL, or the local checkout's path
    ref: str
    commit: str
    digest: str
    overlay: str
    trainer_version: str
    images: tuple[str, ...]

    @classmethod
    def of(cls, source, objects: list[dict]) -> "Provenance":
        """From a render's SourceInfo and its objects (every container image and ImageStream tag)."""
        images = sorted({image for obj in objects for _path, image in iter_images(obj)})
        return cls(source.url or source.path or "", source.ref or "", source.commit or "", source.digest or "",
                   source.overlay or "", source.trainer_version or "", tuple(images))

    def annotations(self, images: bool = True) -> dict[str, str]:
        """trainerctl.io/ annotations; the image list (long) only where asked for."""
        values = {"source": self.source, "ref": self.ref, "commit": self.commit, "digest": self.digest,
                  "overlay": self.overlay, "trainer-version": self.trainer_version,
                  "images": "\n".join(self.images) if images else ""}
        return {ANNOTATION_PREFIX + k: v for k, v in values.items() if v}


def api_group(obj: dict) -> str:
    return str(obj.get("apiVersion", "")).rpartition("/")[0]


def guess_resource(kind: str) -> str:
    """apimachinery's UnsafeGuessKindToResource: the resource name every built-in kind has."""
    lower = kind.lower()
    if lower.endswith("endpoints"):
        return lower
    if lower.endswith("s"):
        return lower + "es"
    if lower.endswith("y"):
        return lower[:-1] + "ies"
    return lower + "s"


def _rendered_crds(objects: list[dict]) -> dict[tuple[str, str], dict]:
    """(group, kind) -> the spec of the CRD in the render that defines it."""
    out = {}
    for obj in objects:
        if obj.get("kind") == "CustomResourceDefinition":
            spec = obj.get("spec") or {}
            out[(spec.get("group", ""), (spec.get("names") or {}).get("kind", ""))] = spec
    return out


def split_stages(objects: list[dict]) -> list[Stage]:
    """The non-empty stages in trainerctl's order, each with its objects in render order."""
    rules = WebhookRules.from_objects(objects)
    crds = _rendered_crds(objects)
    stages = [Stage(spec, i) for i, spec in enumerate(STAGES)]
    by_name = {s.name: s for s in stages}
    for obj in objects:
        group, kind = api_group(obj), str(obj.get("kind", ""))
        plural = ((crds.get((group, kind)) or {}).get("names") or {}).get("plural") or guess_resource(kind)
        by_name[STAGES.stage_of(kind, group, plural, rules)].objects.append(obj)
    return [s for s in stages if s.objects]


def prepare(objects: list[dict], namespace: str, owner_label: tuple[str, str]) -> list[Stage]:
    """What goes into the folder: every object without the fields controllers write (the engine
    must not fight the cert rotators), the install namespace included, each in its stage.

    kustomize's `namespace:` also lands on custom kinds it cannot know are cluster-scoped; an
    engine would then look for them in a namespace, so it is dropped where a rendered CRD says
    the kind is cluster-scoped. The render's objects are left as they are."""
    crds = _rendered_crds(objects)
    out = []
    for obj in ensure_namespace(objects, namespace, owner_label):
        obj = without_controller_fields(obj, api_group(obj))
        meta = obj.get("metadata") or {}
        if (crds.get((api_group(obj), obj.get("kind"))) or {}).get("scope") == "Cluster" and "namespace" in meta:
            obj["metadata"] = {k: v for k, v in meta.items() if k != "namespace"}
        out.append(obj)
    return split_stages(out)


def with_annotations(obj: dict, annotations: dict[str, str]) -> dict:
    """`obj` with these annotations added (a copy; the caller's object stays as it was)."""
    if not annotations:
        return obj
    out = dict(obj)
    meta = out["metadata"] = dict(out.get("metadata") or {})
    meta["annotations"] = {**(meta.get("annotations") or {}), **annotations}
    return out


def settings(engine: str | None, output_dir: str | None, *, repo: str | None = None, branch: str | None = None,
             path: str | None = None) -> GitopsSettings | None:
    """The --gitops* flags, checked together (one line naming the flag for each mistake)."""
    if engine is None:
        for flag, value in (("--gitops-repo", repo), ("--gitops-branch", branch), ("--gitops-path", path)):
            if value is not None:
                raise InputError(f"{flag}: only with --gitops flux|argocd")
        return None
    if engine not in ENGINES:
        raise InputError(f"--gitops {engine!r}: expected one of {', '.join(ENGINES)}")
    if output_dir is None:
        raise InputError(f"--gitops {engine}: needs --output-dir DIR, the folder to write")
    if engine == "argocd" and not repo:
        raise InputError("--gitops argocd: needs --gitops-repo URL, the repository the Application syncs from")
    for flag, value, check in (("--gitops-repo", repo, validate_url), ("--gitops-branch", branch, validate_ref)):
        try:
            if value is not None:
                check(value)
        except InputError as exc:
            raise InputError(f"{flag}: {exc}") from None
    return GitopsSettings(engine, repo_path(output_dir, path), repo, branch or "main")


def repo_path(directory: str | Path, given: str | None) -> str:
    """The output folder's path inside its git repository: `given` (--gitops-path), else found
    from the enclosing work tree (the nearest parent with .git), as Flux and Argo CD name paths."""
    if given is not None:
        path = given.strip()
        parts = [p for p in path.replace("\\", "/").split("/") if p not in ("", ".")]
        if path.startswith("/") or ".." in parts or "://" in path:
            raise InputError(f"--gitops-path {given!r}: expected the folder's path relative to the repository's root")
        return "/".join(parts)
    start = Path(directory).absolute()
    for parent in (start, *start.parents):
        if (parent / ".git").exists():
            return start.relative_to(parent).as_posix() if start != parent else ""
    raise InputError(f"--output-dir {directory}: not inside a git work tree, so its path in the repository is "
                     "unknown; give it with --gitops-path")
