"""docs/trust.md's table of request bounds says what the code bounds, by the same numbers: the
pages of a list, the group versions discovery reads, the stored-version guard's one page and the
storedVersions a line names, the highest install-history revision."""

from __future__ import annotations

from pathlib import Path

from trainerctl.cluster.client.client import LIST_PAGE, MAX_LIST_PAGES
from trainerctl.cluster.client.discovery import MAX_GROUP_VERSIONS
from trainerctl.cluster.operations.history import MAX_REVISION
from trainerctl.cluster.trainer import stored_versions

DOC = Path(__file__).resolve().parents[2] / "docs" / "trust.md"


def _row(starts: str) -> str:
    rows = [line for line in DOC.read_text(encoding="utf-8").splitlines() if line.startswith(f"| {starts}")]
    assert len(rows) == 1, (starts, rows)
    return rows[0]


def test_the_request_bounds_are_the_codes():
    assert f"{LIST_PAGE} objects a page, at most {MAX_LIST_PAGES:,} pages" in _row("a list read in pages")
    assert f"at most {MAX_GROUP_VERSIONS:,} group versions" in _row("discovery from a server without")
    guard = _row("the rollback's CRD stored-version guard")
    assert f'"at least {stored_versions.PAGE}"' in guard and f"names at most {stored_versions.SHOWN} of them" in guard
    assert f"1..{MAX_REVISION:,}" in _row("an install-history revision number")
    assert f"beyond {MAX_REVISION:,}" in (DOC.parent / "history.md").read_text(encoding="utf-8")
