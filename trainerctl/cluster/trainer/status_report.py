"""`status`'s report: what the status action found (cluster/status.py's mapping, as `-o json`
shows it), its text, and the one line that says why Trainer is not Ready."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from trainerctl.cluster.manager import diagnose
from trainerctl.cluster.trainer import conditions
from trainerctl.trust.serialize import Reported


@dataclass(frozen=True)
class StatusReport(Reported):
    """What `status` found (the mapping `status()` makes, as `-o json` shows it), as a report."""

    data: dict[str, Any]

    @property
    def ready(self) -> bool:
        return bool(self.data["ready"])

    def not_ready_line(self) -> str:
        return not_ready_line(self.data)

    def to_dict(self) -> dict[str, Any]:
        return self.data

    def text(self) -> str:
        return status_text(self.data)


def ready_condition(st: dict) -> dict:
    return next(c for c in st["conditions"] if c["type"] == conditions.READY)


def not_ready_line(st: dict) -> str:
    ready = ready_condition(st)
    return f"Trainer in namespace {st['namespace']} is not Ready ({ready['reason']}): {ready['message']}"


def _source_line(src: dict) -> str:
    by_commit = bool(src.get("commit")) and src.get("ref") == src.get("commit")  # a channel without a tag
    if src.get("url") and src.get("embedded") is True:
        if by_commit:
            return f"source: the copy of {src['url']} at commit {src['commit']} embedded in trainerctl"
        return (f"source: the copy of {src['url']} ref {src.get('ref', '?')} embedded in trainerctl, "
                f"commit {src.get('commit', '?')}")
    if src.get("url"):
        if by_commit:
            return f"source: {src['url']} commit {src['commit']}"
        return f"source: {src['url']} ref {src.get('ref', '?')} commit {src.get('commit', '?')}"
    if src.get("path"):
        digest = f" digest {src['digest']}" if src.get("digest") else ""
        return f"source: {src['path']} (local checkout{', overlay ' + src['overlay'] if src.get('overlay') else ''}){digest}"
    if src.get("file"):
        return f"source: {src['file']} (rendered file)"
    return "source: unknown (the inventory does not record one)"


def status_text(st: dict) -> str:
    lines = []
    if not st["installed"]:
        lines.append(f"Trainer is not installed by trainerctl in namespace {st['namespace']} (no inventory)")
    else:
        lines.append(_source_line(st["source"]))
        if st.get("channel"):
            lines.append(f"channel: {st['channel']} (`trainerctl channels`)")
        releases = ", ".join(f"{r.get('name', '?')} {r.get('version', '?')}" for r in st.get("releases") or [])
        lines.append(f"trainer version: {st.get('trainerVersion') or 'unknown'}" + (f" ({releases})" if releases else ""))
    for c in st["conditions"]:
        indent = "" if c["type"] == conditions.READY else "  "
        lines.append(f"{indent}{c['type']}: {c['status']} ({c['reason']}) {c['message']}".rstrip())
    for o in st["objects"]:
        if o["state"] != "present":
            name = f"{o['namespace']}/{o['name']}" if o["namespace"] else o["name"]
            lines.append(f"{o['kind']} {name}: {o['state']}")
    for d in st["deployments"]:
        lines.append(f"Deployment {d['namespace']}/{d['name']}: {'available' if d['available'] else 'not available'}"
                     + (f" ({d['reason']})" if d.get("reason") else ""))
        causes = d.get("causes") or []
        for cause in causes[:diagnose.TEXT_CAUSES]:
            lines.extend(f"  {line}" for line in diagnose.cause_lines(cause))
        if len(causes) > diagnose.TEXT_CAUSES:
            lines.append(f"  and {len(causes) - diagnose.TEXT_CAUSES} more cause(s) (-o json lists them)")
        lines.extend(f"  could not read: {what}" for what in d.get("unreadable") or [])
    summary = ", ".join(f"{n} {s}" for s, n in sorted(st["summary"].items())) or "no objects"
    lines.append(f"objects: {summary}")
    if st.get("revision"):
        rev = st["revision"]
        lines.append(f"revision: {rev['revision']} ({rev['description']}, {rev['time']}; `trainerctl history`)")
    for c in st.get("consumers") or []:
        if c["status"] != "ok":
            lines.append(f"consumer {c['check']}: {c['message']}")
    if st.get("lock"):
        lines.append(f"lock: held by {st['lock']['holder']} {st['lock']['since']} (an install or uninstall is running)")
    lines.extend(st.get("unreadable") or [])
    return "\n".join(lines) + "\n"
