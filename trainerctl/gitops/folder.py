"""Reading a folder `render --output-dir` wrote back into objects (`-f DIR` of install, diff,
upgrade-check): a GitOps folder's stages in order, each built with trainerctl's kustomize exactly
as the engine builds it, or a plain folder's kustomization.

A CI job can then check a pull request that changes the folder against each live cluster before
the engine applies it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from trainerctl.trust.bounded_read import os_problem
from trainerctl.errors import InputError
from trainerctl.kustomize import KustomizeError, build
from trainerctl.kustomize.yamlio import load
from trainerctl.gitops.layout import ANNOTATION_PREFIX, ENGINE_ANNOTATION, STAGES_DIR
from trainerctl.render.controller.validate import type_name
from trainerctl.render.output import our_index


@dataclass
class Folder:
    objects: list[dict]
    engine: str | None  # "flux" | "argocd" | None (a plain --output-dir folder)
    provenance: dict[str, str] = field(default_factory=dict)  # source, ref, commit, ... (trainerctl.io/ annotations)


def load_folder(path: str | Path, shown: str | None = None) -> Folder:
    path = Path(path)
    shown = shown or f"-f {path}"
    index = path / "kustomization.yaml"
    text = our_index(index)
    if text is None:
        raise InputError(f"{shown}: a directory not written by `trainerctl render --output-dir`; expected a YAML file or such a folder")
    try:
        doc = load(text, str(index))
    except KustomizeError as exc:
        raise InputError(f"{shown}: cannot read {index.name}: {exc}") from None
    annotations = _annotations(doc, f"{shown}: {index.name}")
    engine = annotations.get(ENGINE_ANNOTATION)
    folders = [path]
    try:
        if engine:
            folders = sorted(p.parent for p in (path / STAGES_DIR).glob("*/kustomization.yaml"))
        objects: list[dict] = []
        for folder in folders:
            objects.extend(build(str(folder)))
    except KustomizeError as exc:
        raise InputError(f"{shown}: {exc}") from None
    except OSError as exc:
        raise InputError(f"{shown}: cannot read: {os_problem(exc)}") from None
    if not objects:
        raise InputError(f"{shown}: no objects in the folder")
    provenance = {k[len(ANNOTATION_PREFIX):]: v for k, v in annotations.items()
                  if k.startswith(ANNOTATION_PREFIX) and k != ENGINE_ANNOTATION}
    return Folder(objects, engine, provenance)


def _annotations(doc: object, where: str) -> dict[str, str]:
    """The index's metadata.annotations, each field by the type `render --output-dir` writes: a
    hand-edited index is one line naming the field, never a guess."""
    if doc is None:
        return {}
    if not isinstance(doc, dict):
        raise InputError(f"{where}: expected a Kustomization (a mapping), got {type_name(doc)}")
    meta = doc.get("metadata")
    if meta is None:
        return {}
    if not isinstance(meta, dict):
        raise InputError(f"{where}: metadata: expected a mapping, got {type_name(meta)}")
    annotations = meta.get("annotations")
    if annotations is None:
        return {}
    if not isinstance(annotations, dict) or not all(isinstance(k, str) and isinstance(v, str)
                                                    for k, v in annotations.items()):
        raise InputError(f"{where}: metadata.annotations: expected a mapping of strings, got {type_name(annotations)}")
    return annotations
