"""`trainerctl images` (the command body imports what it runs: see cluster_cmd)."""

from __future__ import annotations

import sys

from trainerctl.cli import command
from trainerctl.cli.flags import (
    Component,
    Filename,
    Namespace,
    Output,
    PinDigests,
    RegistryFlags,
    RenderFlags,
    SourceFlags,
    WriteOverrides,
    registry_flags,
    render_flags,
    source_flags,
)
from trainerctl.cli.typer_support import uses


@command("images")
@uses(source_flags, render_flags, registry_flags)
def images_command(
    source: SourceFlags,
    render: RenderFlags,
    registry: RegistryFlags,
    namespace: Namespace = None,
    component: Component = [],  # noqa: B006 (typer reads the default)
    filename: Filename = None,
    output: Output = None,
    pin_digests: PinDigests = False,
    write_overrides: WriteOverrides = None,
) -> None:
    """List every image the install would run, where each runs and what sets it; --pin-digests asks their registries."""
    from trainerctl.cli.options import render_options
    from trainerctl.cli.target import target
    from trainerctl.errors import InputError
    from trainerctl.images.run import ImagesRequest, Rendered, images, render_for_images

    request = ImagesRequest(output or "plain", pin_digests, write_overrides, registry.settings()).check(bool(filename))
    if filename:
        if component:
            raise InputError(f"-f {filename} and --component: -f FILE is already rendered (render it with -c instead)")
        rendered = Rendered(target(None, filename, source, render, namespace).objects, {"file": filename})
    else:
        render.namespace, render.component = namespace, list(component)
        rendered = render_for_images(render_options(source, render))
    text, _ = images(rendered, request)
    sys.stdout.write(text)
