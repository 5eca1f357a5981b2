"""`history`: the History action (Helm's action.History): the revisions the install history holds
(operations/install_history.py), oldest first, as a table, JSON or YAML. A record that does not fit its
view is one `unreadable ...` line and is left out; the rest are listed."""

from __future__ import annotations

from dataclasses import dataclass, field

from trainerctl.cluster.client.views import HistoryRecord
from trainerctl.cluster.manager.session import Session
from trainerctl.cluster.operations import install_history
from trainerctl.trust.safe_text import bounded, clean
from trainerctl.trust.serialize import Reported

_COLUMNS = ("REVISION", "UPDATED", "STATUS", "ACTION", "TRAINER", "CHANNEL", "SOURCE", "WHO", "DESCRIPTION")


def record_dict(record: HistoryRecord, status: str) -> dict:
    """A record as the report shows it: what it says is the server's, so each text is cut
    (safe_text.bounded), and who made it and why are one line each (safe_text.clean)."""
    return bounded({
        "revision": record.revision, "time": record.time.strftime("%Y-%m-%dT%H:%M:%SZ"), "status": status,
        "action": record.action, "description": clean(record.description),
        **({"rollbackTo": record.rollback_to} if record.rollback_to is not None else {}),
        "who": clean(record.who), "trainerctlVersion": record.version,
        "trainerVersion": record.source.get("trainer_version") or "", "channel": record.source.get("channel") or "",
        "source": record.source,
        "render": record.render, "objectCount": record.object_count, "objects": sorted(record.entries)})


def source_text(source: dict) -> str:
    """The source in a table cell: where, which ref, which commit."""
    commit = str(source.get("commit") or "")[:12]
    if source.get("url"):
        where = "embedded " if source.get("embedded") is True else ""
        ref = source.get("ref") or commit
        shown = commit if ref == source.get("commit") else ref  # a channel fetched by its commit: once, short
        return f"{where}{source['url']}@{shown}" + (f" ({commit})" if commit and shown != commit else "")
    if source.get("path"):
        return f"{source['path']} (local, {str(source.get('digest') or '')[:19]})"
    if source.get("file") or source.get("folder"):
        return f"-f {source.get('file') or source.get('folder')}"
    return "unknown"


@dataclass
class HistoryReport(Reported):
    namespace: str
    revisions: list[dict] = field(default_factory=list)
    unreadable: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        return {"namespace": self.namespace, "revisions": self.revisions,
                **({"unreadable": self.unreadable} if self.unreadable else {})}



    def text(self) -> str:
        if not self.revisions:
            return f"no install history in namespace {self.namespace}\n"
        rows = [_COLUMNS] + [(str(r["revision"]), r["time"], r["status"], r["action"], r["trainerVersion"] or "?",
                              r["channel"] or "-", source_text(r["source"]), r["who"], r["description"])
                             for r in self.revisions]
        widths = [max(len(row[i]) for row in rows) for i in range(len(_COLUMNS) - 1)]
        return "".join("  ".join([*(c.ljust(w) for c, w in zip(row, widths)), row[-1]]).rstrip() + "\n"
                       for row in rows)


@dataclass(frozen=True)
class History:
    """The history action: every readable revision of the session's namespace; the newest is
    `deployed` while Trainer is installed (an inventory is there), `uninstalled` once uninstall kept
    the history; older ones are `superseded`."""

    def run(self, session: Session) -> HistoryReport:
        out = HistoryReport(session.namespace)
        records = install_history.read_all(session, out.unreadable)
        installed = session.resources.read_inventory() is not None if records else False
        for i, record in enumerate(records):
            newest = i == len(records) - 1
            status = ("deployed" if installed else "uninstalled") if newest else "superseded"
            out.revisions.append(record_dict(record, status))
        return out
