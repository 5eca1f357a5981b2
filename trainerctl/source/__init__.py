"""Where the manifests come from: a pinned git ref fetched into a cache, or a local checkout.

The names below load their modules on first use, so importing one light module of this package
(e.g. the pins) does not pull in git and YAML.
"""

from trainerctl.lazy_exports import lazy_exports

_EXPORTS = {
    "PinError": "cache", "SourceCache": "cache", "SourceTree": "cache", "local_source": "cache",
    "resolve_source": "cache", "check_tree": "cache", "git_source": "pins", "FetchError": "gitrepo",
    "DEFAULT_LOCK_FILE": "lock_file", "Lock": "lock_file", "read_lock": "lock_file", "write_lock": "lock_file",
    "default_ref": "pins", "default_url": "pins", "pinned_commit": "pins", "walk_tree": "tree",
    "Channel": "pins", "channel": "pins", "channel_of": "pins", "channels": "pins", "default_channel": "pins",
    "validate_ref": "validate", "validate_url": "validate", "embedded_source": "embedded",
}
__all__ = sorted(_EXPORTS)

__getattr__ = lazy_exports(__name__, _EXPORTS)
