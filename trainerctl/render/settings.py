"""RenderOptions from trainerctl.yaml overlaid with command-line values (values win).

Shared by render, fetch, install, diff and upgrade-check, so each reads the file the same way.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Optional

from trainerctl.errors import InputError

_SCP_LIKE = re.compile(r"^[A-Za-z0-9._-]+@[A-Za-z0-9.-]+:")


def is_git_url(value: str) -> bool:
    """A --source value that names a git remote (anything else is a local checkout)."""
    return "://" in value or "::" in value or value.startswith("-") or bool(_SCP_LIKE.match(value))


def pair(value: str, flag: str) -> tuple[str, str]:
    key, sep, val = value.partition("=")
    if not sep or not key:
        raise InputError(f"{flag} {value!r}: expected KEY=VALUE")
    return key, val


def namespace_setting(namespace: Optional[str], config_file: Optional[str] = None) -> str:
    """-n, else trainerctl.yaml's namespace, else the default; what every command installs into."""
    from trainerctl.config import load_config
    from trainerctl.render.options import DEFAULT_NAMESPACE, validate_namespace

    if namespace is not None:
        return validate_namespace(namespace)
    cfg = load_config(config_file)
    if cfg.get("namespace") is not None:
        return validate_namespace(cfg.get("namespace"), f"{cfg.path}: namespace:")
    return DEFAULT_NAMESPACE


def _manager(config, set_values: list[str], ha: bool):
    """Validated ManagerOptions (file < --set, over the --ha preset); warnings go to stderr."""
    from trainerctl import ui
    from trainerctl.manager_options import resolve

    options = resolve(config.get("manager"), set_values, ha=ha, source=str(config.path or "trainerctl.yaml"))
    for warning in options.warnings:
        ui.warn(warning)
    return options


def render_options(
    *,
    config_file: Optional[str | Path] = None,
    source: Optional[str] = None,
    ref: Optional[str] = None,
    overlay: Optional[str] = None,
    namespace: Optional[str] = None,
    platform: Optional[str] = None,
    image: list[str] = (),
    component: list[str] = (),
    owner_label: Optional[str] = None,
    require_registry: Optional[str] = None,
    cache_dir: Optional[str | Path] = None,
    remote_mirror: list[str] = (),
    offline: bool = False,
    refresh: bool = False,
    lock: Optional[str | Path] = None,
    no_lock: bool = False,
    set_values: list[str] = (),
    ha: bool = False,
):
    """RenderOptions from trainerctl.yaml overlaid with these values (None/empty: not given)."""
    from trainerctl.config import load_config
    from trainerctl.render import DEFAULT_NAMESPACE, DEFAULT_OWNER_LABEL, RenderOptions

    for flag, value in (("--source", source), ("--ref", ref), ("--overlay", overlay), ("--cache-dir", cache_dir),
                        ("--lock", lock), ("--config", config_file)):
        if value is not None and not str(value).strip():
            raise InputError(f"{flag} '': expected a value")
    cfg = load_config(config_file)
    url, path = cfg.source("url"), cfg.source("path")
    if source is not None:
        url, path = (source, None) if is_git_url(source) else (None, source)
    if path is not None and ref is not None:
        raise InputError(f"--ref {ref}: a local checkout (--source {path}) has no ref to choose")
    images = dict(cfg.get("images") or {})
    images.update(pair(v, "--image") for v in image)
    label = owner_label if owner_label is not None else cfg.get("ownerLabel")
    manager = None
    if cfg.get("manager") is not None or set_values or ha:  # only then pay for the import
        manager = _manager(cfg, list(set_values), ha)
    return RenderOptions(
        source_url=url,
        ref=ref if ref is not None else (None if path else cfg.source("ref")),
        source_path=path,
        overlay=overlay if overlay is not None else cfg.get("overlay"),
        namespace=namespace if namespace is not None else (cfg.get("namespace") or DEFAULT_NAMESPACE),
        platform=platform if platform is not None else cfg.get("platform"),
        images=images,
        components=set(component or cfg.get("components") or ()) or None,
        owner_label=pair(label, "--owner-label") if label is not None else DEFAULT_OWNER_LABEL,
        cache_dir=cache_dir if cache_dir is not None else cfg.get("cacheDir"),
        require_registry=require_registry if require_registry is not None else cfg.get("requireRegistry"),
        remote_mirrors=list(remote_mirror or cfg.get("remoteMirrors") or ()),
        offline=offline,
        refresh=refresh,
        lock_file=lock,
        use_lock=not no_lock,
        manager=manager,
    )
