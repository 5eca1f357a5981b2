"""`trainerctl render`: turn "Trainer at ref X with these images" into the exact objects to install.

From Python: `from trainerctl.render import render, RenderOptions`.
"""

from trainerctl.render.options import (
    COMPONENTS,
    DEFAULT_NAMESPACE,
    DEFAULT_OWNER_LABEL,
    PLATFORMS,
    RenderOptions,
    RenderResult,
    SourceInfo,
)
from trainerctl.render.pipeline import render

__all__ = [
    "COMPONENTS",
    "DEFAULT_NAMESPACE",
    "DEFAULT_OWNER_LABEL",
    "PLATFORMS",
    "RenderOptions",
    "RenderResult",
    "SourceInfo",
    "render",
]
