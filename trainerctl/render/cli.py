"""Flags of `trainerctl render` and `trainerctl fetch`, parsed with argparse.

These two commands run in pipelines on every change, so like `trainerctl kustomize` they skip
typer: its parameter machinery imports pydantic (0.1-0.2 s, as long as the render itself takes).
trainerctl.entry calls `run` directly (this module is outside trainerctl.cli, whose import
builds the typer app); the typer commands in cli/render_cmd.py forward here too, so
both paths accept exactly the same flags.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from typing import Optional

from trainerctl.errors import InputError, report

_SCP_LIKE = re.compile(r"^[A-Za-z0-9._-]+@[A-Za-z0-9.-]+:")

RENDER_HELP = "Render the whole install set (upstream overlay, runtimes, imagestreams) to stdout."
FETCH_HELP = "Fill the source cache (for a later --offline or air-gapped render) and write trainerctl.lock."

# (flags, dest, kind, help): kind is "value", "multi" (repeatable) or "flag".
_COMMON = [
    (("--config",), "config_file", "value", "settings file (default: ./trainerctl.yaml when present)"),
    (("--source",), "source", "value",
     "git URL (https://, ssh://, file://…) or a local checkout path (default: the pinned opendatahub-io/trainer)"),
    (("--ref",), "ref", "value", "tag, branch or commit of a git source (default source: odh-3.5.0)"),
    (("--cache-dir",), "cache_dir", "value", "source cache (default: $XDG_CACHE_HOME/trainerctl)"),
    (("--lock",), "lock", "value", "lock file (default: ./trainerctl.lock)"),
]
_RENDER = _COMMON + [
    (("--no-lock",), "no_lock", "flag", "ignore the lock file"),
    (("--overlay",), "overlay", "value", "upstream overlay dir under manifests/ (default: rhoai, else overlays/manager)"),
    (("--namespace", "-n"), "namespace", "value", "install namespace (default: opendatahub)"),
    (("--platform",), "platform", "value", "openshift or kubernetes (default: kubernetes; openshift adds imagestreams)"),
    (("--image",), "image", "multi", "KEY=REF: a RELATED_IMAGE_* variable, a params.env key or an image name (repeatable)"),
    (("--component", "-c"), "component", "multi", "only these sets: manifests, runtimes, imagestreams (repeatable)"),
    (("--owner-label",), "owner_label", "value", "KEY=VALUE ownership label (default: platform.opendatahub.io/part-of=trainer)"),
    (("--require-registry",), "require_registry", "value", "fail unless every image is under this registry (host[:port][/path])"),
    (("--remote-mirror",), "remote_mirror", "multi", "PREFIX=REPLACEMENT for remote kustomize resources (repeatable)"),
    (("--offline",), "offline", "flag", "never contact the git remote; use the cache"),
    (("--refresh",), "refresh", "flag", "ask the git remote again even when the ref is cached"),
    (("--update-lock",), "update_lock", "flag", "write the rendered source to the lock file"),
    (("--output", "-o"), "output", "value", "yaml (default) or json"),
    (("--output-dir",), "output_dir", "value", "write one file per object (plus kustomization.yaml) here"),
    (("--set",), "set_values", "multi", "manager.KEY=VALUE controller option, value in YAML (repeatable; see README)"),
    (("--ha",), "ha", "flag", "highly available controller: 2 replicas, a PodDisruptionBudget, soft anti-affinity"),
]
_FETCH = _COMMON + [(("--no-lock",), "no_lock", "flag", "do not write the lock file")]


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # one line and exit 2, like every other bad input
        raise InputError(f"{self.prog}: {message}")


def build_parser(command: str) -> argparse.ArgumentParser:
    table, description = (_RENDER, RENDER_HELP) if command == "render" else (_FETCH, FETCH_HELP)
    parser = _Parser(prog=f"trainerctl {command}", description=description, allow_abbrev=False)
    for flags, dest, kind, help_text in table:
        if kind == "flag":
            parser.add_argument(*flags, dest=dest, action="store_true", help=help_text)
        elif kind == "multi":
            parser.add_argument(*flags, dest=dest, action="append", default=[], help=help_text)
        else:
            parser.add_argument(*flags, dest=dest, default=None, help=help_text)
    return parser


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
    manager = None
    if cfg.get("manager") is not None or set_values or ha:  # only then pay for the import
        from trainerctl.cli.manager_flags import manager_from_flags

        manager = manager_from_flags(cfg.get("manager"), list(set_values), ha, cfg.path)
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
        manager=manager,
    )


def do_render(args: argparse.Namespace) -> None:
    from trainerctl import ui
    from trainerctl.render import render
    from trainerctl.render.output import FORMATS, write_dir, write_stream

    output = args.output or "yaml"
    if output not in FORMATS:
        raise InputError(f"-o {output!r}: expected one of {', '.join(FORMATS)}")
    options = render_options(
        config_file=args.config_file, source=args.source, ref=args.ref, overlay=args.overlay,
        namespace=args.namespace, platform=args.platform, image=args.image, component=args.component,
        owner_label=args.owner_label, require_registry=args.require_registry, cache_dir=args.cache_dir,
        remote_mirror=args.remote_mirror, offline=args.offline, refresh=args.refresh, lock=args.lock,
        no_lock=args.no_lock or args.update_lock, set_values=args.set_values, ha=args.ha,
    )
    result = render(options)
    if args.update_lock:
        _write_lock(options.lock_file, result.source)
    if args.output_dir is not None:
        files = write_dir(result.objects, args.output_dir)
        ui.info(f"render: wrote {len(files)} objects to {args.output_dir}")
    else:
        sys.stdout.write(write_stream(result.objects, output))


def _write_lock(lock_file, info) -> None:
    from trainerctl import ui
    from trainerctl.source import DEFAULT_LOCK_FILE, Lock, write_lock

    if info.url is None:
        raise InputError("--update-lock: a local checkout (--source PATH) has nothing to lock")
    path = Path(lock_file or DEFAULT_LOCK_FILE)
    write_lock(path, Lock(info.url, info.ref, info.commit, info.digest))
    ui.info(f"lock: {path} pins {info.url} {info.ref} at {info.commit}")


def do_fetch(args: argparse.Namespace) -> None:
    """Always asks the remote, so a moved tag is noticed here rather than in an air-gapped render."""
    from trainerctl import ui
    from trainerctl.render.pipeline import check_tree, git_source
    from trainerctl.source import DEFAULT_LOCK_FILE, Lock, read_lock, resolve_source, write_lock

    options = render_options(config_file=args.config_file, source=args.source, ref=args.ref,
                             cache_dir=args.cache_dir, lock=args.lock)
    if options.source_path:
        raise InputError(f"fetch: --source {options.source_path} is a local checkout; fetch needs a git URL")
    url, ref = git_source(options)
    lock_path = Path(options.lock_file or DEFAULT_LOCK_FILE)
    current = read_lock(lock_path)
    tree = resolve_source(
        url, ref, cache_dir=options.cache_dir, refresh=True,
        lock=current if current is not None and current.applies_to(url, ref) else None,
    )
    digest = check_tree(tree)
    ui.info(f"fetch: {url} {ref} -> {tree.commit} ({digest}) in {tree.manifests.parent}")
    if not args.no_lock:
        write_lock(lock_path, Lock(url, ref, tree.commit, digest))
        ui.info(f"lock: {lock_path} pins {url} {ref} at {tree.commit}")


def parse_and_run(command: str, argv: list[str]) -> None:
    """Parse argv and run the command; TrainerctlError propagates (the caller prints it)."""
    try:
        args = build_parser(command).parse_args(argv)
    except SystemExit as exc:  # --help
        if exc.code not in (0, None):
            raise
        return
    (do_render if command == "render" else do_fetch)(args)


def run(command: str, argv: list[str]) -> int:
    """Entry point for trainerctl.entry: errors become one line and their exit code."""
    return report(parse_and_run, command, argv)
