"""No assert in tests/ that cannot fail, or that says less than it reads as.

An assert is vacuous when its test is always true (a tuple, a truthy constant, a generator, an
f-string, `x or True`), when it compares a thing with itself (`a == a`, `f(x) == f(x)`), or when
`and` binds inside `or` without parentheses: `assert a and b or c` passes whenever `c` does,
though it reads as "a, and b or c". An `or` branch that repeats another branch as one of its
terms (`a or (b and a)`) adds nothing: whatever it was meant to allow is not what it allows.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parents[1]
# Mock methods that do not exist: calling one returns a (truthy) Mock, so the assert always holds.
MOCK_TYPOS = {"called_once_with", "called_with", "called_once", "has_calls", "any_call", "not_called"}


def _offsets(source: bytes) -> list[int]:
    """Byte offset of each line's start (AST columns are UTF-8 byte offsets)."""
    starts, at = [0, 0], 0
    for line in source.splitlines(keepends=True):
        at += len(line)
        starts.append(at)
    return starts


class _Finder:
    def __init__(self, source: str):
        self.source = source.encode()
        self.lines = _offsets(self.source)

    def _at(self, lineno: int, col: int) -> int:
        return self.lines[lineno] + col

    def _gap(self, start: tuple[int, int], end: tuple[int, int]) -> bytes:
        return self.source[self._at(*start):self._at(*end)]

    def _unparenthesized_and(self, node: ast.BoolOp) -> bool:
        """An `and` operand of this `or` written without parentheses of its own."""
        for i, value in enumerate(node.values):
            if not (isinstance(value, ast.BoolOp) and isinstance(value.op, ast.And)):
                continue
            before = (node.lineno, node.col_offset) if i == 0 else \
                (node.values[i - 1].end_lineno, node.values[i - 1].end_col_offset)
            after = (node.end_lineno, node.end_col_offset) if i == len(node.values) - 1 else \
                (node.values[i + 1].lineno, node.values[i + 1].col_offset)
            opened = b"(" in self._gap(before, (value.lineno, value.col_offset))
            closed = b")" in self._gap((value.end_lineno, value.end_col_offset), after)
            if not (opened and closed):
                return True
        return False

    def problems(self, test: ast.expr) -> list[str]:
        found = []
        if isinstance(test, (ast.Tuple, ast.GeneratorExp, ast.Lambda, ast.JoinedStr)) \
                or isinstance(test, (ast.List, ast.Set, ast.Dict)) and (getattr(test, "elts", None) or
                                                                        getattr(test, "keys", None)):
            found.append(f"always true: a {type(test).__name__}")
        found.extend(f"always true: the constant {c.value!r}" for c in _truthy_constants(test))
        for node in ast.walk(test):
            if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.Or):
                if self._unparenthesized_and(node):
                    found.append("`a and b or c`: `and` binds first, so `c` alone passes; parenthesize what is meant")
                whole = {ast.dump(v) for v in node.values}
                for value in node.values:
                    if isinstance(value, ast.BoolOp) and isinstance(value.op, ast.And) \
                            and any(ast.dump(term) in whole for term in value.values):
                        found.append("an `or` branch repeats another branch as one of its terms")
            if isinstance(node, ast.Compare):
                sides = [node.left, *node.comparators]
                for left, op, right in zip(sides, node.ops, sides[1:]):
                    if isinstance(op, (ast.Eq, ast.Is, ast.LtE, ast.GtE)) and ast.dump(left) == ast.dump(right):
                        found.append("compares a thing with itself")
                    if isinstance(op, ast.GtE) and isinstance(left, ast.Call) and getattr(left.func, "id", "") == "len" \
                            and isinstance(right, ast.Constant) and right.value == 0:
                        found.append("len(...) >= 0 always holds")
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in MOCK_TYPOS:
                found.append(f".{node.func.attr}() is no Mock assertion: it returns a truthy Mock")
        return found


def _truthy_constants(test: ast.expr) -> list[ast.Constant]:
    """Truthy constants that decide the assert's truth: the test itself, or a branch of an `or`
    in its and/or skeleton (not `x == (y or "default")`, where the `or` makes a value)."""
    if isinstance(test, ast.Constant):
        return [test] if test.value else []
    if isinstance(test, ast.BoolOp):
        return [c for value in test.values for c in _truthy_constants(value)
                if isinstance(test.op, ast.Or) or c is not value]
    return []


def vacuous(source: str) -> list[tuple[int, str]]:
    """(line, why) for each assert in `source` that cannot fail or says less than it reads as."""
    finder = _Finder(source)
    return [(node.lineno, why) for node in ast.walk(ast.parse(source)) if isinstance(node, ast.Assert)
            for why in finder.problems(node.test)]


@pytest.mark.parametrize("code", [
    "assert (x == 1, 'x is one')",
    "assert a and b or c",
    "assert a or b and c",
    "assert a or b and c or d",
    "assert message and '\\n' not in message.strip() or len(message) < 5000, message",
    "assert a or True",
    "assert a and (b or 1)",
    "assert f(a and b or c)",
    "assert 'always'",
    "assert f'{x}'",
    "assert (y for y in xs)",
    "assert [x]",
    "assert f(x) == f(x)",
    "assert a.b is a.b",
    "assert len(xs) >= 0",
    "assert t == s or (s and not s.endswith('x') and t == s)",
    "assert mock.called_once_with(1)",
])
def test_the_finder_finds_each_form(code):
    assert vacuous(code), code


@pytest.mark.parametrize("code", [
    "assert a and (b or c)",
    "assert (a and b) or c",
    "assert a or (b and c)",
    "assert (\n    a\n    and b\n) or c",
    "assert x == (value or None)",
    "assert x == (y or 'default')",
    "assert a == b, (a, b)",
    "assert all(x for x in xs)",
    "mock.assert_called_once_with(1)",
    "assert 'é' == x or (é and b)",
])
def test_the_finder_passes_what_can_fail(code):
    assert vacuous(code) == [], code


def test_no_test_has_a_vacuous_assert():
    found = [f"{path.relative_to(TESTS.parent)}:{line}: {why}" for path in sorted(TESTS.rglob("*.py"))
             for line, why in vacuous(path.read_text())]
    assert found == [], "\n".join(found)
