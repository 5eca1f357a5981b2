"""render(): source -> params overrides -> kustomize each set -> one labelled object list.

Nothing is copied or written: the params.env edits and trainerctl's wrapper kustomizations are
layered in memory over the source (kustomize.filesys.OverlayFS), so an override left out next
time reverts, the cache's digest stays what `trainerctl fetch` recorded, and every message
names the files the user gave, because those are the paths the engine reads.
"""

from __future__ import annotations

import os
from pathlib import Path

from trainerctl import ui
from trainerctl.cachedir import cache_home
from trainerctl.errors import InputError, TrainerctlError
from trainerctl.kustomize import build
from trainerctl.kustomize.cachedread import resource_cache
from trainerctl.kustomize.filesys import OverlayFS
from trainerctl.parsed_cache import ParsedCache
from trainerctl.render.assets import asset_dir
from trainerctl.render.image_refs import ImageOverrides, check_digests, check_registry, image_origins, kustomize_image_entry
from trainerctl.render.controller import apply_manager_options
from trainerctl.render.render_options import COMPONENTS, RenderOptions, RenderResult, SourceInfo
from trainerctl.render.params_env import ParamsEnv, check_image_values, image_keys
from trainerctl.render.release import component_releases, mismatched_controllers
from trainerctl.render.overlay import add_wrapper, choose_overlay, sort_options, wrapper_kustomization
from trainerctl.render.runtime_compat import compatible_runtimes
from trainerctl.source import (
    DEFAULT_LOCK_FILE,
    SourceTree,
    channel_of,
    check_tree,
    embedded_source,
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
    url, ref = git_source(options.source_url, options.ref, options.channel)
    if options.use_lock:
        lock = read_lock(lock_path)
        if lock is not None and not lock.applies_to(url, ref):
            raise InputError(
                f"{lock_path} pins {lock.url} {lock.ref}, not {url} {ref}: render that source, "
                f"update the lock (trainerctl fetch / render --update-lock), or pass --no-lock"
            )
    # The default channel comes from the copy inside the wheel: no network, no cache (a bad
    # cache dir is still an error: a flag is never silently ignored). --refresh asks the remote,
    # as it does for a cached ref.
    cache_home(options.cache_dir)
    embedded = None if options.refresh else embedded_source(url, ref, lock)
    if embedded is not None:
        return embedded
    return resolve_source(url, ref, cache_dir=options.cache_dir, lock=lock, refresh=options.refresh,
                          offline=options.offline)


def _params_overlay(fs: OverlayFS, roots: list[Path], overrides: ImageOverrides,
                    held: dict[str, set[str]]) -> dict[str, str]:
    """Every params.env under `roots`, with the overrides applied, checked; an edited one goes
    into `fs` in place of the file on disk (in a directory that is real, not a link to it).

    Returns image -> "params.env KEY (file)" for the image values the source ships (before the
    overrides), so the render can say where an image came from; fills `held` with image -> the
    params.env keys that hold it after the overrides (what would change it: `trainerctl images`)."""
    applied: set[str] = set()
    shipped: dict[str, str] = {}
    for i, root in enumerate(roots):
        for path in sorted(root.rglob("params.env")):
            params = ParamsEnv.load(path)
            shown = path.relative_to(root).as_posix() if i == 0 else f"{root.name}/{path.relative_to(root).as_posix()}"
            for key in image_keys(params):
                value = params.get(key)
                if value:
                    shipped.setdefault(value, f"params.env {key} ({shown})")
            changed = {key for key, value in overrides.params.items() if params.set(key, value)}
            check_image_values(params)
            for key in image_keys(params):
                if params.get(key):
                    held.setdefault(params.get(key), set()).add(key)
            if changed:
                fs.add_file(os.path.join(os.path.realpath(path.parent), path.name),
                            params.render().encode("utf-8"))
                applied |= changed
    missing = sorted(set(overrides.explicit_params) - applied)
    if missing:
        raise InputError(
            f"{overrides.key_origins.get(missing[0], f'--image {missing[0]}')}: no params.env of this render has that key "
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


def engine_cache(options: RenderOptions) -> ParsedCache:
    """Where the kustomize engine keeps parses and output between renders: the cache dir."""
    return resource_cache(cache_home(options.cache_dir))


def render(options: RenderOptions | None = None) -> RenderResult:
    options = options or RenderOptions()
    platform, components = options.platform_components()
    owner_label = options.owner_label
    overrides = options.overrides  # resolved (and checked) when the options were made
    source = _resolve(options)
    digest = check_tree(source)
    overlay = choose_overlay(source.manifests, options.overlay)
    sets: dict[str, Path] = {}
    if "manifests" in components:
        sets["manifests"] = source.manifests / overlay
    for name in ("runtimes", "imagestreams"):
        if name in components:
            sets[name] = asset_dir(name)
    fs = OverlayFS()
    held: dict[str, set[str]] = {}
    shipped = _params_overlay(fs, [source.manifests, *(sets[n] for n in sets if n != "manifests")], overrides, held)
    # A fetched repository is untrusted: no base of it may leave it (kubectl's rule for clones).
    repo_root = str(source.manifests.parent) if source.url else None
    rendered: dict[str, list[dict]] = {}
    parsed = engine_cache(options)
    parsed.hold()  # kept for the next render only if this one succeeds
    for name, directory in sets.items():  # one at a time: runtimes and imagestreams share a parent
        images = None
        if name == "manifests" and overrides.images:
            images = [kustomize_image_entry(n, ref) for n, ref in sorted(overrides.images.items())]
        wrapper = wrapper_kustomization(
            directory.name,
            owner_label=owner_label,
            namespace=None if name == "runtimes" else options.namespace,
            sort=sort_options(directory, parsed),
            images=images,
        )
        top = add_wrapper(fs, directory, wrapper, f"trainerctl's overlay for {name}")
        objects = build(top, remote_mirrors=list(options.remote_mirrors), fs=fs,
                        repo_root=repo_root if name == "manifests" else None, parsed_cache=parsed,
                        cache_dir=cache_home(options.cache_dir))
        if name in _DROP_CONFIGMAPS_FROM:
            objects = [o for o in objects
                       if not (o.get("kind") == "ConfigMap" and o.get("apiVersion") == "v1")]
        rendered[name] = objects
    releases = component_releases(source.manifests)
    # The Trainer version: component_metadata.yaml's first release, else the ref.
    trainer_version = releases[0]["version"] if releases else source.ref
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
    if options.require_digests:
        check_digests(objects, options.where("require_digests").rstrip(":"))
    channel = channel_of(digest, prefer=options.channel)
    images = image_origins(objects, overrides, shipped)
    for line in mismatched_controllers(images, overrides.origins, channel):
        ui.warn(f"render: {line}")
    info = SourceInfo(
        url=source.url,
        ref=source.ref,
        commit=source.commit,
        digest=digest,
        overlay=overlay,
        trainer_version=trainer_version,
        path=None if source.url else str(source.manifests),
        releases=tuple(releases),
        images=images,
        embedded=source.embedded,
        channel=channel.name if channel else None,
    )
    parsed.flush()
    return RenderResult(objects, rendered, info, options.namespace, owner_label, platform,
                        image_keys={image: tuple(sorted(keys)) for image, keys in held.items()})
