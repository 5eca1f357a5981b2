"""`trainerctl render`: turn "Trainer at ref X with these images" into the exact objects to install."""

from trainerctl.render.options import (
    COMPONENTS,
    DEFAULT_NAMESPACE,
    DEFAULT_OWNER_LABEL,
    PLATFORMS,
    RenderOptions,
    RenderResult,
    SourceInfo,
)

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


def __getattr__(name: str):
    # The pipeline (and the engine behind it) loads on first use: callers that only need the
    # options and defaults above stay light.
    if name == "render":
        from trainerctl.render.pipeline import render

        return render
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
