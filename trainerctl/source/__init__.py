"""Where the manifests come from: a pinned git ref fetched into a cache, or a local checkout."""

from trainerctl.source.cache import (
    PinError,
    SourceCache,
    SourceTree,
    default_cache_dir,
    local_source,
    resolve_source,
)
from trainerctl.source.gitops import FetchError
from trainerctl.source.lock import DEFAULT_LOCK_FILE, Lock, read_lock, write_lock
from trainerctl.source.pins import default_ref, default_url, pinned_commit
from trainerctl.source.tree import walk_tree
from trainerctl.source.validate import validate_ref, validate_url

__all__ = [
    "DEFAULT_LOCK_FILE",
    "FetchError",
    "Lock",
    "PinError",
    "SourceCache",
    "SourceTree",
    "default_cache_dir",
    "default_ref",
    "default_url",
    "local_source",
    "pinned_commit",
    "read_lock",
    "resolve_source",
    "validate_ref",
    "validate_url",
    "walk_tree",
    "write_lock",
]
