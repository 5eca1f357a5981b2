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
    import dataclasses

    from trainerctl.cli.options import render_options
    from trainerctl.cli.target import target
    from trainerctl.errors import InputError
    from trainerctl.images.run import ImagesRequest, Rendered, images
    from trainerctl.render.pipeline import render as do_render

    request = ImagesRequest(output or "plain", pin_digests, write_overrides, registry.settings()).check(bool(filename))
    if filename:
        if component:
            raise InputError(f"-f {filename} and --component: -f FILE is already rendered (render it with -c instead)")
        goal = target(None, filename, source, render, namespace)
        rendered = Rendered(goal.objects, {"file": filename})
    else:
        render.namespace, render.component = namespace, list(component)
        options = render_options(source, render)
        result = do_render(options)

        def rerender(overrides: dict[str, str]):
            again = do_render(dataclasses.replace(options, images={**options.images, **overrides}))
            return again.objects, again.components

        source_info = {k: v for k, v in dataclasses.asdict(result.source).items() if k != "images" and v not in (None, "")}
        rendered = Rendered(result.objects, source_info, result.source.images, result.image_keys, result.components,
                            rerender)
    text, _ = images(rendered, request)
    sys.stdout.write(text)
