"""Map keys in kustomize's order: every object goes through go-yaml v2, which prints a map's keys
sorted by its keyList.Less (letters before other runes, runs of digits by value). Go's digits are
unicode.IsDigit (category Nd: Arabic-Indic and mathematical digits are, superscripts and Roman
numerals are not) and a run's value is an int64. Generated ConfigMaps whose keys mix those
classes, built by kubectl and by trainerctl, compared byte for byte.

Runs whose value passes int64 are left out: there the int64 wraps, the order stops being one
(a < b < c < a), and kubectl sorts Go's map in its random order: its output changes from run to
run (docs/kustomize.md)."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from tests.kustomize.test_kustomize_yaml_differential import DIFFERENTIAL, assert_same_as_kubectl

_RUNES = list("ab0019_-.é") + ["²", "٣", "٠", "Ⅳ", "ǅ", "𝟗", "०"]
KEYS = st.one_of(st.text(alphabet=_RUNES, min_size=1, max_size=6),
                 st.integers(0, 2 ** 63 - 1).map(lambda n: f"a{n}"),
                 st.integers(0, 10 ** 25).map(lambda n: f"a{n:030d}"))


def _config_map(name: str, keys: list[str]) -> str:
    # JSON is YAML: every key double-quoted, so none is read as a number or a bool
    return json.dumps({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name},
                       "data": {k: str(i) for i, k in enumerate(keys)}}, ensure_ascii=False) + "\n"


@DIFFERENTIAL
@given(st.lists(st.lists(KEYS, min_size=2, max_size=25, unique=True), min_size=1, max_size=5))
def test_map_keys_sort_as_kubectl_sorts_them(maps):
    assert_same_as_kubectl({f"c{i}.yaml": _config_map(f"c{i}", keys) for i, keys in enumerate(maps)})


def test_keys_of_every_digit_class_sort_as_kubectl_sorts_them():
    assert_same_as_kubectl({"c.yaml": _config_map("c", [
        "a1", "a²", "a٣", "a9223372036854775807", "a10", "a09", "aⅣ", "a0", "a٠٠", "a𝟗", "a0000000000000000000000001"])})
