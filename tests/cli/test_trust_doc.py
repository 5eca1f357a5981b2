"""docs/trust.md says what is bounded and by how much: its tables are checked against the one
place the limits live (limits.LIMITS, document_bounds.ALIAS_SLACK and MAX_DEPTH), so the page cannot drift
from the code."""

from __future__ import annotations

import re
from pathlib import Path

from trainerctl.cluster.client.client import LIST_PAGE, MAX_LIST_PAGES
from trainerctl.cluster.client.discovery import MAX_GROUP_VERSIONS
from trainerctl.cluster.operations.install_history import MAX_REVISION
from trainerctl.cluster.trainer import stored_versions
from trainerctl.trust.document_bounds import ALIAS_SLACK, MAX_DEPTH
from trainerctl.trust.limits import LIMITS, human_size

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


# -- the bounds written in the code, each in a table with its value ------------------------------
def _fixed_bounds() -> dict[tuple[str, str], tuple[str, str]]:
    """(module, constant) -> (how its row in docs/trust.md begins, its value as the row writes it)."""
    from trainerctl.cluster.manager import diagnose
    from trainerctl.cluster.operations import bundle_archive
    from trainerctl.cluster.trainer.verify import controllers
    from trainerctl.trust import redact, safe_text

    return {
        ("trainerctl.trust.safe_text", "MESSAGE_LIMIT"): ("each text from the server", f"{safe_text.MESSAGE_LIMIT:,} characters"),
        ("trainerctl.trust.safe_text", "LINE_LIMIT"): ("an `error:`, `warning:` or progress line", f"{safe_text.LINE_LIMIT:,} characters"),
        ("trainerctl.cluster.manager.diagnose", "LOG_TAIL_LINES"): ("the previous log of a crashed container",
                                                                    f"the last {diagnose.LOG_TAIL_LINES} lines"),
        ("trainerctl.cluster.manager.diagnose", "LOG_READ_LINES"): ("the previous log of a crashed container",
                                                                    f"of the last {diagnose.LOG_READ_LINES} read"),
        ("trainerctl.cluster.trainer.verify.controllers", "LOG_LINES"): ("the controller log lines a failed `verify`",
                                                                         f"{controllers.LOG_LINES} lines"),
        ("trainerctl.cluster.operations.bundle_archive", "LOG_TAIL_LINES"): ("a container log in a support bundle",
                                                                             f"the last {bundle_archive.LOG_TAIL_LINES} lines"),
        ("trainerctl.cluster.operations.bundle_archive", "LOG_LIMIT_BYTES"): ("a container log in a support bundle",
                                                                              f"at most {human_size(bundle_archive.LOG_LIMIT_BYTES)}"),
        ("trainerctl.cluster.operations.bundle_archive", "MAX_PART"): ("a part of a support bundle's member name",
                                                                       f"{bundle_archive.MAX_PART} characters"),
        ("trainerctl.trust.redact", "MIN_LENGTH"): ("a credential masked wherever it appears",
                                              f"{redact.MIN_LENGTH} characters or longer"),
    }


# The request bounds' table (checked by test_the_request_bounds_are_the_codes).
_REQUEST_BOUNDS = {("trainerctl.cluster.client.client", "MAX_LIST_PAGES"),
                   ("trainerctl.cluster.client.discovery", "MAX_GROUP_VERSIONS"),
                   ("trainerctl.cluster.operations.install_history", "MAX_REVISION")}
# Constants named as bounds that are not a bound on what comes from outside, or are documented
# where their subject is: each with why it needs no row here.
_NOT_HERE = {
    ("trainerctl.trust.document_bounds", "MAX_DEPTH"): "in the tables' prose (test_the_yaml_bounds_are_the_codes)",
    ("trainerctl.cluster.operations.install_history", "MAX_BYTES"): "a bound on what trainerctl writes (docs/history.md)",
    ("trainerctl.defaults", "HISTORY_MAX"): "a setting's default (--history-max)",
    ("trainerctl.kustomize.loader", "MAX_LINKS"): "the kustomize engine's, as kubectl's (Linux's ELOOP)",
    ("trainerctl.kustomize.yamlread", "MAX_DEPTH"): "the kustomize engine's, as kustomize's (docs/benchmarks.md)",
    ("trainerctl.registry.client", "MAX_REDIRECTS"): "the registry client's, with its redirect rules (docs/images.md)",
    ("trainerctl.upgrade.schema.goregex", "MAX_RUNE"): "Unicode's highest code point, as Go's regexp knows it",
    ("trainerctl.cluster.trainer.stored_versions", "_COUNT_MAX"):
        "the range a server's remainingItemCount is read in (an int32), not a bound on requests",
}
_BOUND_NAME = re.compile(r"(MAX_[A-Z_]+|[A-Z_]+_MAX|[A-Z_]*LIMIT[A-Z_]*|[A-Z_]*_LINES|MIN_LENGTH)")


def _bound_constants() -> set[tuple[str, str]]:
    """Every module-level number of trainerctl named as a bound."""
    import ast
    import importlib

    import trainerctl

    root = Path(trainerctl.__file__).resolve().parent
    found = set()
    for path in root.rglob("*.py"):
        module = ".".join(path.relative_to(root.parent).with_suffix("").parts).removesuffix(".__init__")
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            target = node.targets[0] if isinstance(node, ast.Assign) and len(node.targets) == 1 else \
                node.target if isinstance(node, ast.AnnAssign) else None
            if isinstance(target, ast.Name) and _BOUND_NAME.fullmatch(target.id):
                value = getattr(importlib.import_module(module), target.id)
                if isinstance(value, (int, float)) and not isinstance(value, bool):
                    found.add((module, target.id))
    return found


def _fixed_rows() -> list[tuple[str, str]]:
    return [(cells[0], cells[1]) for line in DOC.read_text(encoding="utf-8").splitlines()
            if line.startswith("|") and len(cells := [c.strip() for c in line.strip().strip("|").split("|")]) == 3
            and cells[2] == "fixed"]


def test_every_fixed_bound_is_in_the_docs_with_its_value():
    rows = _fixed_rows()
    for (module, name), (row, value) in _fixed_bounds().items():
        cells = [limit for what, limit in rows if what.startswith(row)]
        assert cells, f"{module}.{name}: no row beginning {row!r} in docs/trust.md"
        assert any(value in limit for limit in cells), (module, name, cells, value)


def test_every_bound_in_the_code_is_in_a_table():
    """Both ways: a constant named as a bound is documented (or says why not), and every
    TRAINERCTL_ variable that sets a size or a time is in a table."""
    documented = set(_fixed_bounds()) | set(_NOT_HERE) | _REQUEST_BOUNDS
    undocumented = sorted(f"{m}.{n}" for m, n in _bound_constants() - documented)
    assert not undocumented, f"bounds in the code missing from docs/trust.md: {undocumented}"
    assert not set(_fixed_bounds()) - _bound_constants(), "a documented bound no longer in the code"
    import trainerctl

    code = "\n".join(p.read_text(encoding="utf-8") for p in Path(trainerctl.__file__).resolve().parent.rglob("*.py"))
    variables = set(re.findall(r"TRAINERCTL_(?:MAX_[A-Z_]+|[A-Z_]+_TIMEOUT)\b", code))
    tabled = {name for _, _, cells in _rows() for name in re.findall(r"`(TRAINERCTL_[A-Z_]+)`", cells)}
    assert variables and not variables - tabled, sorted(variables - tabled)
    fixed = [what for what, _ in _fixed_rows()]
    assert len(fixed) == len({row for row, _ in _fixed_bounds().values()}), fixed


# -- the request bounds ----------------------------------------------------------------------------
def _request_row(starts: str) -> str:
    rows = [line for line in DOC.read_text(encoding="utf-8").splitlines() if line.startswith(f"| {starts}")]
    assert len(rows) == 1, (starts, rows)
    return rows[0]


def test_the_request_bounds_are_the_codes():
    assert f"{LIST_PAGE} objects a page, at most {MAX_LIST_PAGES:,} pages" in _request_row("a list read in pages")
    assert f"at most {MAX_GROUP_VERSIONS:,} group versions" in _request_row("discovery from a server without")
    guard = _request_row("the rollback's CRD stored-version guard")
    assert f'"at least {stored_versions.PAGE}"' in guard and f"names at most {stored_versions.SHOWN} of them" in guard
    assert f"1..{MAX_REVISION:,}" in _request_row("an install-history revision number")
    assert f"beyond {MAX_REVISION:,}" in (DOC.parent / "history.md").read_text(encoding="utf-8")
