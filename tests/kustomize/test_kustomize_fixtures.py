"""Every behaviour fixture (tests/support/kustomize_cases) against the real `kubectl kustomize`.

One kubectl process per fixture; trainerctl runs in-process (the CLI's own exit codes and
one-line messages are checked for the strict-input cases in test_kustomize_strict.py).

Acceptance 1 of the kustomize issue is `test_no_silent_difference`: wherever kubectl exits 0,
trainerctl prints the same bytes or refuses with one line, over every case.
"""

from __future__ import annotations

import subprocess

import pytest

from tests.support.kustomize_cases import Case, all_cases
from tests.support import kubectl

CASES = all_cases()


def _run(case: Case, root):
    from trainerctl.kustomize import KustomizeError, build_yaml

    case.write(root)
    target = root / case.target
    if case.kubectl:
        ref = subprocess.run([kubectl.kubectl_binary(), "kustomize", str(target)],
                             capture_output=True, text=True, timeout=120)
    else:
        ref = subprocess.CompletedProcess([], 1, "", "not asked")
    try:
        ours, error = build_yaml(str(target)), None
    except KustomizeError as exc:
        ours, error = None, str(exc)
    return ref, ours, error


@pytest.fixture(scope="session")
def outcome(tmp_path_factory):
    """Each fixture built once per session by kubectl and by trainerctl."""
    seen: dict[str, tuple] = {}

    def get(name: str, case: Case):
        if name not in seen:
            seen[name] = _run(case, tmp_path_factory.mktemp("k"))
        return seen[name]

    return get


@pytest.mark.parametrize("name", sorted(CASES))
def test_fixture(outcome, name):
    case = CASES[name]
    ref, ours, error = outcome(name, case)
    if case.expect == "same":
        assert ref.returncode == 0, f"kubectl refused: {ref.stderr.strip()[-400:]}"
        assert error is None, f"trainerctl refused: {error}"
        assert ours == ref.stdout
    elif case.expect == "refuse":
        assert ref.returncode != 0, f"kubectl built it:\n{ref.stdout[:400]}"
        assert error is not None, f"trainerctl built it:\n{ours[:400]}"
        assert "\n" not in error and case.needle in error, error
    else:  # ours-refuse: kubectl builds it, trainerctl says why it will not
        assert ref.returncode == 0, ref.stderr
        assert error is not None and "\n" not in error and case.needle in error, error


@pytest.mark.parametrize("name", sorted(CASES))
def test_no_silent_difference(outcome, name):
    """Acceptance 1: over every behaviour fixture, where kubectl builds, trainerctl prints the
    same bytes or refuses with one line."""
    ref, ours, error = outcome(name, CASES[name])
    if ref.returncode == 0:
        if error is None:
            assert ours == ref.stdout
        else:
            assert "\n" not in error


def test_at_least_120_new_fixtures():
    assert len(CASES) >= 120
