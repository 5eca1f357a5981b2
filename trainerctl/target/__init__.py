"""What a cluster command works on: rendered manifests given with `-f` (a YAML stream, or a folder
`render --output-dir` wrote: manifest_files.py, which registers every Secret value as a
credential before anything else can show one), or a fresh render made for the session's cluster
(rendered.py). install, diff, check, status, upgrade-check and images read them here, so "what
would `install` with these flags do" is answered with the same objects everywhere.

The names below load on first use (trainerctl/lazy_exports.py): reading a file never loads the
folder reader (the GitOps layout) or the render pipeline.
"""

from trainerctl.lazy_exports import lazy_exports

_WHERE = {
    "Target": "manifest_files",
    "from_file": "manifest_files",
    "load_file": "manifest_files",
    "register_secret_values": "manifest_files",
    "read_folder": "manifest_folder",
    "rendered": "rendered",
}
__getattr__ = lazy_exports(__name__, _WHERE)
__all__ = list(_WHERE)
