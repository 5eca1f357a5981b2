"""`support-bundle`: one .tar.gz to attach to a ticket (trainer/support.py says what is in it,
operations/collect.py reads each part under its own deadline, operations/bundle.py keeps every
secret out and writes it 0600). What could not be read is listed, never fatal: the bundle is
written whatever the cluster answers."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from trainerctl.cluster.client.client import Cluster
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


def support_bundle(*, cluster: Cluster, namespace: str, output_file: str | None,
                   status: Callable[[Cluster], dict]) -> Written:
    """Collect and write the bundle; `status(cluster)` is what `trainerctl status -o json` prints
    (given the connection with the status part's deadline)."""
    bundle = support.collect(cluster, namespace, status=status)
    path = output_file or f"{bundle.root}.tar.gz"
    bundle.write(path)
    return Written(path, len(bundle.files), list(bundle.unreadable))
