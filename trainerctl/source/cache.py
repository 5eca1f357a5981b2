"""The source cache: a shallow bare repository per URL plus one extracted manifests tree per commit.

Layout under the cache dir (default `$XDG_CACHE_HOME/trainerctl`, else `~/.cache/trainerctl`):
  repos/<key>.git     bare repo holding only the fetched commits (depth 1)
  repos/<key>.json    {"url": …, "refs": {ref: commit}}: lets a warm render run without git
  trees/<commit>/manifests/, trees/<commit>/source.json {"commit": …, "digest": …}
A render never writes here; it copies a tree into its own work dir (render/workdir.py).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from trainerctl.errors import InputError, TrainerctlError
from trainerctl.source import gitrepo
from trainerctl.source.gitrepo import FetchError
from trainerctl.source.cachedir import default_cache_dir
from trainerctl.source.lock import Lock
from trainerctl.source.pins import pinned_commit
from trainerctl.source.tree import walk_tree
from trainerctl.source.validate import is_commit, normalize_url, validate_ref, validate_url


class PinError(TrainerctlError):
    """The source resolved to something other than what it is pinned to."""


@dataclass(frozen=True)
class SourceTree:
    """A manifests tree to render, and what it must hash to (None: not known in advance)."""

    manifests: Path
    url: str | None
    ref: str | None
    commit: str | None
    expected_digest: str | None


def _repo_key(url: str) -> str:
    norm = normalize_url(url)
    name = re.sub(r"[^A-Za-z0-9._-]", "_", norm.rsplit("/", 1)[-1])[:40] or "repo"
    return f"{name}-{hashlib.sha256(norm.encode()).hexdigest()[:16]}"


def _write_json(path: Path, data: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + f".{os.getpid()}.tmp")
    tmp.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    tmp.replace(path)


def _read_json(path: Path) -> dict:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (FileNotFoundError, ValueError):
        return {}


def check_cache_dir(root: Path, given: bool) -> Path:
    """The cache directory, or one line saying why it cannot be one (before any work)."""
    where = f"--cache-dir {root}" if given else (
        f"TRAINERCTL_CACHE_DIR {root}" if os.environ.get("TRAINERCTL_CACHE_DIR") else f"cache directory {root}")
    if not str(root).strip():
        raise InputError(f"{where}: expected a directory")
    for path in (root, *root.parents):
        if path.exists():
            if not path.is_dir():
                raise InputError(f"{where}: {path} is a file, not a directory")
            break
    return root


class SourceCache:
    def __init__(self, root: Path | None = None):
        self.root = check_cache_dir(Path(root) if root else default_cache_dir(), given=bool(root))

    def repo_dir(self, url: str) -> Path:
        return self.root / "repos" / f"{_repo_key(url)}.git"

    def index_path(self, url: str) -> Path:
        return self.root / "repos" / f"{_repo_key(url)}.json"

    def tree_dir(self, commit: str) -> Path:
        return self.root / "trees" / commit

    def cached_commit(self, url: str, ref: str) -> str | None:
        if is_commit(ref):
            return ref if self.tree_digest(ref) else None
        commit = _read_json(self.index_path(url)).get("refs", {}).get(ref)
        return commit if commit and self.tree_digest(commit) else None

    def tree_digest(self, commit: str) -> str | None:
        """The digest recorded when the tree of commit was extracted, None when not cached."""
        meta = _read_json(self.tree_dir(commit) / "source.json")
        if meta.get("commit") != commit or not (self.tree_dir(commit) / "manifests").is_dir():
            return None
        return meta.get("digest")

    def remember_ref(self, url: str, ref: str, commit: str) -> None:
        if is_commit(ref):
            return
        index = _read_json(self.index_path(url))
        index["url"] = url
        index.setdefault("refs", {})[ref] = commit
        _write_json(self.index_path(url), index)

    def fetch(self, url: str, ref: str, expected_commit: str | None) -> str:
        """Ask the remote for ref, check the pin, fetch and extract the commit; return it."""
        repo = gitrepo.open_bare_repo(self.repo_dir(url))
        try:
            if is_commit(ref):
                commit, remote_ref = ref, None
            else:
                commit, remote_ref = gitrepo.ls_remote(repo, url, ref)
            check_pin(url, ref, commit, expected_commit)
            if not self.tree_digest(commit):
                gitrepo.fetch_commit(repo, url, remote_ref, commit)
                self._extract(repo, commit)
        finally:
            repo.close()
        self.remember_ref(url, ref, commit)
        return commit

    def _extract(self, repo, commit: str) -> None:
        trees = self.root / "trees"
        trees.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{commit[:12]}-", dir=trees))
        try:
            gitrepo.extract_manifests(repo, commit, staging / "manifests")
            digest = walk_tree(staging / "manifests")
            _write_json(staging / "source.json", {"commit": commit, "digest": digest})
            final = self.tree_dir(commit)
            if final.exists():  # an incomplete earlier extraction (no source.json)
                shutil.rmtree(final)
            staging.rename(final)
        finally:
            if staging.exists():
                shutil.rmtree(staging, ignore_errors=True)


def check_pin(url: str, ref: str, commit: str, expected: str | None) -> None:
    if expected and commit != expected:
        raise PinError(
            f"{ref} at {url} resolves to {commit}, but it is pinned to {expected} "
            f"(the tag was moved or the cache was altered); check the upstream, then update the pin"
        )


def expected_commit(url: str, ref: str, lock: Lock | None) -> str | None:
    if is_commit(ref):
        return ref
    if lock is not None and lock.applies_to(url, ref):
        return lock.commit
    return pinned_commit(url, ref)


def resolve_source(
    url: str,
    ref: str,
    *,
    cache_dir: Path | None = None,
    lock: Lock | None = None,
    refresh: bool = False,
    offline: bool = False,
) -> SourceTree:
    """Find ref of url in the cache, else fetch it (unless offline), and say what it must hash to.

    A warm cache is used without contacting the remote (tags are pinned, so there is nothing to
    learn); `refresh` asks the remote again, which is how a moved tag is noticed.
    """
    validate_url(url)
    validate_ref(ref)
    cache = SourceCache(cache_dir)
    expected = expected_commit(url, ref, lock)
    commit = None if refresh else cache.cached_commit(url, ref)
    if commit is None:
        if offline:
            raise FetchError(
                f"{url} (ref {ref}) is not in the cache {cache.root} and --offline was given; "
                f"run `trainerctl fetch --source {url} --ref {ref}` where it is reachable"
            )
        try:
            commit = cache.fetch(url, ref, expected)
        except OSError as exc:  # the cache itself: read-only, full, ...
            raise TrainerctlError(f"cache {cache.root}: {exc.strerror}: {exc.filename or ''}".rstrip(": ")) from None
        except FetchError as exc:
            raise FetchError(
                f"{exc}; no cached copy of {ref} in {cache.root}: run `trainerctl fetch` where "
                f"{url} is reachable, or use --source PATH or a local mirror (--source file://…)"
            ) from None
    check_pin(url, ref, commit, expected)
    digest = cache.tree_digest(commit)
    if lock is not None and lock.applies_to(url, ref) and digest != lock.digest:
        raise PinError(
            f"the cached tree of {url} {ref} ({commit}) has digest {digest}, but trainerctl.lock "
            f"records {lock.digest}; the lock or the cache {cache.tree_dir(commit)} was altered"
        )
    return SourceTree(cache.tree_dir(commit) / "manifests", url, ref, commit, digest)


def local_source(path: Path) -> SourceTree:
    """A local checkout: the repository root (holding manifests/) or the manifests dir itself."""
    path = Path(path).resolve()
    manifests = path / "manifests" if (path / "manifests").is_dir() else path
    if not manifests.is_dir():
        raise InputError(f"--source {path}: not a directory")
    return SourceTree(manifests, None, None, _head_commit(path), None)


def _head_commit(path: Path) -> str | None:
    """HEAD of a git work tree at path, read from files (no git process); None otherwise."""
    git_dir = path / ".git"
    try:
        head = (git_dir / "HEAD").read_text().strip()
        if head.startswith("ref: "):
            ref = head[5:]
            ref_file = git_dir / ref
            if ref_file.is_file():
                return ref_file.read_text().strip()
            for line in (git_dir / "packed-refs").read_text().splitlines():
                if line.endswith(" " + ref):
                    return line.split(" ", 1)[0]
            return None
        return head if is_commit(head) else None
    except OSError:
        return None


def check_tree(source: SourceTree, copy_to: Path | None = None) -> str:
    """Hash (and optionally copy) the source tree; refuse a cached tree that was modified."""
    digest = walk_tree(source.manifests, copy_to=copy_to)
    if source.expected_digest and digest != source.expected_digest:
        raise PinError(
            f"{source.manifests} no longer matches the digest recorded when it was fetched "
            f"({source.expected_digest}, now {digest}): the cache was modified; delete "
            f"{source.manifests.parent} and run `trainerctl fetch` again"
        )
    return digest
