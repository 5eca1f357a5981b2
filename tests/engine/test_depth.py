"""document_bounds.too_deep, the nesting bound every outside document is held to (-f files, server
answers, kubeconfigs), agrees with the plain recursive definition of depth on any JSON value and
any limit, and finds a too-deep branch wherever it sits."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from tests.cli.test_properties import PROPERTY, json_values
from trainerctl.trust.document_bounds import MAX_DEPTH, too_deep


def _depth(value) -> int:
    """Containers nested: a scalar 0, an empty or flat mapping or list 1."""
    if isinstance(value, dict):
        return 1 + max(map(_depth, value.values()), default=0)
    if isinstance(value, list):
        return 1 + max(map(_depth, value), default=0)
    return 0


@PROPERTY
@given(json_values, st.integers(0, 8))
def test_too_deep_is_depth_over_the_limit(value, limit):
    assert too_deep(value, limit) == (_depth(value) > limit)


def _nested(depth: int, leaf=1):
    value = leaf
    for i in range(depth):
        value = {"k": value} if i % 2 else [value]
    return value


@PROPERTY
@given(st.integers(1, MAX_DEPTH + 40), st.integers(0, 30), st.integers(0, 5))
def test_a_deep_branch_is_found_among_shallow_siblings(depth, siblings, where):
    doc = {"spec": [{"a": i} for i in range(siblings)]}
    doc["spec"].insert(min(where, siblings), _nested(depth))
    assert too_deep(doc) == (depth + 2 > MAX_DEPTH)
    assert not too_deep("scalar", 0) and too_deep({}, 0) and not too_deep({}, 1)
