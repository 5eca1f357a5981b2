"""`trainerctl images`: list a render's images, pin them to digests, write the overrides, print."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Callable

from trainerctl import ui
from trainerctl.errors import InputError
from trainerctl.images.image_uses import ListedImage, list_images
from trainerctl.images.output import FORMATS, render_output
from trainerctl.images.overrides import overrides_for, verify
from trainerctl.images.pinning import pin_digests
from trainerctl.registry.client import Registries, RegistrySettings
from trainerctl.render.render_options import RenderOptions
from trainerctl.render.overrides_file import write_overrides
from trainerctl.render.pipeline import render


@dataclass(frozen=True)
class ImagesRequest:
    """What `trainerctl images` was asked for, checked before anything is rendered (check())."""

    output: str = "plain"
    pin_digests: bool = False
    write_overrides: str | None = None  # --write-overrides FILE
    registry: RegistrySettings = field(default_factory=RegistrySettings)

    def check(self, rendered_file: bool) -> "ImagesRequest":
        if self.output not in FORMATS:
            raise InputError(f"-o {self.output!r}: expected one of {', '.join(FORMATS)}")
        if self.write_overrides is not None and not self.pin_digests:
            raise InputError("--write-overrides: needs --pin-digests (the overrides pin each image to its digest)")
        if self.write_overrides is not None and rendered_file:
            raise InputError("--write-overrides and -f: the overrides are params.env keys of a render; render "
                             "instead of reading a rendered file")
        if self.write_overrides is not None and not self.write_overrides.strip():
            raise InputError("--write-overrides '': expected a file name")
        if self.pin_digests:
            self.registry.checked()
        return self


@dataclass
class Rendered:
    """The render `images` lists (or a rendered file's objects), and how to render it again with
    more image overrides (for the check that the written overrides pin every image)."""

    objects: list[dict]
    source: dict | None = None
    origins: dict[str, str] | None = None
    image_keys: dict[str, tuple[str, ...]] | None = None
    components: dict[str, list[dict]] | None = None
    rerender: Callable[[dict[str, str]], tuple[list[dict], dict[str, list[dict]]]] | None = None


def render_for_images(options: RenderOptions) -> Rendered:
    """Render as install would, keeping what the listing needs and how to render again with more
    image overrides (each a setting of its own, as `--images-from` gives them)."""
    result = render(options)

    def rerender(overrides: dict[str, str]) -> tuple[list[dict], dict[str, list[dict]]]:
        again = render(dataclasses.replace(options, images={**options.images, **overrides}))
        return again.objects, again.components

    source = {k: v for k, v in dataclasses.asdict(result.source).items() if k != "images" and v not in (None, "")}
    return Rendered(result.objects, source, result.source.images, result.image_keys, result.components, rerender)


def images(rendered: Rendered, request: ImagesRequest) -> tuple[str, list[ListedImage]]:
    """The output text and the images; writes --write-overrides only when every image is pinned
    and a render with the overrides runs exactly the pinned images."""
    listed = list_images(rendered.objects, origins=rendered.origins, image_keys=rendered.image_keys,
                         components=rendered.components)
    if request.pin_digests:
        registries = Registries(request.registry)
        try:
            pin_digests(listed, registries)
        finally:
            registries.close()
    if request.write_overrides is not None:
        overrides = overrides_for(listed)
        verify(listed, overrides, rendered.rerender)
        write_overrides(request.write_overrides, overrides)
        ui.info(f"images: wrote {len(overrides)} override(s) pinning {len(listed)} image(s) to "
                f"{request.write_overrides} (use it with --images-from)")
    return render_output(request.output, listed, rendered.source), listed
