"""The files of a GitOps folder, as text: deterministic, so a CI job can commit them and a
reviewer reads the diff.

    DIR/kustomization.yaml            the engine's objects (what `kubectl apply -k DIR` or a parent
                                      Flux Kustomization / Argo CD app-of-apps installs); its
                                      metadata names source, ref, commit and images
    DIR/<engine objects>.yaml         Flux: GitRepository (with --gitops-repo), one Kustomization
                                      per stage; Argo CD: the Application
    DIR/fleet/                        Argo CD: an ApplicationSet for every labelled cluster
    DIR/stages/NN-STAGE/              one folder per stage: a file per object + kustomization.yaml
    DIR/stages/kustomization.yaml     Argo CD: every stage (the Application's path)
"""

from __future__ import annotations

from trainerctl.gitops import argocd, flux
from trainerctl.gitops.layout import (ENGINE_ANNOTATION, STAGES_DIR, GitopsSettings, Provenance, Stage,
                                      prepare)
from trainerctl.kustomize.yamlio import dump_all
from trainerctl.render.output import file_names, kustomization_file

FLEET_DIR = "fleet"


def _objects_files(folder: str, objects: list[dict], metadata: dict | None = None) -> dict[str, str]:
    prefix = f"{folder}/" if folder else ""
    names = file_names(objects)
    files = {prefix + name: dump_all([obj]) for obj, name in zip(objects, names)}
    files[prefix + "kustomization.yaml"] = kustomization_file(names, metadata)
    return files


def stage_files(stages: list[Stage], annotate) -> dict[str, str]:
    files: dict[str, str] = {}
    for stage in stages:
        files.update(_objects_files(f"{STAGES_DIR}/{stage.folder}", [annotate(o, stage) for o in stage.objects]))
    return files


def gitops_files(objects: list[dict], source, settings: GitopsSettings, *, namespace: str,
                 owner_label: tuple[str, str]) -> dict[str, str]:
    """Relative path -> text of the folder for `settings.engine`, from a render's objects and SourceInfo."""
    stages = prepare(objects, namespace, owner_label)
    provenance = Provenance.of(source, objects)
    metadata = {"name": "trainer", "annotations": {ENGINE_ANNOTATION: settings.engine, **provenance.annotations()}}
    if settings.engine == "flux":
        files = stage_files(stages, flux.annotate)
        files.update(_objects_files("", flux.engine_objects(stages, settings, provenance, owner_label), metadata))
        return files
    files = stage_files(stages, argocd.annotate)
    # Argo CD's Application builds every stage at once; the waves order them.
    files[f"{STAGES_DIR}/kustomization.yaml"] = kustomization_file([s.folder for s in stages])
    files.update(_objects_files("", argocd.engine_objects(stages, settings, provenance, namespace), metadata))
    files.update(_objects_files(FLEET_DIR, argocd.fleet_objects(stages, settings, provenance, namespace), metadata))
    return files
