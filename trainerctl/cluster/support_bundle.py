"""`support-bundle`: one .tar.gz to attach to a ticket (trainer/support.py says what is in it,
operations/bundle_parts.py reads each part under its own deadline, operations/bundle_archive.py keeps every
secret out and writes it 0600). What could not be read is listed, never fatal: the bundle is
written whatever the cluster answers."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from trainerctl.cluster.manager.session import Session
from trainerctl.cluster.trainer import support


@dataclass
class Written:
    path: str
    files: int
    unreadable: list[str]

    def line(self) -> str:
        missed = (f"; could not read {len(self.unreadable)} item(s), listed in README.txt"
                  if self.unreadable else "")
        return f"support bundle: {self.path} ({self.files} files{missed})"


@dataclass(frozen=True)
class SupportBundle:
    """The support-bundle action: `status`, the Status action (no cluster action imports another),
    whose report is what `trainerctl status -o json` prints, run over the session with the status
    part's own connection (its deadline); `output_file` None: named by its root."""

    status: Any  # the Status action: run(session) -> a report with to_dict()
    output_file: str | None = None

    def run(self, session: Session) -> Written:
        def status(part) -> dict:
            return self.status.run(dataclasses.replace(session, cluster=part)).to_dict()

        bundle = support.collect(session, status=status)
        path = self.output_file or f"{bundle.root}.tar.gz"
        bundle.write(path)
        return Written(path, len(bundle.files), list(bundle.unreadable))
