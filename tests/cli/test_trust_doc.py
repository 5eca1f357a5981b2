"""docs/trust.md says what is bounded and by how much: its tables are checked against the one
place the limits live (bounded_read.LIMITS, ALIAS_SLACK, MAX_DEPTH), so the page cannot drift
from the code."""

from __future__ import annotations

import re
from pathlib import Path

from trainerctl.bounded_read import ALIAS_SLACK, LIMITS, MAX_DEPTH, human_size

DOC = Path(__file__).resolve().parents[2] / "docs" / "trust.md"


def _rows() -> list[tuple[str, str, str]]:
    """(what, limit, variables) of every table row naming a TRAINERCTL_ variable."""
    out = []
    for line in DOC.read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("|") and len(cells) == 3 and "TRAINERCTL_" in cells[2]:
            out.append((cells[0], cells[1], cells[2]))
    return out


def _shown(limit) -> str:
    """As the page writes it: 60 s, 16 MiB (as the error messages say it)."""
    if limit.unit == "objects":
        return f"{limit.default:,} objects"
    return f"{limit.default} s" if limit.unit == "seconds" else human_size(limit.default)


def test_every_limit_is_in_the_docs_with_its_value():
    rows = _rows()
    for limit in LIMITS.values():
        named = [(what, value) for what, value, variables in rows if f"`{limit.env}`" in variables]
        assert named, f"{limit.env} ({limit.what}) is not in docs/trust.md"
        for what, value in named:
            expected = _shown(limit)
            assert re.search(rf"(^|\D){re.escape(expected)}", value), (limit.env, what, value, expected)


def test_every_variable_in_the_tables_is_a_limit_trainerctl_has():
    known = {limit.env for limit in LIMITS.values()} | {"TRAINERCTL_COMMAND_TIMEOUT"}
    for what, _, variables in _rows():
        for name in re.findall(r"`(TRAINERCTL_[A-Z_]+)`", variables):
            assert name in known, (what, name)


def test_the_yaml_bounds_are_the_codes():
    text = DOC.read_text(encoding="utf-8")
    assert f"aliases adding at most {ALIAS_SLACK:,} nodes" in text
    assert f"nested at most {MAX_DEPTH} levels" in text
