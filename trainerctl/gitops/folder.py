"""Reading a folder `render --output-dir` wrote back into objects (`-f DIR` of install, diff,
upgrade-check): a GitOps folder's stages in order, each built with trainerctl's kustomize exactly
as the engine builds it, or a plain folder's kustomization.

A CI job can then check a pull request that changes the folder against each live cluster before
the engine applies it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from trainerctl.errors import InputError
from trainerctl.kustomize import KustomizeError, build
from trainerctl.kustomize.yamlio import load
from trainerctl.gitops.layout import ANNOTATION_PREFIX, ENGINE_ANNOTATION, STAGES_DIR
from trainerctl.render.output import is_ours


@dataclass
class Folder:
    objects: list[dict]
    engine: str | None  # "flux" | "argocd" | None (a plain --output-dir folder)
    provenance: dict[str, str] = field(default_factory=dict)  # source, ref, commit, ... (trainerctl.io/ annotations)


def load_folder(path: str | Path, shown: str | None = None) -> Folder:
    path = Path(path)
    shown = shown or f"-f {path}"
    index = path / "kustomization.yaml"
    if not is_ours(index):
        raise InputError(f"{shown}: a directory not written by `trainerctl render --output-dir`; expected a YAML file or such a folder")
    try:
        meta = (load(index.read_text(encoding="utf-8"), str(index)) or {}).get("metadata") or {}
    except (OSError, UnicodeDecodeError, KustomizeError) as exc:
        raise InputError(f"{shown}: cannot read {index.name}: {exc}") from None
    annotations = {k: str(v) for k, v in (meta.get("annotations") or {}).items()}
    engine = annotations.get(ENGINE_ANNOTATION)
    folders = [path]
    if engine:
        folders = sorted(p.parent for p in (path / STAGES_DIR).glob("*/kustomization.yaml"))
    objects: list[dict] = []
    try:
        for folder in folders:
            objects.extend(build(str(folder)))
    except KustomizeError as exc:
        raise InputError(f"{shown}: {exc}") from None
    if not objects:
        raise InputError(f"{shown}: no objects in the folder")
    provenance = {k[len(ANNOTATION_PREFIX):]: v for k, v in annotations.items()
                  if k.startswith(ANNOTATION_PREFIX) and k != ENGINE_ANNOTATION}
    return Folder(objects, engine, provenance)
