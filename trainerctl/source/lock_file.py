"""trainerctl.lock: the source, ref, commit and manifests digest a render must reproduce."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

import yaml

from trainerctl.errors import InputError
from trainerctl.source.validate import is_commit, normalize_url
from trainerctl.trust.bounded_read import os_problem, read_text, shown_path
from trainerctl.trust.document_bounds import load_yaml
from trainerctl.trust.redact import strip_userinfo
from trainerctl.trust.safe_text import field_name
from trainerctl.trust.safe_write import write_atomic

DEFAULT_LOCK_FILE = "trainerctl.lock"
_HEADER = (
    "# trainerctl.lock: written by `trainerctl fetch` (or `render --update-lock`).\n"
    "# A render of this source must resolve to this commit and manifests digest, or it fails.\n"
)


@dataclass(frozen=True)
class Lock:
    """trainerctl.lock: the source, ref, commit and tree digest a render is pinned to."""

    url: str
    ref: str
    commit: str
    digest: str

    def applies_to(self, url: str, ref: str) -> bool:
        return normalize_url(url) == normalize_url(self.url) and ref == self.ref


def read_lock(path: Path) -> Lock | None:
    """The lock at path, None when there is none; a malformed lock is an input error."""
    label = f"lock file {shown_path(str(path))}"
    try:
        os.lstat(path)
    except FileNotFoundError:
        return None
    except (OSError, ValueError):
        pass  # too long, a loop, ...: the reader names what is wrong with the path
    text = read_text(str(path), label, "lock", expected="YAML as `trainerctl fetch` writes it")
    data = load_yaml(text, label, expected="YAML as `trainerctl fetch` writes it")
    source = data.get("source") if isinstance(data, dict) else None
    if not isinstance(source, dict):
        raise InputError(f"{label}: expected a mapping with a 'source' mapping")
    fields = {}
    for key in ("url", "ref", "commit", "digest"):
        value = source.get(key)
        if not isinstance(value, str) or not value:
            raise InputError(f"{label}: source.{key}: expected a non-empty string")
        fields[key] = value
    unknown = sorted((k for k in source if k not in fields), key=str)
    if unknown:
        raise InputError(f"{label}: source.{field_name(unknown[0])}: unknown field")
    if not is_commit(fields["commit"]):
        raise InputError(f"{label}: source.commit: expected a 40-hex commit SHA")
    if not re.fullmatch(r"sha256:[0-9a-f]{64}", fields["digest"]):
        raise InputError(f"{label}: source.digest: expected sha256:<64 hex digits>")
    return Lock(**fields)


def write_lock(path: Path, lock: Lock) -> None:
    """Write the lock (atomically; a symlink in its place is replaced, not written through). The
    URL is recorded without user info: a lock is committed to git, a password must not be."""
    body = yaml.safe_dump(
        {"source": {"url": strip_userinfo(lock.url), "ref": lock.ref, "commit": lock.commit, "digest": lock.digest}},
        sort_keys=False,
    )
    try:
        write_atomic(path, _HEADER + body)
    except OSError as exc:
        raise InputError(f"lock file {shown_path(str(path))}: cannot write: {os_problem(exc)}") from None
