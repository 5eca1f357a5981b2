"""`upgrade-check --write-migrated DIR`: each converted object as DIR/NAMESPACE/NAME.yaml.

The folder is checked before the cluster is asked anything (a path that cannot be a folder is
one line, exit 2); each file is written atomically and never through a symlink (safe_write), and
a namespace folder that is a symlink is refused rather than written through. Names come from the
cluster, so they must keep Kubernetes' name rules before they become file names.
"""

from __future__ import annotations

from pathlib import Path

from trainerctl.cluster.client.views.field_types import LABEL_NAME, SUBDOMAIN_NAME
from trainerctl.errors import InputError
from trainerctl.trust.bounded_read import os_problem, shown_path
from trainerctl.trust.safe_write import LinkedFolder, write_tree
from trainerctl.trust.serialize import yaml_text

FLAG = "--write-migrated"


def check_dir(directory: str) -> Path:
    """The folder to write into (made later); refused when it, or a parent, is not a folder."""
    if not directory.strip():
        raise InputError(f"{FLAG} '': expected a directory")
    path = Path(directory)
    shown = shown_path(directory)
    try:
        for parent in (path, *path.parents):
            if parent.exists() and not parent.is_dir():
                raise InputError(f"{FLAG} {shown}: {shown_path(str(parent))} is a file, not a directory")
            if parent.exists():
                break
    except OSError as exc:
        raise InputError(f"{FLAG} {shown}: cannot read: {os_problem(exc)}") from None
    return path


def write(directory: Path, migrated: list, header: str) -> tuple[list[Path], list[str]]:
    """Write each converted object the target accepts; the files, and a line for each one not written."""
    files, skipped = {}, []
    for m in migrated:
        ref = f"{m.namespace}/{m.name}"
        if m.problems or not m.obj:
            skipped.append(f"{ref}: not written, the target still rejects the conversion: {'; '.join(m.problems)}")
            continue
        if not LABEL_NAME.fullmatch(m.namespace) or not SUBDOMAIN_NAME.fullmatch(m.name):
            skipped.append(f"{ref}: not written, not a Kubernetes name")
            continue
        notes = "".join(f"#   {note}\n" for note in m.notes)
        files[f"{m.namespace}/{m.name}.yaml"] = (f"{header}# was: {m.state}\n" + (f"# changes:\n{notes}" if notes else "")
                                                + yaml_text(m.obj))
    shown = shown_path(str(directory))
    try:
        return write_tree(directory, files), skipped
    except LinkedFolder as exc:
        raise InputError(f"{FLAG} {shown}: {exc}") from None
    except OSError as exc:
        raise InputError(f"{FLAG} {shown}: cannot write: {os_problem(exc)}") from None
