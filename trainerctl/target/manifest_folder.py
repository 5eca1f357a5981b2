"""`-f DIR`: a folder `render --output-dir` wrote (gitops/folder.py reads it), every Secret's values
registered as credentials before anything else reads them."""

from __future__ import annotations

from trainerctl.gitops.folder import Folder, load_folder
from trainerctl.target.manifest_files import is_secret, register_secret_values
from trainerctl.trust.bounded_read import shown_path


def read_folder(path: str) -> Folder:
    folder = load_folder(path, f"-f {shown_path(path)}")
    for doc in folder.objects:
        if is_secret(doc):
            register_secret_values(doc)
    return folder
