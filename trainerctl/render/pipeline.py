"""render(): source -> work copy -> params overrides -> kustomize each set -> one labelled object list.

Every run builds a fresh work copy (never the cache), so an override left out next time reverts,
and the cache's digest stays what `trainerctl fetch` recorded. The manifests tree is copied once,
hashed while it is copied, and each set is built once.
"""

from __future__ import annotations

import re
import shutil
import tempfile
from pathlib import Path

import yaml

from trainerctl import ui
from trainerctl.errors import InputError, TrainerctlError
from trainerctl.kustomize import build
from trainerctl.render.assets import asset_dir
from trainerctl.render.images import ImageOverrides, check_registry, image_origins, kustomize_image_entry
from trainerctl.render.controller import apply_manager_options
from trainerctl.render.options import COMPONENTS, RenderOptions, RenderResult, SourceInfo
from trainerctl.render.params_env import ParamsEnv, apply_overrides, check_images, image_keys
from trainerctl.render.overlay import choose_overlay, sort_options, wrapper_kustomization, write_kustomization
from trainerctl.render.runtime_compat import compatible_runtimes
from trainerctl.source import (
    DEFAULT_LOCK_FILE,
    SourceTree,
    check_tree,
    git_source,
    local_source,
    read_lock,
    resolve_source,
)

# Our sets ship their images as generated ConfigMaps (the replacements' source); those are
# render inputs, not objects to install.
_DROP_CONFIGMAPS_FROM = ("runtimes", "imagestreams")


def _resolve(options: RenderOptions) -> SourceTree:
    lock = None
    lock_path = Path(options.lock_file or DEFAULT_LOCK_FILE)
    if options.source_path:
        lock = read_lock(lock_path) if options.use_lock else None
        if lock is not None:  # a lock is a promise about the source; a checkout cannot keep it
            raise InputError(
                f"{lock_path} pins {lock.url} {lock.ref}, but --source {options.source_path} is a local checkout "
                f"that the lock cannot verify: render the locked source, or pass --no-lock"
            )
        return local_source(Path(options.source_path))
    url, ref = git_source(options.source_url, options.ref)
    if options.use_lock:
        lock = read_lock(lock_path)
        if lock is not None and not lock.applies_to(url, ref):
            raise InputError(
                f"{lock_path} pins {lock.url} {lock.ref}, not {url} {ref}: render that source, "
                f"update the lock (trainerctl fetch / render --update-lock), or pass --no-lock"
            )
    return resolve_source(url, ref, cache_dir=options.cache_dir, lock=lock, refresh=options.refresh,
                          offline=options.offline)


def _component_releases(manifests: Path) -> list[dict]:
    """component_metadata.yaml's releases (name, version, repoUrl), as the Go operator reports them."""
    try:
        data = yaml.safe_load((manifests / "component_metadata.yaml").read_text(encoding="utf-8"))
        releases = data["releases"]
    except (OSError, KeyError, TypeError, yaml.YAMLError):
        return []
    out = []
    for rel in releases if isinstance(releases, list) else ():
        if isinstance(rel, dict) and rel.get("version") is not None:
            out.append({k: str(rel[k]) for k in ("name", "version", "repoUrl") if rel.get(k) is not None})
    return out


def _apply_params(work: Path, overrides: ImageOverrides) -> dict[str, str]:
    """Apply the params overrides; returns image -> "params.env KEY (file)" for the image values the
    source ships (before the overrides), so the render can say where an image came from."""
    applied: set[str] = set()
    shipped: dict[str, str] = {}
    for params_file in sorted(work.rglob("params.env")):
        shown = str(params_file.relative_to(work)).removeprefix("upstream/manifests/")
        params = ParamsEnv.load(params_file)
        for key in image_keys(params):
            value = params.get(key)
            if value:
                shipped.setdefault(value, f"params.env {key} ({shown})")
        applied |= apply_overrides(params_file, overrides.params)
        check_images(params_file)
    missing = sorted(set(overrides.explicit_params) - applied)
    if missing:
        raise InputError(
            f"--image {missing[0]}: no params.env of this render has that key "
            f"(use a RELATED_IMAGE_* variable, a params.env key, or an image name with '/')"
        )
    return shipped


def _cluster_scoped(objects: list[dict]) -> set[tuple[str, str]]:
    """(group, kind) of the cluster-scoped custom resources the rendered CRDs define.

    kustomize does not know custom kinds' scope, so a `namespace:` overlay stamps a namespace
    on e.g. ClusterTrainingRuntimes; identity must ignore it for those kinds.
    """
    return {
        ((o.get("spec") or {}).get("group"), ((o.get("spec") or {}).get("names") or {}).get("kind"))
        for o in objects
        if o.get("kind") == "CustomResourceDefinition" and (o.get("spec") or {}).get("scope") == "Cluster"
    }


def _identity(obj: dict, cluster_scoped: set[tuple[str, str]] = frozenset()) -> tuple:
    meta = obj.get("metadata") or {}
    group = str(obj.get("apiVersion", "")).rpartition("/")[0]
    namespace = None if (group, obj.get("kind")) in cluster_scoped else meta.get("namespace")
    return group, obj.get("kind"), namespace, meta.get("name")


def _merge(components: dict[str, list[dict]]) -> list[dict]:
    """manifests, then runtimes, then imagestreams; our objects replace upstream ones of the same identity.

    The opendatahub-io/trainer odh-3.4/3.5 rhoai overlay ships runtimes and ImageStreams of its
    own under the names ours use; ours carry the RELATED_IMAGE_* params, so ours win.
    """
    manifests = components.get("manifests", [])
    scoped = _cluster_scoped(manifests)
    ours = {_identity(o, scoped) for name in _DROP_CONFIGMAPS_FROM for o in components.get(name, ())}
    kept = [o for o in manifests if _identity(o, scoped) not in ours]
    if len(kept) != len(manifests):
        ui.info(f"render: {len(manifests) - len(kept)} upstream object(s) replaced by trainerctl's runtimes/imagestreams")
        components["manifests"] = kept
    return [o for name in COMPONENTS for o in components.get(name, ())]


def _drop_openshift_only(objects: list[dict], platform: str) -> list[dict]:
    """Upstream's rhoai overlay bundles ImageStreams; a plain Kubernetes API server cannot take
    them, so they leave the render unless the target is OpenShift."""
    if platform == "openshift":
        return objects
    kept = [o for o in objects if not str(o.get("apiVersion", "")).split("/")[0].endswith(".openshift.io")]
    if len(kept) != len(objects):
        ui.info(f"render: {len(objects) - len(kept)} OpenShift-only object(s) left out (--platform openshift keeps them)")
    return kept


def _apply_manager(objects: list[dict], options: RenderOptions) -> list[dict]:
    """Hook for manager options (issue 6): patch the controller Deployment, add the PDB."""
    if not options.manager:
        return objects
    patched = apply_manager_options(objects, options.manager)
    key, value = options.owner_label
    for obj in patched:
        obj.setdefault("metadata", {}).setdefault("labels", {})[key] = value
    return patched


def _in_user_terms(exc: TrainerctlError, work: Path, source: SourceTree) -> TrainerctlError:
    """The same error, naming the files the user gave instead of the render's work copy.

    The work dir holds upstream/manifests (a copy of the source), runtimes/ and imagestreams/
    (copies of ours) and trainerctl/<set>/ (our wrapper overlays, which reach the others
    through ../../).
    """
    places = {"upstream/manifests": str(source.manifests),
              "runtimes": str(asset_dir("runtimes")), "imagestreams": str(asset_dir("imagestreams"))}
    prefix = re.escape(str(work)) + r"(?:/trainerctl/[a-z]+/\.\./\.\.)?/"

    def swap(match: re.Match) -> str:
        rest = match.group(1)
        return places[rest] if rest in places else "trainerctl's overlay for " + rest.rsplit("/", 1)[-1]

    message = re.sub(prefix + r"(upstream/manifests|runtimes|imagestreams|trainerctl/[a-z]+)", swap, str(exc))
    message = message.replace(str(work), "(render work copy)")  # never show a temp path
    exc.args = (message,)
    return exc


def render(options: RenderOptions | None = None) -> RenderResult:
    options = options or RenderOptions()
    platform, components = options.platform_components()
    owner_label = options.owner_label
    overrides = options.overrides  # resolved (and checked) when the options were made
    source = _resolve(options)
    rendered: dict[str, list[dict]] = {}
    with tempfile.TemporaryDirectory(prefix="trainerctl-render-") as tmp:
        work = Path(tmp)
        try:
            manifests = work / "upstream" / "manifests"
            digest = check_tree(source, copy_to=manifests)
            overlay = choose_overlay(manifests, options.overlay)
            sets: dict[str, tuple[str, Path]] = {}
            if "manifests" in components:
                sets["manifests"] = (f"../../upstream/manifests/{overlay}", manifests / overlay)
            for name in ("runtimes", "imagestreams"):
                if name in components:
                    shutil.copytree(asset_dir(name), work / name)
                    sets[name] = (f"../../{name}", work / name)
            shipped = _apply_params(work, overrides)
            for name, (resource, directory) in sets.items():
                images = None
                if name == "manifests" and overrides.images:
                    images = [kustomize_image_entry(n, ref) for n, ref in sorted(overrides.images.items())]
                wrapper = wrapper_kustomization(
                    resource,
                    owner_label=owner_label,
                    namespace=None if name == "runtimes" else options.namespace,
                    sort=sort_options(directory),
                    images=images,
                )
                objects = build(str(write_kustomization(work / "trainerctl" / name, wrapper)),
                                remote_mirrors=list(options.remote_mirrors))
                if name in _DROP_CONFIGMAPS_FROM:
                    objects = [o for o in objects
                               if not (o.get("kind") == "ConfigMap" and o.get("apiVersion") == "v1")]
                rendered[name] = objects
            releases = _component_releases(manifests)
            # The Trainer version: component_metadata.yaml's first release, else the ref.
            trainer_version = releases[0]["version"] if releases else source.ref
        except TrainerctlError as exc:
            raise _in_user_terms(exc, work, source) from None
    if "manifests" in rendered:  # before merging, so components["manifests"] has the patches too
        rendered["manifests"] = _apply_manager(rendered["manifests"], options)
    if "manifests" in rendered:
        rendered["manifests"] = _drop_openshift_only(rendered["manifests"], platform)
        if "runtimes" in rendered:
            rendered["runtimes"] = compatible_runtimes(rendered["runtimes"], rendered["manifests"],
                                                       source.ref or str(source.manifests))
    objects = _merge(rendered)
    unlabelled = [o for o in objects if (o.get("metadata", {}).get("labels") or {}).get(owner_label[0]) != owner_label[1]]
    if unlabelled:  # prune and uninstall find objects by this label: never emit one without it
        raise TrainerctlError(f"render: {len(unlabelled)} object(s) lack the ownership label, e.g. {_identity(unlabelled[0])}")
    if options.require_registry:
        check_registry(objects, options.require_registry)
    info = SourceInfo(
        url=source.url,
        ref=source.ref,
        commit=source.commit,
        digest=digest,
        overlay=overlay,
        trainer_version=trainer_version,
        path=None if source.url else str(source.manifests),
        releases=tuple(releases),
        images=image_origins(objects, overrides, shipped),
    )
    return RenderResult(objects, rendered, info, options.namespace, owner_label, platform)
