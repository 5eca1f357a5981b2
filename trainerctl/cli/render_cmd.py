"""`trainerctl render` and `trainerctl fetch`: flags and config file in, objects or a warm cache out."""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Optional

import typer

from trainerctl.cli import app
from trainerctl.cli.manager_flags import HaOpt, SetOpt, manager_from_flags
from trainerctl.errors import InputError

_SCP_LIKE = re.compile(r"^[A-Za-z0-9._-]+@[A-Za-z0-9.-]+:")


def is_git_url(value: str) -> bool:
    """A --source value that names a git remote (anything else is a local checkout)."""
    return "://" in value or "::" in value or value.startswith("-") or bool(_SCP_LIKE.match(value))


def _pair(value: str, flag: str) -> tuple[str, str]:
    key, sep, val = value.partition("=")
    if not sep or not key:
        raise InputError(f"{flag} {value!r}: expected KEY=VALUE")
    return key, val


def render_options(
    *,
    config_file: Optional[Path] = None,
    source: Optional[str] = None,
    ref: Optional[str] = None,
    overlay: Optional[str] = None,
    namespace: Optional[str] = None,
    platform: Optional[str] = None,
    image: list[str] = (),
    component: list[str] = (),
    owner_label: Optional[str] = None,
    require_registry: Optional[str] = None,
    cache_dir: Optional[Path] = None,
    remote_mirror: list[str] = (),
    offline: bool = False,
    refresh: bool = False,
    lock: Optional[Path] = None,
    no_lock: bool = False,
    set_values: list[str] = (),
    ha: bool = False,
):
    """RenderOptions from trainerctl.yaml overlaid with flags (flags win); shared by install/diff."""
    from trainerctl.config import load_config
    from trainerctl.render import DEFAULT_NAMESPACE, DEFAULT_OWNER_LABEL, RenderOptions

    cfg = load_config(config_file)
    where = str(cfg.path) if cfg.path else "trainerctl.yaml"
    url, path = cfg.source("url"), cfg.source("path")
    if source is not None:
        url, path = (source, None) if is_git_url(source) else (None, source)
    elif url is not None and path is not None:
        raise InputError(f"{where}: source: give either url (with ref) or path, not both")
    if path is not None and ref is not None:
        raise InputError(f"--ref {ref}: a local checkout (--source {path}) has no ref to choose")
    images = dict(cfg.get("images") or {})
    images.update(_pair(v, "--image") for v in image)
    label = owner_label or cfg.get("ownerLabel")
    return RenderOptions(
        source_url=url,
        ref=ref if ref is not None else (None if path else cfg.source("ref")),
        source_path=path,
        overlay=overlay or cfg.get("overlay"),
        namespace=namespace or cfg.get("namespace") or DEFAULT_NAMESPACE,
        platform=platform or cfg.get("platform"),
        images=images,
        components=set(component or cfg.get("components") or ()) or None,
        owner_label=_pair(label, "--owner-label") if label else DEFAULT_OWNER_LABEL,
        cache_dir=cache_dir or cfg.get("cacheDir"),
        require_registry=require_registry or cfg.get("requireRegistry"),
        remote_mirrors=list(remote_mirror or cfg.get("remoteMirrors") or ()),
        offline=offline,
        refresh=refresh,
        lock_file=lock,
        use_lock=not no_lock,
        manager=manager_from_flags(cfg.get("manager"), list(set_values), ha, cfg.path),
    )


# Typer option declarations shared by render and fetch.
CONFIG_OPT = typer.Option(None, "--config", help="Settings file (default: ./trainerctl.yaml when present).")
SOURCE_OPT = typer.Option(
    None, "--source",
    help="Git URL (https://, ssh://, file://…) or a local checkout path. Default: the pinned opendatahub-io/trainer.",
)
REF_OPT = typer.Option(None, "--ref", help="Tag, branch or commit of a git source (default source: odh-3.5.0).")
CACHE_OPT = typer.Option(None, "--cache-dir", help="Source cache (default: $XDG_CACHE_HOME/trainerctl).")
LOCK_OPT = typer.Option(None, "--lock", help="Lock file (default: ./trainerctl.lock).")
NO_LOCK_OPT = typer.Option(False, "--no-lock", help="Ignore the lock file.")


@app.command("render")
def render_command(
    config_file: Optional[Path] = CONFIG_OPT,
    source: Optional[str] = SOURCE_OPT,
    ref: Optional[str] = REF_OPT,
    overlay: Optional[str] = typer.Option(None, "--overlay", help="Upstream overlay dir under manifests/ (default: rhoai, else overlays/manager)."),
    namespace: Optional[str] = typer.Option(None, "--namespace", "-n", help="Install namespace (default: opendatahub)."),
    platform: Optional[str] = typer.Option(None, "--platform", help="openshift or kubernetes (default: kubernetes; adds imagestreams on openshift)."),
    image: list[str] = typer.Option([], "--image", help="KEY=REF: a RELATED_IMAGE_* variable, a params.env key or an image name."),
    component: list[str] = typer.Option([], "--component", "-c", help="Only these sets: manifests, runtimes, imagestreams (repeatable)."),
    owner_label: Optional[str] = typer.Option(None, "--owner-label", help="KEY=VALUE ownership label (default: platform.opendatahub.io/part-of=trainer)."),
    require_registry: Optional[str] = typer.Option(None, "--require-registry", help="Fail unless every image is under this registry (host[:port][/path])."),
    cache_dir: Optional[Path] = CACHE_OPT,
    remote_mirror: list[str] = typer.Option([], "--remote-mirror", help="PREFIX=REPLACEMENT for remote kustomize resources."),
    offline: bool = typer.Option(False, "--offline", help="Never contact the git remote; use the cache."),
    refresh: bool = typer.Option(False, "--refresh", help="Ask the git remote again even when the ref is cached."),
    lock: Optional[Path] = LOCK_OPT,
    no_lock: bool = NO_LOCK_OPT,
    update_lock: bool = typer.Option(False, "--update-lock", help="Write the rendered source to the lock file."),
    output: str = typer.Option("yaml", "--output", "-o", help="yaml or json."),
    output_dir: Optional[Path] = typer.Option(None, "--output-dir", help="Write one file per object (plus kustomization.yaml) here."),
    set_values: list[str] = SetOpt,
    ha: bool = HaOpt,
) -> None:
    """Render the whole install set (upstream overlay, runtimes, imagestreams) to stdout."""
    from trainerctl import ui
    from trainerctl.render import render
    from trainerctl.render.output import FORMATS, write_dir, write_stream

    if output not in FORMATS:
        raise InputError(f"-o {output!r}: expected one of {', '.join(FORMATS)}")
    options = render_options(
        config_file=config_file, source=source, ref=ref, overlay=overlay, namespace=namespace,
        platform=platform, image=image, component=component, owner_label=owner_label,
        require_registry=require_registry, cache_dir=cache_dir, remote_mirror=remote_mirror,
        offline=offline, refresh=refresh, lock=lock, no_lock=no_lock or update_lock,
        set_values=set_values, ha=ha,
    )
    result = render(options)
    if update_lock:
        _write_lock(options, result.source)
    if output_dir is not None:
        files = write_dir(result.objects, output_dir)
        ui.info(f"render: wrote {len(files)} objects to {output_dir}")
    else:
        sys.stdout.write(write_stream(result.objects, output))


def _write_lock(options, info) -> None:
    from trainerctl import ui
    from trainerctl.source import DEFAULT_LOCK_FILE, Lock, write_lock

    if info.url is None:
        raise InputError("--update-lock: a local checkout (--source PATH) has nothing to lock")
    path = Path(options.lock_file or DEFAULT_LOCK_FILE)
    write_lock(path, Lock(info.url, info.ref, info.commit, info.digest))
    ui.info(f"lock: {path} pins {info.url} {info.ref} at {info.commit}")


@app.command("fetch")
def fetch_command(
    config_file: Optional[Path] = CONFIG_OPT,
    source: Optional[str] = SOURCE_OPT,
    ref: Optional[str] = REF_OPT,
    cache_dir: Optional[Path] = CACHE_OPT,
    lock: Optional[Path] = LOCK_OPT,
    no_lock: bool = typer.Option(False, "--no-lock", help="Do not write the lock file."),
) -> None:
    """Fill the source cache (for a later --offline or air-gapped render) and write trainerctl.lock.

    Always asks the remote, so a moved tag is noticed here rather than in an air-gapped render.
    """
    from trainerctl import ui
    from trainerctl.render.pipeline import check_tree, git_source
    from trainerctl.source import DEFAULT_LOCK_FILE, Lock, read_lock, resolve_source, write_lock

    options = render_options(config_file=config_file, source=source, ref=ref, cache_dir=cache_dir, lock=lock)
    if options.source_path:
        raise InputError(f"fetch: --source {options.source_path} is a local checkout; fetch needs a git URL")
    url, ref_ = git_source(options)
    lock_path = Path(options.lock_file or DEFAULT_LOCK_FILE)
    current = read_lock(lock_path)
    tree = resolve_source(
        url, ref_, cache_dir=options.cache_dir, refresh=True,
        lock=current if current is not None and current.applies_to(url, ref_) else None,
    )
    digest = check_tree(tree)
    ui.info(f"fetch: {url} {ref_} -> {tree.commit} ({digest}) in {tree.manifests.parent}")
    if not no_lock:
        write_lock(lock_path, Lock(url, ref_, tree.commit, digest))
        ui.info(f"lock: {lock_path} pins {url} {ref_} at {tree.commit}")
