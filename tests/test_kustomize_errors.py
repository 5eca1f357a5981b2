"""Bad input: one line on stderr naming the file, a non-zero exit, no traceback — and wherever
kubectl kustomize rejects the same input, trainerctl rejects it too."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import kubectl
from tests.support.ktree import write_tree

OK_CM = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm}\n"


def _closed_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


# name -> (files, text the one-line message must contain)
CASES = {
    "missing_resource_file": ({"kustomization.yaml": "resources: [nope.yaml]\n"}, "nope.yaml"),
    "yaml_syntax_error_in_resource": (
        {"kustomization.yaml": "resources: [bad.yaml]\n",
         "bad.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: [oops\n"},
        "bad.yaml"),
    "yaml_syntax_error_in_kustomization": (
        {"kustomization.yaml": "resources:\n- a.yaml\n  - b: [\n"}, "kustomization.yaml"),
    "unknown_kustomization_field": (
        {"kustomization.yaml": "resources: []\nnotAField: 1\n"}, "notAField"),
    "resource_outside_root_via_dotdot": (
        {"sub/kustomization.yaml": "resources: [../outside.yaml]\n", "outside.yaml": OK_CM},
        "outside.yaml"),
    "resource_outside_root_via_symlink": (
        {"sub/kustomization.yaml": "resources: [link.yaml]\n", "outside.yaml": OK_CM},
        "link.yaml"),
    "cycle_between_bases": (
        {"kustomization.yaml": "resources: [a]\n", "a/kustomization.yaml": "resources: [..]\n"},
        "cycle"),
    "duplicate_resource_ids": (
        {"kustomization.yaml": "resources: [a.yaml, b.yaml]\n", "a.yaml": OK_CM, "b.yaml": OK_CM},
        "already registered"),
    "patch_target_absent": (
        {"kustomization.yaml": "resources: [a.yaml]\npatches:\n- path: p.yaml\n", "a.yaml": OK_CM,
         "p.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: other}\ndata: {a: b}\n"},
        "p.yaml"),
    "replacement_source_absent": (
        {"kustomization.yaml": "resources: [a.yaml]\nreplacements:\n- source: {kind: Secret, name: s}\n"
                               "  targets: [{select: {kind: ConfigMap}, fieldPaths: [data.x]}]\n",
         "a.yaml": OK_CM},
        "nothing selected"),
    "replacement_target_field_absent": (
        {"kustomization.yaml": "resources: [a.yaml]\nreplacements:\n- source: {kind: ConfigMap, name: cm}\n"
                               "  targets: [{select: {kind: ConfigMap}, fieldPaths: [data.missing]}]\n",
         "a.yaml": OK_CM},
        "data.missing"),
    "bad_json6902_op": (
        {"kustomization.yaml": "resources: [a.yaml]\npatches:\n- target: {kind: ConfigMap}\n"
                               "  path: ops.yaml\n", "a.yaml": OK_CM,
         "ops.yaml": "- {op: frobnicate, path: /data}\n"},
        "ops.yaml"),
    "json6902_remove_missing_path": (
        {"kustomization.yaml": "resources: [a.yaml]\npatches:\n- target: {kind: ConfigMap}\n"
                               "  path: ops.yaml\n", "a.yaml": OK_CM,
         "ops.yaml": "- {op: remove, path: /data/nothing}\n"},
        "ops.yaml"),
    "unreachable_remote_file": (
        {"kustomization.yaml": "resources: [http://127.0.0.1:PORT/manifests.yaml]\n"},
        "127.0.0.1"),
    "git_ref_that_does_not_exist": (
        {"kustomization.yaml": "resources:\n- file://REPO//base?ref=no-such-ref\n"}, "no-such-ref"),
    "no_kustomization_in_base": (
        {"kustomization.yaml": "resources: [empty]\n", "empty/readme.txt": "x\n"}, "empty"),
    "literal_without_equals": (
        {"kustomization.yaml": "configMapGenerator:\n- {name: c, literals: [novalue]}\n"}, "novalue"),
    "generator_duplicate_key": (
        {"kustomization.yaml": "configMapGenerator:\n- {name: c, literals: [a=1, a=2]}\n"}, "configMapGenerator"),
    "merge_without_base_object": (
        {"kustomization.yaml": "configMapGenerator:\n- {name: c, behavior: merge, literals: [a=1]}\n"},
        "kustomization.yaml"),
    "resource_without_name": (
        {"kustomization.yaml": "resources: [a.yaml]\n", "a.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {}\n"},
        "a.yaml"),
    "resources_not_a_list": ({"kustomization.yaml": "resources: a.yaml\n"}, "resources"),
    "patch_file_missing": (
        {"kustomization.yaml": "resources: [a.yaml]\npatches:\n- path: gone.yaml\n", "a.yaml": OK_CM},
        "gone.yaml"),
    "env_file_missing": (
        {"kustomization.yaml": "configMapGenerator:\n- {name: c, envs: [gone.env]}\n"}, "gone.env"),
    "literal_with_empty_key": (
        {"kustomization.yaml": "configMapGenerator:\n- name: c\n  literals: ['=1']\n"}, "configMapGenerator"),
    "duplicate_mapping_key": (
        {"kustomization.yaml": "resources: [a.yaml]\n",
         "a.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm}\ndata: {a: 1}\ndata: {b: 2}\n"},
        "a.yaml"),
    "helm_charts_unsupported": (
        {"kustomization.yaml": "helmCharts:\n- {name: x, repo: https://example.invalid}\n"}, "helmCharts"),
    "json6902_without_target": (
        {"kustomization.yaml": "resources: [a.yaml]\npatches:\n- patch: '[{\"op\": \"add\", \"path\": \"/data\", \"value\": {}}]'\n",
         "a.yaml": OK_CM},
        "target"),
    "two_kustomization_files": (
        {"kustomization.yaml": "resources: []\n", "kustomization.yml": "resources: []\n"}, "multiple"),
    "bad_sort_order": ({"kustomization.yaml": "sortOptions: {order: random}\n"}, "sortOptions"),
    "missing_directory": ({}, "nowhere"),
}


def _prepare(tmp_path: Path, name: str) -> tuple[Path, str]:
    files, needle = CASES[name]
    port = str(_closed_port())
    repo = tmp_path / "repo"
    if name == "git_ref_that_does_not_exist":
        import git

        r = git.Repo.init(repo)
        write_tree(repo, {"base/kustomization.yaml": "resources: []\n"})
        r.git.add("-A")
        r.index.commit("base")
    files = {k: v.replace("PORT", port).replace("REPO", str(repo)) for k, v in files.items()}
    root = write_tree(tmp_path / "k", files) if files else tmp_path / "k"
    if name == "resource_outside_root_via_symlink":
        os.symlink(root / "outside.yaml", root / "sub" / "link.yaml")
    target = root / "sub" if name.startswith("resource_outside_root") else root
    if name == "missing_directory":
        target = tmp_path / "nowhere"
    return target, needle


@pytest.mark.parametrize("name", sorted(CASES))
def test_bad_input_fails_clearly(tmp_path, name, monkeypatch):
    target, needle = _prepare(tmp_path, name)
    env = dict(os.environ, TRAINERCTL_CACHE_DIR=str(tmp_path / "cache"), NO_COLOR="1")
    proc = subprocess.run([sys.executable, "-m", "trainerctl", "kustomize", str(target)],
                          capture_output=True, text=True, env=env, timeout=60)
    assert proc.returncode != 0
    assert proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    assert needle in lines[0], lines[0]
    # The real kustomize refuses the same input (helmCharts needs --enable-helm there).
    ref = kubectl.kustomize(target)
    assert ref.returncode != 0, f"kubectl accepted {name}:\n{ref.stdout[:300]}"


def test_at_least_25_cases():
    assert len(CASES) >= 25
