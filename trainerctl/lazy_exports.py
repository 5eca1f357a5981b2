"""A package's public names, each loaded from its module on first use (PEP 562).

A package `__init__` that imported its API eagerly would make every import of one of its light
modules pay for the whole package: `install -f` reads its file with kustomize's YAML reader, and
an eager `trainerctl/kustomize/__init__.py` would load the whole kustomize engine (and render's
the whole render pipeline) on a path that builds nothing."""

from __future__ import annotations

import importlib
import sys
from typing import Any, Callable


def lazy_exports(package: str, where: dict[str, str]) -> Callable[[str], Any]:
    """The module `__getattr__` of `package`: each name in `where` from the module it maps to
    (relative to the package), kept on the package after its first use."""

    def __getattr__(name: str) -> Any:
        if name not in where:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{package}.{where[name]}"), name)
        setattr(sys.modules[package], name, value)
        return value

    return __getattr__
