"""The command line's render flags over ./trainerctl.yaml, as RenderOptions (render, fetch, install,
diff, upgrade-check: one request path)."""

from __future__ import annotations

from trainerctl.cli.flags import FIELD_FLAGS
from trainerctl.render.options import RenderOptions
from trainerctl.cli.flags import RenderFlags, SourceFlags
from trainerctl.render.settings import resolve


def render_options(source: SourceFlags, render: RenderFlags | None = None) -> RenderOptions:
    """Errors name the flag, or the settings file and field, the bad value came from."""
    return resolve(source, render, FIELD_FLAGS)
