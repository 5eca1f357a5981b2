"""The docs hold together: every `docs/PAGE.md#anchor` a message names exists, every link in the
README and docs/ reaches a file and heading that exist, and the README stays short."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
SOURCES = sorted((ROOT / "trainerctl").rglob("*.py"))
PAGES = sorted([ROOT / "README.md", *DOCS.glob("*.md")])
NAMED = re.compile(r"docs/([a-z0-9-]+\.md)(?:#([a-z0-9_-]+))?")
LINK = re.compile(r"\]\(([^)\s]+)\)")


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def _anchors(page: Path) -> set[str]:
    found, fence = set(), False
    for line in page.read_text().splitlines():
        if line.startswith("```"):
            fence = not fence
        elif not fence and re.match(r"#{1,6} ", line):
            found.add(_slug(line.lstrip("#")))
    return found


def test_every_doc_anchor_a_message_names_exists():
    named = [(src, m.group(1), m.group(2)) for src in SOURCES for m in NAMED.finditer(src.read_text())]
    assert named, "messages name docs pages (the Go operator's and Helm's hand-over guides at least)"
    for src, page, anchor in named:
        target = DOCS / page
        assert target.is_file(), f"{src.relative_to(ROOT)} names docs/{page}, which does not exist"
        if anchor:
            assert anchor in _anchors(target), f"{src.relative_to(ROOT)} names docs/{page}#{anchor}: no such heading"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_link_in_the_docs_resolves(page):
    for target in LINK.findall(page.read_text()):
        if re.match(r"[a-z]+://", target) or target.startswith("mailto:"):
            continue
        path, _, anchor = target.partition("#")
        file = (page.parent / path).resolve() if path else page
        assert file.exists(), f"{page.relative_to(ROOT)} links to {target}: no such file"
        if anchor and file.suffix == ".md":
            assert anchor in _anchors(file), f"{page.relative_to(ROOT)} links to {target}: no such heading"


def test_the_readme_is_short_and_the_manual_is_in_docs():
    lines = (ROOT / "README.md").read_text().splitlines()
    assert len(lines) <= 300, f"README.md has {len(lines)} lines; the manual belongs in docs/"
    index = (DOCS / "README.md").read_text()
    for page in DOCS.glob("*.md"):
        if page.name != "README.md":
            assert f"({page.name})" in index, f"docs/README.md does not list {page.name}"
