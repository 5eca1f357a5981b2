"""Strict input and input limits through the CLI: `trainerctl kustomize` on each
bad kustomization exits 2 with one line on stderr naming the file and the field, prints
nothing on stdout and no traceback. (test_kustomize_fixtures checks kubectl refuses each too.)"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.support.kustomize_cases import strict

BAD = {name: case for name, case in strict.CASES.items() if case.expect == "refuse"}


@pytest.mark.parametrize("name", sorted(BAD))
def test_bad_input_is_one_line_exit_2(tmp_path, name):
    case = BAD[name]
    case.write(tmp_path)
    env = dict(os.environ, NO_COLOR="1", TRAINERCTL_CACHE_DIR=str(tmp_path / "cache"))
    proc = subprocess.run([sys.executable, "-m", "trainerctl", "kustomize",
                           str(tmp_path / case.target)],
                          capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 2, proc.stderr
    assert proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert case.needle in lines[0], lines[0]
    if case.target == ".":
        assert "kustomization.yaml" in lines[0] or "deep.yaml" in lines[0] \
            or "bomb.yaml" in lines[0], lines[0]


def test_deep_nesting_through_the_cli(tmp_path):
    case = strict.CASES["deep_flow_nesting_builds"]
    case.write(tmp_path)
    proc = subprocess.run([sys.executable, "-m", "trainerctl", "kustomize", str(tmp_path)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-500:]
    assert proc.stdout.count("- ") == 2999
