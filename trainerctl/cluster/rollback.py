"""`rollback`: install a recorded revision again, as `helm rollback` does.

Which revision (default: the one before the newest), checked before anything is rendered; the
render of it checked against what was recorded (the same tree digest and commit, or refused);
and the guard the install runs under its lock: the rollback's CRD guard (a version the cluster
still stores objects at must stay served: trainer/stored_versions.py), then the upgrade check,
which, from the installed CRDs to the older ones, is the upgrade check run in reverse. The
install itself is the same staged install as any other, and records the rollback as a new
revision (`rollback to N`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from trainerctl.cluster.client.client import Cluster
from trainerctl.cluster.client.views import HistoryRecord
from trainerctl.cluster.operations import history
from trainerctl.cluster.trainer.stored_versions import refuse_dropped
from trainerctl.errors import InputError, TrainerctlError


@dataclass(frozen=True)
class Rollback:
    """The revision to go back to, and the newest one (what is installed now)."""

    namespace: str
    target: HistoryRecord
    newest: int

    @property
    def what(self) -> str:
        return f"revision {self.target.revision}"


def choose(cluster: Cluster, namespace: str, revision: int | None) -> Rollback:
    """The revision asked for, or the one before the newest; one line when there is none."""
    there = history.revisions(cluster, namespace)
    if not there:
        raise InputError(f"nothing to roll back to: namespace {namespace} has no install history "
                         "(each install records one; `trainerctl history` lists it)")
    if revision is None:
        if len(there) < 2:
            raise InputError(f"nothing to roll back to: the install history of namespace {namespace} holds "
                             f"revision {there[0]} only (name a revision to install it again)")
        revision = there[-2]
    return Rollback(namespace, history.read(cluster, namespace, revision), there[-1])


def check_render(rollback: Rollback, source: dict) -> None:
    """The render of the recorded source is the one recorded: the same tree digest (and commit),
    else refused (exit 1): what it would install is not what that revision installed."""
    recorded = rollback.target.source
    for key, name in (("digest", "tree digest"), ("commit", "commit")):
        if recorded.get(key) and source.get(key) != recorded[key]:
            raise TrainerctlError(f"rollback refused: {rollback.what} was rendered from {name} {recorded[key]}, "
                                  f"but its source now renders {name} {source.get(key) or 'unknown'}; the manifests "
                                  "changed since (a moved ref, or an altered cache or checkout): install the "
                                  "source you want explicitly instead")


def guard(upgrade_guard: Callable[..., Any] | None, rollback: Rollback, allow_breaking: bool) -> Callable[..., Any]:
    """The install's guard for this rollback (run under the install lock, before any write)."""
    def run(cluster, objects, **kwargs):
        if not allow_breaking:
            refuse_dropped(cluster, objects, what=rollback.what)
        return upgrade_guard(cluster, objects, **kwargs) if upgrade_guard is not None else _NoReport()

    return run


class _NoReport:
    def to_dict(self) -> dict:
        return {}
