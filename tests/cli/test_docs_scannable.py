"""The manual can be scanned: no page runs on for more than a screenful or two under one heading,
no table cell is an essay, and docs/ says what is true now, with no narration of the project's own
work (an issue number, a commit of ours). docs/reference/ is generated and has its own test."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
PAGES = sorted(p for p in DOCS.rglob("*.md") if "reference" not in p.relative_to(DOCS).parts[:-1])

MAX_SECTION_LINES = 80
MAX_CELL = 300
HEADING = re.compile(r"#{1,6} ")
# "issue 12", "issues 16-20", "#12" standing alone. An upstream reference names its repository
# (kueue#7755, kubernetes/website#16379): that cites a source, not our history.
ISSUE = re.compile(r"\bissues?\s+#?\d+|(?<![\w/&])#\d+\b", re.IGNORECASE)
# a commit-like hex word: 7 to 40 hex digits, at least one digit and one letter (so neither
# "decade" nor 2147483647), not part of a name (pod-5556f56bc7-x) or a longer word
HEX = re.compile(r"(?<![\w.-])(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,40}(?![\w-])")
URL = re.compile(r"https?://\S+")


def _ids(page: Path) -> str:
    return str(page.relative_to(ROOT))


def _prose(page: Path):
    """(line number, line, in a code block) for every line of the page."""
    fence = False
    for n, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
        if line.lstrip().startswith("```"):
            fence = not fence
            yield n, line, True
        else:
            yield n, line, fence


def _pinned_commits() -> set[str]:
    """The commits trainerctl pins (its release channels): a fact of the product, not history."""
    pins = yaml.safe_load((ROOT / "trainerctl" / "data" / "pins.yaml").read_text(encoding="utf-8"))
    return {c["commit"] for c in pins["channels"].values() if c.get("commit")}


def test_the_pages_are_found():
    assert len(PAGES) > 10 and (DOCS / "install.md") in PAGES


@pytest.mark.parametrize("page", PAGES, ids=_ids)
def test_no_heading_holds_more_than_a_screenful_or_two(page):
    sections, title, start, count = [], "(top of the page)", 1, 0
    for n, line, code in _prose(page):
        if not code and HEADING.match(line):
            sections.append((title, start, count))
            title, start, count = line.strip(), n, 0
        elif line.strip():
            count = n - start
    sections.append((title, start, count))
    long = [f"line {start} {title!r}: {count} lines" for title, start, count in sections
            if count > MAX_SECTION_LINES]
    assert not long, (f"{_ids(page)}: more than {MAX_SECTION_LINES} lines under one heading; give each task "
                      f"its own subheading: {long}")


@pytest.mark.parametrize("page", PAGES, ids=_ids)
def test_no_table_cell_is_an_essay(page):
    long = []
    for n, line, code in _prose(page):
        if code or not line.lstrip().startswith("|"):
            continue
        cells = re.split(r"(?<!\\)\|", line.strip().strip("|"))
        long += [f"line {n}: {len(c.strip())} characters: {c.strip()[:60]}…" for c in cells
                 if len(c.strip()) > MAX_CELL]
    assert not long, f"{_ids(page)}: table cells over {MAX_CELL} characters (say it below the table): {long}"


@pytest.mark.parametrize("page", PAGES, ids=_ids)
def test_no_history_of_our_own_work(page):
    pinned = _pinned_commits()
    found = []
    for n, line, _ in _prose(page):
        text = URL.sub("", line)
        found += [f"line {n}: {m.group(0)!r}" for m in ISSUE.finditer(text)]
        found += [f"line {n}: {m.group(0)!r}" for m in HEX.finditer(text)
                  if not any(c.startswith(m.group(0)) for c in pinned)]
    assert not found, (f"{_ids(page)}: an issue number or a commit hash; the manual says what is true now, "
                       f"not how it came to be: {found}")


def test_the_checks_catch_what_they_are_for():
    """Each pattern fails the narration it exists for and passes what looks like it but is not."""
    assert ISSUE.search("after the issue 16-20 merges") and ISSUE.search("(see #12)")
    assert not ISSUE.search("kueue#7755") and not ISSUE.search("[Channels](#channels)")
    assert HEX.search("main before 16de332") and HEX.search("at 8a74ae6,")
    for fine in ("pod-5556f56bc7-qj9fg", "2147483647", "decade", "sha256:2a4c…", "ns-1a2b3c4d"):
        assert not HEX.search(fine), fine
