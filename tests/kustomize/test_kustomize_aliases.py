"""Alias expansion: every YAML input the kustomize reader takes has a bound, and it matches kubectl.

A kustomization file is decoded by go-yaml v2, which refuses a document once too much of what it
decoded came from aliases (decode.go, "document contains excessive aliasing"): trainerctl counts
as it counts (aliases.check_alias_ratio) and refuses the same documents, judged against kubectl's
own message over generated documents around the limit. Resources and patches go through kyaml,
which expands aliases with no bound: kubectl runs out of memory on an alias bomb, trainerctl
refuses it in one line (aliases.NODE_BUDGET). A 1 KB "billion laughs" ends in one line, exit 2.

Fixed seed; TRAINERCTL_HYPOTHESIS_EXAMPLES/10 documents (default 20, what CI runs).
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support import kubectl

EXAMPLES = max(1, int(os.environ.get("TRAINERCTL_HYPOTHESIS_EXAMPLES", "200")) // 10)
RATIO = settings(max_examples=EXAMPLES, derandomize=True, deadline=None, database=None,
                 suppress_health_check=[HealthCheck.too_slow])

BOMB = "".join(["a0: &a0 [x, x, x, x, x, x, x, x, x]\n"] + [
    f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]\n" for i in range(1, 9)])
CM = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n"


def _indent(text: str, by: int) -> str:
    return "".join(" " * by + line + "\n" for line in text.splitlines())


def _trainerctl(root: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, NO_COLOR="1", TRAINERCTL_CACHE_DIR=str(root.parent / "cache"))
    return subprocess.run([sys.executable, "-m", "trainerctl", "kustomize", str(root)],
                          capture_output=True, text=True, env=env, timeout=120)


def _kubectl(root: Path, memory: int | None = None) -> subprocess.CompletedProcess:
    def cap() -> None:  # kubectl has no bound of its own here: keep it from taking the machine
        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))

    return subprocess.run([kubectl.kubectl_binary(), "kustomize", str(root)], capture_output=True,
                          text=True, timeout=120, preexec_fn=cap if memory else None)


def _one_line_exit_2(proc: subprocess.CompletedProcess, needle: str) -> None:
    assert proc.returncode == 2, proc.stderr
    assert proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert needle in lines[0], lines[0]


def _write(root: Path, files: dict[str, str]) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (root / name).write_text(text)
    return root


BOMBS = {
    # kubectl: go-yaml v2 refuses it by its alias ratio
    "kustomization": {"kustomization.yaml": "resources: []\nx:\n" + _indent(BOMB, 2)},
    # kubectl: kyaml expands it until memory runs out
    "resource": {"kustomization.yaml": "resources: [b.yaml]\n", "b.yaml": CM + "data:\n" + _indent(BOMB, 2)},
    "patch": {"kustomization.yaml": "resources: [c.yaml]\npatches:\n- path: p.yaml\n",
              "c.yaml": CM, "p.yaml": CM + "data:\n" + _indent(BOMB, 2)},
    "json6902_ops": {"kustomization.yaml": "resources: [c.yaml]\npatches:\n- path: ops.yaml\n"
                                           "  target: {kind: ConfigMap, name: c}\n",
                     "c.yaml": CM, "ops.yaml": "- op: add\n  path: /data\n  value:\n" + _indent(BOMB, 4)},
}


@pytest.mark.parametrize("where", sorted(BOMBS))
def test_billion_laughs_is_one_line_exit_2(tmp_path, where):
    assert len(BOMB) < 1024
    root = _write(tmp_path / "k", BOMBS[where])
    _one_line_exit_2(_trainerctl(root), "excessive aliasing")
    ref = _kubectl(root, memory=1 << 30)
    assert ref.returncode != 0, "kubectl built an alias bomb"
    if where == "kustomization":
        assert "excessive aliasing" in ref.stderr, ref.stderr[-300:]


def _ratio_document(anchor: int, plain: int, aliases: int, nested: bool, order: int) -> str:
    """A kustomization with an unknown field (both refuse it) holding an anchor of `anchor` items,
    `plain` other items and `aliases` aliases to it (through a mapping when `nested`)."""
    parts = [f"aa: &aa [{', '.join(['x'] * anchor)}]\n",
             f"pp: [{', '.join(['q'] * plain)}]\n" if plain else ""]
    if nested:
        parts.append(f"mm: &mm {{kk: *aa, jj: *aa}}\nbb: [{', '.join(['*mm'] * aliases)}]\n")
    else:
        parts.append(f"bb: [{', '.join(['*aa'] * aliases)}]\n")
    if order:
        parts[1], parts[2] = parts[2], parts[1]
    return "resources: []\nx:\n" + _indent("".join(parts), 2)


@RATIO
@given(st.sampled_from([9, 50, 99, 100, 101, 150, 400]), st.sampled_from([0, 3, 500, 990, 1500, 3000]),
       st.integers(1, 160), st.booleans(), st.integers(0, 1))
def test_kustomization_alias_ratio_as_kubectl(tmp_path_factory, anchor, plain, aliases, nested, order):
    from trainerctl.kustomize import KustomizeError, build_yaml

    root = _write(tmp_path_factory.mktemp("r"), {
        "kustomization.yaml": _ratio_document(anchor, plain, aliases, nested, order)})
    ref = _kubectl(root)
    try:
        build_yaml(str(root))
        raise AssertionError("trainerctl built a kustomization with an unknown field")
    except KustomizeError as exc:
        ours = str(exc)
    assert ref.returncode != 0
    assert ("excessive aliasing" in ours) == ("excessive aliasing" in ref.stderr), (ours, ref.stderr[-300:])
