"""`rollback`: the Rollback action, which installs a recorded revision again, as `helm rollback`
does.

Which revision (default: the one before the newest), checked before anything is rendered; the
render of it checked against what was recorded (the same tree digest and commit, or refused);
and the guard the install runs under its lock: the rollback's CRD guard (a version the cluster
still stores objects at must stay served: trainer/stored_versions.py), then the upgrade check,
which, from the installed CRDs to the older ones, is the upgrade check run in reverse. The
install itself is the same staged install as any other, and records the rollback as a new
revision (`rollback to N`).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Callable

from trainerctl.cluster.client.views import HistoryRecord
from trainerctl.cluster.manager.report import Report, source_dict
from trainerctl.cluster.manager.session import Session
from trainerctl.cluster.operations import install_history
from trainerctl.cluster.trainer.install_options import InstallOptions
from trainerctl.cluster.trainer.stored_versions import refuse_dropped
from trainerctl.errors import InputError, TrainerctlError
from trainerctl.render.pipeline import render
from trainerctl.render.recipe import Named, options_from


@dataclass(frozen=True)
class Rollback:
    """The rollback action: `install`, the Install action (its options as the command was given
    them; no cluster action imports another) that installs the revision; `revision`, which one
    (None: the one before the newest); `named`, the source the user named for it (render/recipe.py);
    `cache_dir` and `offline` for its render. With --dry-run, `show_diff(result)` is given what
    `preview` (the Diff action) finds, before the install's progress starts (the session's, which
    the install is told its objects' count)."""

    install: InstallOptions  # an Install: InstallOptions with its run(session, objects, source)
    revision: int | None = None
    named: Named = Named()
    cache_dir: str | None = None
    offline: bool = False
    preview: Any = None  # the Diff action: run(session, objects) -> DiffResult
    show_diff: Callable[[Any], None] | None = None

    def __post_init__(self) -> None:
        if self.revision is not None and not 1 <= self.revision <= install_history.MAX_REVISION:
            raise InputError(f"REVISION {self.revision}: expected a revision number 1..{install_history.MAX_REVISION}")

    def run(self, session: Session) -> Report:
        """Raises RunFailed (with .report) as Install does, InputError when there is nothing to go
        back to or the record names what the user must name first."""
        back = choose(session, self.revision)
        rendered = render(options_from(back.target.source, back.target.render, what=back.what,
                                       namespace=session.namespace, named=self.named, cache_dir=self.cache_dir,
                                       offline=self.offline))
        source = source_dict(rendered.source)
        check_render(back, source)
        on = dataclasses.replace(session, namespace=rendered.namespace, owner_label=rendered.owner_label)
        if self.install.dry_run and self.show_diff is not None and self.preview is not None:
            self.show_diff(self.preview.run(on, rendered.objects))
        action = dataclasses.replace(self.install, recipe=back.target.render, rollback_to=back.target.revision,
                                     upgrade_guard=guard(self.install.upgrade_guard, back,
                                                         self.install.allow_breaking))
        return action.run(on, rendered.objects, source)


@dataclass(frozen=True)
class Revision:
    """The revision to go back to, and the newest one (what is installed now)."""

    namespace: str
    target: HistoryRecord
    newest: int

    @property
    def what(self) -> str:
        return f"revision {self.target.revision}"


def choose(session: Session, revision: int | None) -> Revision:
    """The revision asked for, or the one before the newest; one line when there is none."""
    namespace = session.namespace
    there = install_history.revisions(session)
    if not there:
        raise InputError(f"nothing to roll back to: namespace {namespace} has no install history "
                         "(each install records one; `trainerctl history` lists it)")
    if revision is None:
        if len(there) < 2:
            raise InputError(f"nothing to roll back to: the install history of namespace {namespace} holds "
                             f"revision {there[0]} only (name a revision to install it again)")
        revision = there[-2]
    return Revision(namespace, install_history.read(session, revision), there[-1])


def check_render(rollback: Revision, source: dict) -> None:
    """The render of the recorded source is the one recorded: the same tree digest (and commit),
    else refused (exit 1): what it would install is not what that revision installed."""
    recorded = rollback.target.source
    for key, name in (("digest", "tree digest"), ("commit", "commit")):
        if recorded.get(key) and source.get(key) != recorded[key]:
            raise TrainerctlError(f"rollback refused: {rollback.what} was rendered from {name} {recorded[key]}, "
                                  f"but its source now renders {name} {source.get(key) or 'unknown'}; the manifests "
                                  "changed since (a moved ref, or an altered cache or checkout): install the "
                                  "source you want explicitly instead")


def guard(upgrade_guard: Callable[..., Any] | None, rollback: Revision, allow_breaking: bool) -> Callable[..., Any]:
    """The install's guard for this rollback (run under the install lock, before any write)."""
    def run(cluster, objects, **kwargs):
        if not allow_breaking:
            refuse_dropped(cluster, objects, what=rollback.what)
        return upgrade_guard(cluster, objects, **kwargs) if upgrade_guard is not None else _NoReport()

    return run


class _NoReport:
    def to_dict(self) -> dict:
        return {}
