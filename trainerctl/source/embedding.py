"""Put the default channel's tree into a wheel being built (setup.py's build_py runs this).

The manifests come from the first of these that holds the pinned commit's tree, judged by its
digest (pins.yaml), never by its name:
  1. $TRAINERCTL_EMBED_SOURCE: a checkout of the pinned commit (its root or its manifests/ dir);
     when set, it must be right, or the build fails;
  2. ../shared/upstream/*/* beside the repository (where CI keeps upstream reference data), those
     named after the channel's tag or commit first;
  3. a fetch of the pinned tag or commit through trainerctl's own fetch code, into a throwaway cache.
The copy written into the wheel is hashed again, so what ships is what was checked. Upstream data
is never committed to the repository: the wheel build brings it in.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

from trainerctl.errors import TrainerctlError
from trainerctl.source.cache import SourceCache
from trainerctl.source.embedded import FIELDS, RECORD
from trainerctl.source.pins import default_ref, default_url, pinned_commit, pinned_digest
from trainerctl.source.tree import walk_tree

ENV = "TRAINERCTL_EMBED_SOURCE"


class EmbedError(TrainerctlError):
    """The wheel cannot carry the pinned release: one line says why and what to set."""


def _manifests(path: Path) -> Path:
    return path / "manifests" if (path / "manifests").is_dir() else path


def _digest(manifests: Path) -> str | None:
    try:
        return walk_tree(manifests)
    except TrainerctlError:  # not a directory, a symlink leaving it, an unreadable file
        return None


def _symlinks(manifests: Path) -> list[str]:
    return sorted(str(p.relative_to(manifests)) for p in manifests.rglob("*") if p.is_symlink())


def find_tree(repo_root: Path, env: dict | None = None, fetch=None) -> tuple[Path, str, Path | None]:
    """(manifests dir, where it was found, a temporary dir to remove afterwards) for the default
    channel; EmbedError when no candidate holds its tree."""
    env = os.environ if env is None else env
    url, ref = default_url(), default_ref()
    commit = pinned_commit(url, ref)
    digest = pinned_digest(commit)
    if not commit or not digest:
        raise EmbedError(f"pins.yaml pins no commit and tree digest for the default channel's {url} {ref}")
    given = env.get(ENV)
    if given:
        manifests = _manifests(Path(given))
        found = _digest(manifests)
        if found != digest:
            raise EmbedError(f"{ENV}={given}: its manifests/ hash to {found or 'nothing (not a readable tree)'}, "
                             f"not {digest} ({url} {ref} at {commit})")
        return manifests, f"{ENV}={given}", None
    shared = repo_root.parent / "shared" / "upstream"
    named = (ref, commit[:7])  # odh-3.5.0, or main-d140e85 for a commit on main
    for candidate in sorted(shared.glob("*/*"), key=lambda p: (not p.name.endswith(named), str(p))):
        if _digest(_manifests(candidate)) == digest:
            return _manifests(candidate), str(candidate), None
    scratch = Path(tempfile.mkdtemp(prefix="trainerctl-embed-"))
    try:
        manifests = (fetch or _fetch)(url, ref, scratch)
    except TrainerctlError as exc:
        shutil.rmtree(scratch, ignore_errors=True)
        raise EmbedError(f"cannot embed {url} {ref} ({commit}): {ENV} is not set, {shared}/*/* holds no tree "
                         f"with digest {digest}, and the fetch failed: {exc}; set {ENV} to a checkout of that "
                         "commit") from None
    return manifests, f"a fetch of {url} {ref}", scratch


def _fetch(url: str, ref: str, cache: Path) -> Path:
    """The pinned commit fetched into a throwaway cache (its errors name the URL, never the cache)."""
    store = SourceCache(cache)
    return store.tree_dir(store.fetch(url, ref, pinned_commit(url, ref))) / "manifests"


def embed(dest: Path, repo_root: Path, env: dict | None = None, fetch=None, log=print) -> str:
    """Write the default channel's tree to `dest` (trainerctl/_embedded in the wheel's build dir);
    return a line saying what was embedded from where."""
    url, ref = default_url(), default_ref()
    commit = pinned_commit(url, ref)
    digest = pinned_digest(commit)
    manifests, where, scratch = find_tree(repo_root, env, fetch)
    try:
        links = _symlinks(manifests)
        if links:  # a wheel is a zip: it would carry the link's target, and the digest would differ
            raise EmbedError(f"{where}: {links[0]} is a symlink, which a wheel cannot carry")
        if dest.exists():
            shutil.rmtree(dest)
        dest.mkdir(parents=True)
        shutil.copytree(manifests, dest / "manifests", copy_function=shutil.copy)
        for path in (dest / "manifests").rglob("*"):
            path.chmod(path.stat().st_mode | 0o200)  # the source may be read-only; the build dir is cleaned later
        copied = walk_tree(dest / "manifests")
        if copied != digest:
            raise EmbedError(f"the copy of {where} in {dest} hashes to {copied}, not {digest}")
        record = dict(zip(FIELDS, (url, ref, commit, digest)))
        (dest / RECORD).write_text(json.dumps(record, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    finally:
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)
    line = f"trainerctl: embedded {url} {ref} ({commit}, {digest}) from {where}"
    log(line)
    return line
