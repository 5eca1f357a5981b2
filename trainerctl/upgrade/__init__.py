"""Upgrade safety: what replacing the installed CRDs with a target render's CRDs would break.

install calls `guard` before applying and refuses a blocking report unless told to; `check` and
`check_cluster` (compatibility.py) make the report. The names below load on first use
(trainerctl/lazy_exports.py): every install takes `guard`, and only one whose CRDs change runs it,
so the check itself (the schema validator, the migration) loads only then.
"""

from trainerctl.lazy_exports import lazy_exports

_WHERE = {
    "Finding": "crd_diff",
    "Usage": "usage",
    "UpgradeReport": "report",
    "UpgradeBlocked": "refusal",
    "guard": "refusal",
    "check": "compatibility",
    "check_cluster": "compatibility",
}
__getattr__ = lazy_exports(__name__, _WHERE)
__all__ = list(_WHERE)
