"""trainerctl.lock: the source, ref, commit and manifests digest a render must reproduce."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import yaml

from trainerctl.errors import InputError
from trainerctl.source.validate import is_commit, normalize_url

DEFAULT_LOCK_FILE = "trainerctl.lock"
_HEADER = (
    "# trainerctl.lock: written by `trainerctl fetch` (or `render --update-lock`).\n"
    "# A render of this source must resolve to this commit and manifests digest, or it fails.\n"
)


@dataclass(frozen=True)
class Lock:
    url: str
    ref: str
    commit: str
    digest: str

    def applies_to(self, url: str, ref: str) -> bool:
        return normalize_url(url) == normalize_url(self.url) and ref == self.ref


def read_lock(path: Path) -> Lock | None:
    """The lock at path, None when there is none; a malformed lock is an input error."""
    try:
        text = path.read_bytes().decode("utf-8")
    except FileNotFoundError:
        return None
    except UnicodeDecodeError as exc:
        raise InputError(f"lock file {path}: not UTF-8 text (byte {exc.start}); expected YAML "
                         "as `trainerctl fetch` writes it") from None
    except OSError as exc:
        raise InputError(f"lock file {path}: cannot read: {exc.strerror}") from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise InputError(f"lock file {path}: not valid YAML: {' '.join(str(exc).split())}") from None
    source = data.get("source") if isinstance(data, dict) else None
    if not isinstance(source, dict):
        raise InputError(f"{path}: expected a mapping with a 'source' mapping")
    fields = {}
    for key in ("url", "ref", "commit", "digest"):
        value = source.get(key)
        if not isinstance(value, str) or not value:
            raise InputError(f"{path}: source.{key}: expected a non-empty string")
        fields[key] = value
    unknown = sorted(set(source) - set(fields))
    if unknown:
        raise InputError(f"{path}: source.{unknown[0]}: unknown field")
    if not is_commit(fields["commit"]):
        raise InputError(f"{path}: source.commit: expected a 40-hex commit SHA")
    if not fields["digest"].startswith("sha256:"):
        raise InputError(f"{path}: source.digest: expected sha256:<hex>")
    return Lock(**fields)


def write_lock(path: Path, lock: Lock) -> None:
    body = yaml.safe_dump(
        {"source": {"url": lock.url, "ref": lock.ref, "commit": lock.commit, "digest": lock.digest}},
        sort_keys=False,
    )
    tmp = path.with_name(path.name + ".tmp")
    try:
        tmp.write_text(_HEADER + body, encoding="utf-8")
        tmp.replace(path)
    except OSError as exc:
        raise InputError(f"lock file {path}: cannot write: {exc.strerror}") from None
