"""`trainerctl render` and `trainerctl fetch` (command bodies import what they run: see cluster_cmd)."""

from __future__ import annotations

import sys

from trainerctl.cli import command
from trainerctl.cli.flags import (
    Component,
    GitopsFlags,
    Namespace,
    Output,
    OutputDir,
    OwnerLabel,
    RenderFlags,
    SourceFlags,
    UpdateLock,
    gitops_flags,
    render_flags,
    source_flags,
)
from trainerctl.cli.typer_support import uses
from trainerctl.errors import InputError


@command("render")
@uses(source_flags, render_flags, gitops_flags)
def render_command(
    source: SourceFlags,
    render: RenderFlags,
    gitops: GitopsFlags,
    namespace: Namespace = None,
    component: Component = [],  # noqa: B006 (typer reads the default)
    owner_label: OwnerLabel = None,
    output: Output = None,
    output_dir: OutputDir = None,
    update_lock: UpdateLock = False,
) -> None:
    """Render the whole install set (upstream overlay, runtimes, imagestreams) to stdout."""
    from trainerctl import ui
    from trainerctl.cli.options import render_options
    from trainerctl.render.output import FORMATS, check_output_dir, write_dir, write_stream
    from trainerctl.render.pipeline import engine_cache, render as do_render
    from trainerctl.source.fetch import check_update_lock, update_lock as write_lock

    fmt = "yaml" if output is None else output
    if fmt not in FORMATS:
        raise InputError(f"-o {fmt!r}: expected one of {', '.join(FORMATS)}")
    if output is not None and output_dir is not None:
        raise InputError("-o and --output-dir: choose one (--output-dir always writes YAML files)")
    if output_dir is not None:
        check_output_dir(output_dir)
    engine = None
    if gitops.given():
        from trainerctl.gitops.layout import settings

        engine = settings(gitops.engine, output_dir, repo=gitops.repo, branch=gitops.branch, path=gitops.path)
    if update_lock and source.no_lock:
        raise InputError("--update-lock and --no-lock: choose one")
    if update_lock:
        source.no_lock = True  # the lock is being replaced, not checked
    render.namespace, render.component, render.owner_label = namespace, list(component), owner_label
    options = render_options(source, render)
    if update_lock:
        check_update_lock(bool(options.source_path))
    result = do_render(options)
    if update_lock:
        write_lock(options.lock_file, result.source)
    if engine is not None:
        from trainerctl.gitops.writer import gitops_files
        from trainerctl.render.output import write_files

        files = gitops_files(result.objects, result.source, engine, namespace=result.namespace,
                             owner_label=result.owner_label)
        write_files(output_dir, files)
        ui.info(f"render: wrote a {engine.engine} folder to {output_dir} ({len(files)} files)")
    elif output_dir is not None:
        files = write_dir(result.objects, output_dir)
        ui.info(f"render: wrote {len(files)} objects to {output_dir}")
    else:
        sys.stdout.write(write_stream(result.objects, fmt, engine_cache(options)))


@command("fetch")
@uses(source_flags)
def fetch_command(source: SourceFlags) -> None:
    """Fill the source cache (for a later --offline or air-gapped render) and write trainerctl.lock."""
    from trainerctl.cli.options import render_options
    from trainerctl.source.fetch import fetch

    fetch(render_options(source), write=not source.no_lock)
