"""What every action over one cluster shares, as Helm's action.Configuration does: the client, its
discovery, the install namespace, the ownership label, the field manager, and where progress goes.

A command builds one Session (cli/options.py `session`) and hands it to its action
(cluster/install.py `Install`, uninstall.py `Uninstall`, diff.py `Diff`, check.py `Check`,
status.py `Status`, support_bundle.py `SupportBundle`, history.py `History`, rollback.py `Rollback`,
upgrade_check.py `UpgradeCheck`, trainer/verify `Verify`): dataclasses whose fields are their
options, each with one `run(session, ...)`. Nothing is changed on a Session after it is built;
discovery is the one thing in it with state (what the server serves, refreshed once CRDs are
established). Its `resources` is the engine bound to it (manager/resource_manager.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from trainerctl.cluster.client.client import Cluster
from trainerctl.cluster.client.discovery import Discovery
from trainerctl.cluster.manager.objects import label_selector
from trainerctl.cluster.manager.resource_manager import ResourceManager
from trainerctl.ui import Progress


@dataclass(frozen=True)
class Session:
    cluster: Cluster
    namespace: str
    owner_label: str  # KEY=VALUE (a (key, value) pair is accepted): what carries it is ours
    field_manager: str
    progress: Progress = field(default_factory=lambda: Progress(0, enabled=False))
    discovery: Discovery = field(init=False, repr=False, compare=False)
    # The engine bound to this session (resource_manager.py): apply, prune, diff, inventory, delete.
    resources: ResourceManager = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "owner_label", label_selector(self.owner_label))
        object.__setattr__(self, "discovery", Discovery(self.cluster))
        object.__setattr__(self, "resources", ResourceManager(self))
