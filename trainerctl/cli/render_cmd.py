"""`trainerctl render` and `trainerctl fetch` (command bodies import what they run: see cluster_cmd)."""

from __future__ import annotations

from trainerctl.cli import command
from trainerctl.cli.flags import GITOPS, RENDER, SOURCE, takes
from trainerctl.errors import InputError
from trainerctl.settings import Settings


@command("render")
@takes(*SOURCE, *RENDER, *GITOPS, "namespace", "components", "owner_label", "output", "output_dir", "update_lock")
def render_command(s: Settings) -> None:
    """Render the whole install set to stdout or a folder.

    The upstream overlay, the runtimes and (for openshift) the ImageStreams: YAML or JSON on stdout, or
    one file per object with --output-dir (with --gitops, a folder for Flux or Argo CD)."""
    from trainerctl import ui
    from trainerctl.cli.options import render_options
    from trainerctl.cli.output import verbatim
    from trainerctl.render.output import FORMATS, check_output_dir, write_dir, write_stream
    from trainerctl.render.pipeline import engine_cache, render
    from trainerctl.source.fetch import check_update_lock, update_lock

    fmt = "yaml" if s.output is None else s.output
    if fmt not in FORMATS:
        raise InputError(f"-o {fmt!r}: expected one of {', '.join(FORMATS)}")
    if s.output is not None and s.output_dir is not None:
        raise InputError("-o and --output-dir: choose one (--output-dir always writes YAML files)")
    if s.output_dir is not None:
        check_output_dir(s.output_dir)
    engine = None
    if any(s.is_set(name) for name in GITOPS):
        from trainerctl.gitops.layout import settings as gitops_settings

        engine = gitops_settings(s.gitops, s.output_dir, repo=s.gitops_repo, branch=s.gitops_branch,
                                 path=s.gitops_path)
    options = render_options(s)
    if s.update_lock:
        check_update_lock(bool(options.source_path))
    result = render(options)
    if s.update_lock:
        update_lock(options.lock_file, result.source)
    if engine is not None:
        from trainerctl.gitops.writer import gitops_files
        from trainerctl.render.output import write_files

        files = gitops_files(result.objects, result.source, engine, namespace=result.namespace,
                             owner_label=result.owner_label)
        write_files(s.output_dir, files)
        ui.info(f"render: wrote a {engine.engine} folder to {s.output_dir} ({len(files)} files)")
    elif s.output_dir is not None:
        files = write_dir(result.objects, s.output_dir)
        ui.info(f"render: wrote {len(files)} objects to {s.output_dir}")
    else:
        verbatim(write_stream(result.objects, fmt, engine_cache(options)))


@command("fetch")
@takes(*SOURCE)
def fetch_command(s: Settings) -> None:
    """Fill the source cache and write trainerctl.lock.

    For a later --offline or air-gapped render. The git remote is always asked, so a moved tag is
    noticed here rather than in the render."""
    from trainerctl.cli.options import render_options
    from trainerctl.source.fetch import fetch

    fetch(render_options(s), write=s.use_lock)
