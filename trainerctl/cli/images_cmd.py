"""`trainerctl images` (the command body imports what it runs: see cluster_cmd)."""

from __future__ import annotations

from trainerctl.cli import command
from trainerctl.cli.flags import REGISTRY, RENDER, SOURCE, takes
from trainerctl.settings import Settings


@command("images")
@takes(*SOURCE, *RENDER, *REGISTRY, "namespace", "components", "filename", "output", "pin_digests", "write_overrides")
def images_command(s: Settings) -> None:
    """List every image the install would run.

    Where each runs and what sets it; --pin-digests asks their registries for their digests."""
    from trainerctl.cli.options import given_alone, registry_settings, render_options
    from trainerctl.cli.output import verbatim
    from trainerctl.errors import InputError
    from trainerctl.images.pipeline import ImagesRequest, Rendered, images, render_for_images

    request = ImagesRequest(s.output or "plain", s.pin_digests, s.write_overrides,
                            registry_settings(s)).check(bool(s.filename))
    if s.filename:
        if "components" in s.command_line:
            raise InputError(f"-f {s.filename} and --component: -f FILE is already rendered (render it with -c instead)")
        rendered = Rendered(given_alone(s).objects, {"file": s.filename})
    else:
        rendered = render_for_images(render_options(s))
    text, _ = images(rendered, request)
    verbatim(text)  # image references, or a document made by serialize
