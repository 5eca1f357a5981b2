"""str.isdigit() is true of '²', '٣' and '𝟗', and int() then takes some of them and refuses
others: text from outside (a header, a field path, a map key) checked that way either crashes
or reads a number Go's strconv would not. Every isdigit() in trainerctl is guarded by isascii()
on the same text, in the same boolean expression."""

from __future__ import annotations

import ast
from pathlib import Path

import trainerctl


def _unguarded(tree: ast.AST) -> list[int]:
    guarded: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.BoolOp):  # `x.isascii() and x.isdigit()`, `not x.isascii() or not x.isdigit()`
            asciis = {ast.unparse(v.func.value) for v in ast.walk(node) if isinstance(v, ast.Call)
                      and isinstance(v.func, ast.Attribute) and v.func.attr == "isascii"}
            for v in ast.walk(node):
                if isinstance(v, ast.Call) and isinstance(v.func, ast.Attribute) and v.func.attr == "isdigit" \
                        and ast.unparse(v.func.value) in asciis:
                    guarded.add(id(v))
    return [n.lineno for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
            and n.func.attr == "isdigit" and id(n) not in guarded]


def test_every_isdigit_is_guarded_by_isascii():
    root = Path(trainerctl.__file__).parent
    found = [f"{path.relative_to(root.parent)}:{line}" for path in sorted(root.rglob("*.py"))
             for line in _unguarded(ast.parse(path.read_text()))]
    assert not found, "isdigit() without isascii() on the same text:\n" + "\n".join(found)


def test_the_guard_is_recognised():
    assert _unguarded(ast.parse("x.isascii() and x.isdigit()")) == []
    assert _unguarded(ast.parse("not x.isascii() or not x.isdigit()")) == []
    assert _unguarded(ast.parse("x.isdigit()")) == [1]
    assert _unguarded(ast.parse("y.isascii() and x.isdigit()")) == [1]
