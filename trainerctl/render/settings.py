"""One request path: a settings file (trainerctl.yaml) overlaid by what a command was given, into
RenderOptions, once.

The command line gives what its flags say (trainerctl.cli.flags); `resolve`
reads the settings file, lets given values win, and makes the RenderOptions, which checks every
value as it is made. `origins` records where each value came from, so an error names the flag
or the settings file and field the user wrote.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Optional, Protocol

from trainerctl import ui
from trainerctl.errors import InputError
from trainerctl.render.config_file import Config, load_config
from trainerctl.render.controller import resolve as resolve_manager
from trainerctl.render.options import CHECKS, DEFAULT_NAMESPACE, RenderOptions, validate_namespace
from trainerctl.render.overrides_file import read_overrides
from trainerctl.source.validate import is_git_url

# RenderOptions field -> its trainerctl.yaml key (fields without one are command-line only).
CONFIG_KEYS = {"namespace": "namespace", "platform": "platform", "components": "components",
               "owner_label": "ownerLabel", "require_registry": "requireRegistry", "overlay": "overlay",
               "require_digests": "requireDigests",
               "cache_dir": "cacheDir", "remote_mirrors": "remoteMirrors", "images": "images", "manager": "manager"}


class SourceRequest(Protocol):
    """Where the upstream manifests come from, as given (trainerctl.cli.flags.SourceFlags)."""

    config: str | None
    source: str | None
    ref: str | None
    cache_dir: str | None
    lock: str | None
    no_lock: bool


class RenderRequest(Protocol):
    """How to render, as given; None or empty means "not given" (trainerctl.cli.flags.RenderFlags)."""

    overlay: str | None
    platform: str | None
    image: list[str]  # KEY=REF
    remote_mirror: list[str]
    require_registry: str | None
    offline: bool
    refresh: bool
    set_values: list[str]
    ha: bool
    namespace: str | None
    component: list[str]
    owner_label: str | None  # KEY=VALUE
    images_from: str | None  # an image overrides file (trainerctl.images.overrides)
    require_digests: bool


@dataclass
class _NothingGiven:
    """The render flags of a caller that gives none: every one unset."""

    overlay = platform = require_registry = namespace = owner_label = images_from = None
    offline = refresh = ha = require_digests = False
    image: tuple = ()
    remote_mirror: tuple = ()
    set_values: tuple = ()
    component: tuple = ()


def pair(value: str, where: str) -> tuple[str, str]:
    key, sep, val = value.partition("=")
    if not sep or not key:
        raise InputError(f"{where} {value!r}: expected KEY=VALUE")
    return key, val


def namespace_setting(namespace: Optional[str], config_file: Optional[str] = None) -> str:
    """-n, else trainerctl.yaml's namespace, else the default; what every command installs into."""
    if namespace is not None:
        return validate_namespace(namespace)
    cfg = load_config(config_file)
    if cfg.get("namespace") is not None:
        return validate_namespace(cfg.get("namespace"), f"{cfg.path}: namespace:")
    return DEFAULT_NAMESPACE


def _in_file(cfg: Config, key: str) -> str:
    return f"{cfg.path or 'trainerctl.yaml'}: {key}:"


def resolve(source: SourceRequest, render: RenderRequest | None = None,
            flags: Mapping[str, str] | None = None) -> RenderOptions:
    """RenderOptions from the settings file overlaid by the request. `flags` names, per
    RenderOptions field, the flag that sets it (for errors); without it errors name the field."""
    render = render or _NothingGiven()
    flags = dict(flags or {})
    for name, value in (("source_url", source.source), ("ref", source.ref), ("overlay", render.overlay),
                        ("cache_dir", source.cache_dir), ("lock_file", source.lock), ("config", source.config)):
        if value is not None and not str(value).strip():
            raise InputError(f"{flags.get(name, name)} '': expected a value")
    cfg = load_config(source.config)
    given: dict[str, Any] = {
        "overlay": render.overlay, "namespace": render.namespace, "platform": render.platform,
        "components": set(render.component) or None, "require_registry": render.require_registry,
        "require_digests": render.require_digests or None,
        "cache_dir": source.cache_dir, "remote_mirrors": list(render.remote_mirror) or None,
        "owner_label": pair(render.owner_label, flags.get("owner_label", "owner_label"))
        if render.owner_label is not None else None,
    }
    values: dict[str, Any] = {}
    origins: dict[str, str] = {}
    for name, key in CONFIG_KEYS.items():
        if name in ("images", "manager"):
            continue
        from_file = cfg.get(key)
        if name == "owner_label" and from_file is not None:
            from_file = pair(from_file, f"{cfg.path}: {key}:")
        if name == "components" and from_file is not None:
            from_file = set(from_file)
        if from_file is not None and given.get(name) is not None and name in CHECKS:
            CHECKS[name](from_file, _in_file(cfg, key))  # overridden, but a bad value is still an error
        if given.get(name) is not None:
            values[name], origins[name] = given[name], flags.get(name, name)
        elif from_file is not None:
            values[name], origins[name] = from_file, _in_file(cfg, key)
    url, path = cfg.source("url"), cfg.source("path")
    if source.source is not None:
        url, path = (source.source, None) if is_git_url(source.source) else (None, source.source)
        origins["source_path"] = origins["source_url"] = flags.get("source_url", "source")
    else:
        origins["source_path"] = origins["source_url"] = _in_file(cfg, "source")
    if path is not None and source.ref is not None:
        raise InputError(f"{flags.get('ref', 'ref')} {source.ref}: a local checkout "
                         f"({origins['source_path']} {path}) has no ref to choose")
    images = dict(cfg.get("images") or {})
    origins.update({f"images.{key}": f"{_in_file(cfg, 'images')} {key}" for key in images})
    if render.images_from is not None:  # over the settings file, under --image
        if not str(render.images_from).strip():
            raise InputError("--images-from '': expected a file")
        pinned = read_overrides(render.images_from)
        images.update(pinned)
        origins.update({f"images.{key}": f"--images-from {render.images_from}: images: {key}" for key in pinned})
    images.update(pair(v, flags.get("images", "images")) for v in render.image)
    origins["images"] = flags.get("images", "images")
    manager = None
    if cfg.get("manager") is not None or render.set_values or render.ha:  # only then pay for parsing
        manager = resolve_manager(cfg.get("manager"), render.set_values, ha=render.ha,
                                  source=str(cfg.path or "trainerctl.yaml"))
        for warning in manager.warnings:
            ui.warn(warning)
    return RenderOptions(
        source_url=url,
        ref=source.ref if source.ref is not None else (None if path else cfg.source("ref")),
        source_path=path,
        namespace=values.pop("namespace", DEFAULT_NAMESPACE),
        images=images,
        offline=render.offline,
        refresh=render.refresh,
        lock_file=source.lock,
        use_lock=not source.no_lock,
        manager=manager,
        origins=origins,
        remote_mirrors=values.pop("remote_mirrors", None) or [],
        **values,
    )
