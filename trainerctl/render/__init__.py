"""`trainerctl render`: turn "Trainer at ref X with these images" into the exact objects to install.

From Python: `from trainerctl.render import render, RenderOptions`.

The names below load on first use (trainerctl/lazy_exports.py): a light module of this package,
such as the image references, does not load the render pipeline.
"""

from trainerctl.lazy_exports import lazy_exports

_WHERE = {
    "COMPONENTS": "options",
    "DEFAULT_NAMESPACE": "options",
    "DEFAULT_OWNER_LABEL": "options",
    "PLATFORMS": "options",
    "RenderOptions": "options",
    "RenderResult": "options",
    "SourceInfo": "options",
    "render": "pipeline",
}
__getattr__ = lazy_exports(__name__, _WHERE)
__all__ = list(_WHERE)
