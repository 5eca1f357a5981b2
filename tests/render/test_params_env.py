"""params.env: parse, override and write back with order, comments and blank lines intact."""

from __future__ import annotations

import pytest

from trainerctl.errors import InputError
from trainerctl.render.params_env import ParamsEnv

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
