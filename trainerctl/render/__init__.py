"""`trainerctl render`: turn "Trainer at ref X with these images" into the exact objects to install.

From Python: `from trainerctl.render import render, RenderOptions`.

The names below load on first use (trainerctl/lazy_exports.py): a light module of this package,
such as the image references, does not load the render pipeline.
"""

from trainerctl.lazy_exports import lazy_exports

_WHERE = {
    "COMPONENTS": "render_options",
    "DEFAULT_NAMESPACE": "render_options",
    "DEFAULT_OWNER_LABEL": "render_options",
    "PLATFORMS": "render_options",
    "RenderOptions": "render_options",
    "RenderResult": "render_options",
    "SourceInfo": "render_options",
    "render": "pipeline",
}
__getattr__ = lazy_exports(__name__, _WHERE)
__all__ = list(_WHERE)
