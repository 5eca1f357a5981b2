"""Bad input through the CLI: one line on stderr naming the file, a non-zero exit, nothing on
stdout, no traceback — and wherever kubectl kustomize rejects the same input, trainerctl rejects
it too (tests/support/kustomize_cases/errors.py; test_kustomize_fixtures checks the message in-process)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.support.kustomize_cases import errors
from tests.support import kubectl

CASES = errors.CASES


@pytest.mark.parametrize("name", sorted(CASES))
def test_bad_input_fails_clearly(tmp_path, name):
    case = CASES[name]
    case.write(tmp_path / "k")
    target = tmp_path / "k" / case.target
    env = dict(os.environ, TRAINERCTL_CACHE_DIR=str(tmp_path / "cache"), NO_COLOR="1")
    proc = subprocess.run([sys.executable, "-m", "trainerctl", "kustomize", str(target)],
                          capture_output=True, text=True, env=env, timeout=60)
    assert proc.returncode != 0
    assert proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    assert case.needle in lines[0], lines[0]
    # The real kustomize refuses the same input (helmCharts needs --enable-helm there).
    ref = kubectl.kustomize(target)
    assert ref.returncode != 0, f"kubectl accepted {name}:\n{ref.stdout[:300]}"


def test_at_least_25_cases():
    assert len(CASES) >= 25
