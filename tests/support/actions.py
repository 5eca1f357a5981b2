"""The actions as tests call them: `install`, `uninstall` and `diff` over a session made of their
keyword arguments (the command line builds the session from the settings: cli/options.py)."""

from __future__ import annotations

import dataclasses
from typing import Any, Callable

from trainerctl.cluster.client.client import Cluster
from trainerctl.cluster.diff import Diff, DiffResult
from trainerctl.cluster.install import Install, InstallOptions
from trainerctl.cluster.manager.report import Report
from trainerctl.cluster.manager.session import Session
from trainerctl.cluster.uninstall import Uninstall, UninstallOptions
from trainerctl.owner_label import DEFAULT_OWNER_LABEL
from trainerctl.settings import FIELD_MANAGER
from trainerctl.ui import Progress


def _fields(options) -> dict:
    """The options' values as given (a test's guard object stays the same object)."""
    return {f.name: getattr(options, f.name) for f in dataclasses.fields(options)}


def session(cluster: Cluster, namespace: str, *, owner_label=DEFAULT_OWNER_LABEL, field_manager: str = FIELD_MANAGER,
            progress=None) -> Session:
    """A session as a command builds one, for a test that calls the engine, the lock or the history."""
    return Session(cluster, namespace, owner_label, field_manager, progress or Progress(0, enabled=False))


def install(objects: list[dict], *, cluster: Cluster, namespace: str, owner_label=DEFAULT_OWNER_LABEL,
            source: Any = None, options: InstallOptions | None = None, progress=None,
            field_manager: str = FIELD_MANAGER) -> Report:
    session = Session(cluster, namespace, owner_label, field_manager, progress or Progress(len(objects), enabled=False))
    return Install(**_fields(options or InstallOptions())).run(session, objects, source)


def uninstall(*, cluster: Cluster, namespace: str, owner_label=DEFAULT_OWNER_LABEL,
              options: UninstallOptions | None = None, confirm: Callable[[str], bool] | None = None, progress=None,
              field_manager: str = FIELD_MANAGER) -> Report:
    session = Session(cluster, namespace, owner_label, field_manager, progress or Progress(0, enabled=False))
    return Uninstall(**_fields(options or UninstallOptions())).run(session, confirm)


def diff(objects: list[dict], *, cluster: Cluster, namespace: str, owner_label=DEFAULT_OWNER_LABEL,
         field_manager: str = FIELD_MANAGER, force_conflicts: bool = False) -> DiffResult:
    return Diff(force_conflicts).run(Session(cluster, namespace, owner_label, field_manager), objects)
