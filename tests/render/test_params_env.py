"""params.env: parse, override and write back with order, comments and blank lines intact."""

from __future__ import annotations

import pytest

from trainerctl.errors import InputError
from trainerctl.render.params_env import ParamsEnv, apply_overrides

TEXT = """# controller
odh-kubeflow-trainer-controller-image=quay.io/opendatahub/trainer:odh-3.5-ea1

  # indented comment
  odh-th-torch-cuda-py312-image=quay.io/a/b:1
with-equals=a=b=c
FROM_ENV
"""


def test_round_trip_is_byte_identical():
    assert ParamsEnv.parse(TEXT).render() == TEXT
    assert ParamsEnv.parse("a=1").render() == "a=1"
    assert ParamsEnv.parse("").render() == ""


def test_parse_follows_kustomize_env_rules():
    params = ParamsEnv.parse(TEXT)
    assert params.keys() == ["odh-kubeflow-trainer-controller-image", "odh-th-torch-cuda-py312-image",
                             "with-equals", "FROM_ENV"]
    assert params.get("with-equals") == "a=b=c"
    assert params.get("odh-th-torch-cuda-py312-image") == "quay.io/a/b:1"
    assert params.get("FROM_ENV") is None and params.get("missing") is None


def test_override_changes_only_that_value():
    params = ParamsEnv.parse(TEXT)
    assert params.set("odh-th-torch-cuda-py312-image", "registry.example.com/x:2")
    assert not params.set("missing", "x")
    assert params.render() == TEXT.replace("quay.io/a/b:1", "registry.example.com/x:2")


def test_multiline_value_is_refused():
    with pytest.raises(InputError, match="single line"):
        ParamsEnv.parse(TEXT, "rhoai/params.env").set("with-equals", "a\nevil=1")


def test_apply_overrides_on_file(tmp_path):
    path = tmp_path / "params.env"
    path.write_text(TEXT)
    assert apply_overrides(path, {"with-equals": "x", "nope": "y"}) == {"with-equals"}
    assert path.read_text() == TEXT.replace("with-equals=a=b=c", "with-equals=x")
    before = path.stat().st_mtime_ns
    assert apply_overrides(path, {"nope": "y"}) == set()
    assert path.stat().st_mtime_ns == before  # nothing to change: not rewritten


def test_override_replaces_the_file_instead_of_writing_into_it(tmp_path):
    """A render's work copy hard-links the cached tree: an edit must never reach the cache."""
    import os

    cached = tmp_path / "cache-params.env"
    cached.write_text(TEXT)
    work = tmp_path / "params.env"
    os.link(cached, work)
    apply_overrides(work, {"with-equals": "x"})
    assert cached.read_text() == TEXT
    assert "with-equals=x" in work.read_text()
