"""The defaults every command shares, each written once: the settings (settings/) offer them as
flag defaults, and the actions' options (cluster/trainer/install_options.py, cluster/uninstall.py) start
from them, so a library caller without a command line gets the same run."""

FIELD_MANAGER = "trainerctl"  # server-side apply field manager
NAMESPACE = "opendatahub"  # the install namespace (the Go operator's default)
TIMEOUT = 300.0  # seconds each wait may take
# How long a second run waits for the install lock (docs/lock.md): long enough for another whole
# install with the default waits to finish, well inside any CI job's time limit.
LOCK_TIMEOUT = 600.0
HISTORY_MAX = 10  # install-history revisions kept on the cluster (docs/history.md), as Helm's default

__all__ = ["FIELD_MANAGER", "HISTORY_MAX", "LOCK_TIMEOUT", "NAMESPACE", "TIMEOUT"]
