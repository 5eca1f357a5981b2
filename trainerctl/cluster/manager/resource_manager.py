"""The engine bound to one session, as Flux's ssa.ResourceManager is bound to one client and owner.

A Session makes its ResourceManager once (`session.resources`); its methods are the engine's
operations over the session's client and discovery, in its namespace, by its ownership label and as
its field manager, so no caller passes those again:

    read_live            what is live of a plan (plan.py)
    apply_stages         one staged server-side apply run, its waits and inventory (staged.py)
    prune                what the previous install applied and this one does not render (prune.py)
    diff                 live objects against a server-side dry-run (diff.py)
    read/write/delete_inventory   the record of what was applied (inventory.py)
    find_labelled        what carries the ownership label (listing.py)
    take_over            an earlier installer's managed fields moved to ours (fields.py)
    delete, delete_and_wait       the one delete (delete.py), the caller's proof checked first

Each group of methods lives in the module of its job (the `*Methods` classes there), as Flux
spreads its ResourceManager over manager_apply.go, manager_delete.go, manager_wait.go. What to
install, in which stages and what never to prune stay the caller's (trainerctl.cluster.trainer).
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from trainerctl.cluster.client.client import Cluster
from trainerctl.cluster.manager.apply import ApplyOptions
from trainerctl.cluster.manager.delete import DeleteMethods
from trainerctl.cluster.manager.live_diff import DiffMethods
from trainerctl.cluster.manager.fields import TakeOverMethods
from trainerctl.cluster.manager.inventory_configmap import Inventory, InventoryMethods
from trainerctl.cluster.manager.listing import ListingMethods
from trainerctl.cluster.manager.plan import LiveMethods
from trainerctl.cluster.manager.prune import PruneMethods
from trainerctl.cluster.manager.report import Report
from trainerctl.cluster.manager.staged import RunOptions, StagedApply

if TYPE_CHECKING:
    from trainerctl.cluster.manager.session import Session


class ResourceManager(InventoryMethods, LiveMethods, PruneMethods, DiffMethods, ListingMethods, TakeOverMethods,
                      DeleteMethods):
    """The engine's operations over one session (see the module's docstring)."""

    def __init__(self, session: Session) -> None:
        self._session = session

    # The session's, bound once.
    cluster = property(lambda self: self._session.cluster)
    discovery = property(lambda self: self._session.discovery)
    namespace = property(lambda self: self._session.namespace)
    owner_label = property(lambda self: self._session.owner_label)
    field_manager = property(lambda self: self._session.field_manager)
    progress = property(lambda self: self._session.progress)

    def on(self, cluster: Cluster) -> ResourceManager:
        """The same manager over another client for the session's cluster (one with its own
        deadline, `Cluster.within`)."""
        return replace(self._session, cluster=cluster).resources

    def apply_options(self, *, timeout: float, **options) -> ApplyOptions:
        """The options of an apply as the session's field manager."""
        return ApplyOptions(field_manager=self.field_manager, timeout=timeout, **options)

    def apply_stages(self, options: RunOptions, report: Report, *, previous: Inventory | None = None,
                     unrecorded: frozenset[str] = frozenset()) -> StagedApply:
        """One staged apply run (staged.py): the caller applies and waits stage by stage."""
        return StagedApply(self, options=options, report=report, previous=previous, unrecorded=unrecorded)
