"""`fetch`: fill the source cache for a later offline render, and pin what was fetched."""

from __future__ import annotations

from pathlib import Path

from trainerctl import ui
from trainerctl.errors import InputError
from trainerctl.source.cache import check_tree, resolve_source
from trainerctl.source.lock_file import DEFAULT_LOCK_FILE, Lock, read_lock, write_lock
from trainerctl.source.pins import git_source
from trainerctl.source.validate import shown_url


def fetch(options, *, write: bool = True) -> tuple[str, str, str, str, Path]:
    """(url, ref, commit, digest, cached tree); always asks the remote, so a moved tag is noticed
    here rather than in an air-gapped render. Writes the lock file unless `write` is False."""
    if options.source_path:
        raise InputError(f"fetch: --source {options.source_path} is a local checkout; fetch needs a git URL")
    url, ref = git_source(options.source_url, options.ref, options.channel)
    lock_path = lock_file_path(options.lock_file)
    current = read_lock(lock_path) if write else None
    tree = resolve_source(
        url, ref, cache_dir=options.cache_dir, refresh=True,
        lock=current if current is not None and current.applies_to(url, ref) else None,
    )
    digest = check_tree(tree)
    ui.info(f"fetch: {shown_url(url)} {ref} -> {tree.commit} ({digest}) in {tree.manifests.parent}")
    if write:
        write_source_lock(lock_path, url, ref, tree.commit, digest)
    return url, ref, tree.commit, digest, tree.manifests


def lock_file_path(lock_file) -> Path:
    return Path(lock_file or DEFAULT_LOCK_FILE)


def check_update_lock(local: bool) -> None:
    """`render --update-lock` of a local checkout fails before any work is done."""
    if local:
        raise InputError("--update-lock: a local checkout (--source PATH) has nothing to lock")


def update_lock(lock_file, info) -> None:
    """`render --update-lock`: pin what was rendered."""
    check_update_lock(info.url is None)
    write_source_lock(lock_file_path(lock_file), info.url, info.ref, info.commit, info.digest)


def write_source_lock(path: Path, url: str, ref: str, commit: str, digest: str) -> None:
    write_lock(path, Lock(url, ref, commit, digest))
    ui.info(f"lock: {path} pins {shown_url(url)} {ref} at {commit}")
