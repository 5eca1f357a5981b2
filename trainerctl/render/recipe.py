"""How a render was asked for, as the install history records it, and the same render asked
again from that record (trainerctl rollback).

Recorded: what changes the objects (overlay, platform, sets, the image overrides in effect,
the controller options as given, the owner label, the namespace, mirrors and image rules), not
where things live on this machine (the cache dir, the lock file). RELATED_IMAGE_* variables
that applied are recorded as the overrides they were, so a rollback renders the same images
from any shell. The source (URL, ref, commit, tree digest, embedded) is the render's SourceInfo,
recorded beside it.
"""

from __future__ import annotations

import json
from pathlib import PurePath
from typing import Any, Mapping

from trainerctl.errors import InputError
from trainerctl.owner_label import OwnerLabel
from trainerctl.render.controller import resolve as resolve_manager
from trainerctl.render.images import ENV_PREFIX, related_images
from trainerctl.render.options import RenderOptions


def recipe(options: RenderOptions, *, manager: Mapping[str, Any] | None = None, set_values=(), ha: bool = False,
           overlay: str | None = None) -> dict:
    """What to record of `options` (with the controller options as given, and the overlay the
    render chose)."""
    env = options.environment()
    table = related_images()
    images = {k: v for k, v in env.items() if k in table and v}
    images.update(options.images)
    out: dict[str, Any] = {
        "overlay": overlay or options.overlay or "",
        "platform": options.platform or "kubernetes",
        "images": dict(sorted(images.items())),
        "ownerLabel": "=".join(options.owner_label),
        "namespace": options.namespace,
        "remoteMirrors": list(options.remote_mirrors),
        "requireRegistry": options.require_registry or "",
        "requireDigests": options.require_digests,
        "set": list(set_values),
        "ha": ha,
    }
    if options.components is not None:
        out["components"] = sorted(options.components)
    if manager:
        out["manager"] = json.loads(json.dumps(dict(manager), default=str))
    return out


def options_from(source: Mapping[str, Any], render: Mapping[str, Any], *, what: str, namespace: str,
                 cache_dir: str | None = None, offline: bool = False) -> RenderOptions:
    """The RenderOptions that render a recorded revision again (`what` names it in errors), with
    the environment left out (its overrides were recorded) and no lock file (the record is the pin).
    `namespace`: the history's (a record names its own, which may only have been edited)."""
    if source.get("file") or source.get("folder"):
        shown = source.get("file") or source.get("folder")
        raise InputError(f"{what} was installed from -f {shown}, of which trainerctl keeps no copy: install that "
                         "file again with `trainerctl install -f`")
    if not source.get("path") and not source.get("url"):
        raise InputError(f"{what} records no source to render again (expected a git URL or a local checkout)")
    manager = None
    if render.get("manager") or render.get("set") or render.get("ha"):
        manager = resolve_manager(dict(render.get("manager") or {}), list(render.get("set") or ()),
                                  ha=bool(render.get("ha")), source=f"{what}: render")
    images = {k: v for k, v in (render.get("images") or {}).items()}
    unknown = [k for k in images if k.startswith(ENV_PREFIX) and k not in related_images()]
    if unknown:
        raise InputError(f"{what}: render.images: unknown variable {unknown[0]}")
    label = str(render.get("ownerLabel") or "")
    path = source.get("path") or None
    if path and PurePath(path).name == "manifests":  # the checkout's root: where its commit is read
        path = str(PurePath(path).parent)
    return RenderOptions(
        source_url=None if source.get("path") else source.get("url"),
        ref=None if source.get("path") else source.get("ref") or None,
        source_path=path,
        overlay=render.get("overlay") or source.get("overlay") or None,
        namespace=namespace,
        platform=render.get("platform") or None,
        images=images,
        env={},
        components=frozenset(render["components"]) if render.get("components") is not None else None,
        **({"owner_label": OwnerLabel(*label.split("=", 1))} if "=" in label else {}),
        cache_dir=cache_dir,
        offline=offline,
        use_lock=False,
        require_registry=render.get("requireRegistry") or None,
        require_digests=bool(render.get("requireDigests")),
        remote_mirrors=tuple(render.get("remoteMirrors") or ()),
        manager=manager,
        origins={name: f"{what}: render.{name}" for name in ("platform", "components", "owner_label", "images",
                                                            "require_registry", "overlay")},
    )
