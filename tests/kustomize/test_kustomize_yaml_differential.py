"""Differential property test of the YAML reader: generated documents (tests/support/
yaml_documents.py: every scalar style, comments, anchors, aliases, merges, flow and block
collections, keys of several kinds) built by `kubectl kustomize` and by trainerctl, compared byte
for byte. Where kubectl refuses, trainerctl refuses with one line (exit 2).

Each example is a batch: a kustomization of several files, each of several documents, built by
one kubectl process. A file trainerctl refuses is left out of the batch and given to kubectl
alone, which must refuse it too. The differences this test found are kept as fixed cases in
tests/support/kustomize_cases/yamlsyntax.py (run by test_kustomize_fixtures).

Fixed seed (derandomize) and TRAINERCTL_HYPOTHESIS_EXAMPLES/5 batches per test (default 40, what CI
runs). Run longer with e.g. `TRAINERCTL_HYPOTHESIS_EXAMPLES=5000 pytest tests/kustomize/test_kustomize_yaml_differential.py`.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support import kubectl
from tests.support import yaml_documents as yd

BATCHES = max(1, int(os.environ.get("TRAINERCTL_HYPOTHESIS_EXAMPLES", "200")) // 5)
DIFFERENTIAL = settings(max_examples=BATCHES, derandomize=True, deadline=None, database=None,
                        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                               HealthCheck.filter_too_much])


def _kubectl(root: Path) -> subprocess.CompletedProcess:
    return subprocess.run([kubectl.kubectl_binary(), "kustomize", str(root)],
                          capture_output=True, text=True, timeout=120)


def _ours(root: Path) -> tuple[int, str]:
    """(exit code, stdout or the error line) of `trainerctl kustomize root`, in process."""
    from trainerctl.kustomize import KustomizeError, build_yaml

    try:
        return 0, build_yaml(str(root))
    except KustomizeError as exc:
        return exc.exit_code, str(exc)


def _write(root: Path, kustomization: str, files: dict[str, str]) -> Path:
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    for name, text in files.items():
        (root / name).write_bytes(text.encode("utf-8", "surrogatepass"))
    (root / "kustomization.yaml").write_text(kustomization)
    return root


def _resources(names) -> str:
    return "resources:\n" + "".join(f"- {n}\n" for n in names) if names else "resources: []\n"


def assert_same_as_kubectl(files: dict[str, str], extra: str = "") -> None:
    """Every file of `files` as a resource of one kustomization (with `extra` kustomization
    fields): trainerctl prints kubectl's bytes; a file trainerctl refuses, kubectl refuses too."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "k"
        refused = {}
        for name in files:
            code, out = _ours(_write(root, _resources([name]) + extra, {name: files[name]}))
            if code:
                assert code == 2 and "\n" not in out.strip(), (code, out)
                refused[name] = out
        kept = [n for n in files if n not in refused]
        _write(root, _resources(kept) + extra, {n: files[n] for n in kept})
        ref, (code, out) = _kubectl(root), _ours(root)
        assert ref.returncode == 0 or code != 0, \
            f"trainerctl built what kubectl refuses: {ref.stderr.strip()[-600:]}"
        if ref.returncode == 0:
            assert code == 0, f"trainerctl refused what kubectl builds: {out}"
            assert out == ref.stdout
        else:
            assert code == 2 and "\n" not in out.strip(), out
        for name, why in refused.items():
            _write(root, _resources([name]) + extra, {name: files[name]})
            ref = _kubectl(root)
            assert ref.returncode != 0, f"trainerctl refused what kubectl builds ({why}):\n{files[name]}"


files = st.lists(st.tuples(st.lists(yd.resources, min_size=1, max_size=4), yd.SEPARATORS),
                 min_size=2, max_size=6).map(
    lambda fs: {f"r{i}.yaml": yd.resource_file(f"r{i}", docs, seps) for i, (docs, seps) in enumerate(fs)})


@DIFFERENTIAL
@given(files)
def test_resources_read_as_kubectl_reads_them(files):
    assert_same_as_kubectl(files)


@DIFFERENTIAL
@given(yd.kustomizations)
def test_kustomization_fields_read_as_kubectl_reads_them(fields):
    with tempfile.TemporaryDirectory() as tmp:
        root = _write(Path(tmp) / "k", yd.kustomization_text(fields, ["t.yaml"]), {"t.yaml": yd.TARGET})
        ref, (code, out) = _kubectl(root), _ours(root)
        if ref.returncode == 0:
            assert code == 0, f"trainerctl refused what kubectl builds: {out}"
            assert out == ref.stdout
        else:
            assert code == 2 and "\n" not in out.strip(), \
                f"kubectl refused ({ref.stderr.strip()[-300:]}), trainerctl: {out[:300]}"
