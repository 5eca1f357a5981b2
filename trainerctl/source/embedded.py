"""The default channel's tree inside the wheel: render and install work with no network and no cache.

The wheel build (setup.py, trainerctl/source/embedding.py) puts the manifests of data/pins.yaml's
default channel into the package, checked against the tree digest pins.yaml records for its commit:

  trainerctl/_embedded/source.json   {"url": …, "ref": …, "commit": …, "digest": …}
  trainerctl/_embedded/manifests/    the ref's manifests/ tree, unchanged

(`ref` is the channel's tag, or its commit when it has none.) A render of that URL and ref (or
commit), which `--channel` of that channel and no source flags at all are, reads it in place:
nothing is fetched, copied or cached.
Every render hashes it again (as it does a cached tree), so an altered installation is refused. A
checkout or an editable install has no copy; the default source is then fetched like any other.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from trainerctl.errors import InputError, TrainerctlError
from trainerctl.source.cache import PinError, SourceTree, check_pin, check_pinned_digest, expected_commit
from trainerctl.source.lock_file import Lock
from trainerctl.source.pins import pinned_commit
from trainerctl.source.validate import is_commit, normalize_url, shown_url
from trainerctl.trust.bounded_read import read_input

EMBED_DIR = Path(__file__).resolve().parents[1] / "_embedded"
RECORD = "source.json"
FIELDS = ("url", "ref", "commit", "digest")


@dataclass(frozen=True)
class EmbeddedRelease:
    """What the wheel carries: which ref of which repository, at which commit and tree digest."""

    url: str
    ref: str
    commit: str
    digest: str
    manifests: Path

    def serves(self, url: str, ref: str) -> bool:
        return normalize_url(url) == normalize_url(self.url) and ref in (self.ref, self.commit)


class DamagedInstallation(TrainerctlError):
    """The embedded copy's record is unreadable or disagrees with this trainerctl's pins."""


def _damaged(root: Path, problem: str) -> DamagedInstallation:
    return DamagedInstallation(f"{root}: trainerctl's embedded release is damaged ({problem}): reinstall "
                               "trainerctl, or render with --refresh (fetch) or --source PATH")


def embedded_release(root: Path | None = None) -> EmbeddedRelease | None:
    """The release this installation carries, None when it carries none."""
    root = EMBED_DIR if root is None else root
    record = root / RECORD
    if not record.is_file():
        return None
    try:
        data = json.loads(read_input(str(record), str(record), "cache-file"))
    except (InputError, ValueError, RecursionError):
        raise _damaged(root, f"{RECORD} is not the JSON the wheel build writes") from None
    if not isinstance(data, dict) or any(not isinstance(data.get(k), str) or not data[k] for k in FIELDS):
        raise _damaged(root, f"{RECORD}: expected the strings {', '.join(FIELDS)}")
    if not is_commit(data["commit"]) or not (root / "manifests").is_dir():
        raise _damaged(root, "no commit or no manifests/")
    return EmbeddedRelease(*(data[k] for k in FIELDS), root / "manifests")


def embedded_source(url: str, ref: str, lock: Lock | None = None, root: Path | None = None) -> SourceTree | None:
    """The embedded copy when it is what `url` at `ref` resolves to, else None (fetch it).

    The copy answers to the same checks as a fetch: the pinned commit, the pinned tree digest, and
    a lock file's commit and digest when one applies."""
    release = embedded_release(root)
    if release is None or not release.serves(url, ref):
        return None
    if pinned_commit(release.url, release.ref) != release.commit:
        raise _damaged(release.manifests.parent, f"it holds {release.ref} at {release.commit}, which this trainerctl "
                                                 "does not pin")
    check_pin(url, ref, release.commit, expected_commit(url, ref, lock))
    check_pinned_digest(url, ref, release.commit, release.digest, f"the embedded copy {release.manifests}")
    if lock is not None and lock.applies_to(url, ref) and lock.digest != release.digest:
        raise PinError(
            f"the copy of {shown_url(url)} {ref} ({release.commit}) embedded in trainerctl has digest "
            f"{release.digest}, but trainerctl.lock records {lock.digest}; the lock was altered"
        )
    return SourceTree(release.manifests, url, ref, release.commit, release.digest, embedded=True)
