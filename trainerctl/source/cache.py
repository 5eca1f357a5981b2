"""The source cache: a shallow bare repository per URL plus one extracted manifests tree per commit.

Layout under the cache dir (default `$XDG_CACHE_HOME/trainerctl`, else `~/.cache/trainerctl`):
  repos/<key>.git     bare repo holding only the fetched commits (depth 1)
  repos/<key>.json    {"url": …, "refs": {ref: commit}}: lets a warm render run without git
  trees/<commit>/manifests/, trees/<commit>/source.json {"commit": …, "digest": …}
A render never writes here; it copies a tree into its own work dir (render/workdir.py). Its
folders are made and opened through trainerctl.cachedir, never through a symlink: a tree folder
that is a link is not cached (it is fetched again), and a bare repository holding one is made anew
before git writes into it.
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

from trainerctl.cachedir import cache_folder, cache_home, cached_folder
from trainerctl.errors import InputError, TrainerctlError
from trainerctl.source import gitrepo
from trainerctl.source.gitrepo import FetchError
from trainerctl.source.lock_file import Lock
from trainerctl.source.pins import pinned_commit, pinned_digest
from trainerctl.source.tree import walk_tree
from trainerctl.source.validate import is_commit, normalize_url, shown_url, validate_ref, validate_url
from trainerctl.trust.bounded_read import os_problem, read_input, shown_path
from trainerctl.trust.redact import strip_userinfo
from trainerctl.trust.safe_write import write_atomic


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
    embedded: bool = False  # the copy of the default channel's tree inside the installed wheel


def _repo_key(url: str) -> str:
    norm = normalize_url(url)
    name = re.sub(r"[^A-Za-z0-9._-]", "_", norm.rsplit("/", 1)[-1])[:40] or "repo"
    return f"{name}-{hashlib.sha256(norm.encode()).hexdigest()[:16]}"


def _write_json(path: Path, data: dict) -> None:
    """A cache file of ours, in a folder cachedir has made (the caller's)."""
    write_atomic(path, json.dumps(data, indent=2, sort_keys=True) + "\n")


def _read_json(path: Path) -> dict:
    """A cache file of ours; anything unreadable, odd, oversized or a symlink counts as not cached."""
    if not os.path.lexists(path):
        return {}
    try:
        data = json.loads(read_input(str(path), f"cache file {path}", "cache-file", follow=False))
    except (InputError, ValueError, RecursionError):
        return {}
    return data if isinstance(data, dict) else {}


def _holds_link(folder: Path) -> bool:
    """Whether anything under `folder` is a symlink (a bare repository has none of its own)."""
    for top, dirs, files in os.walk(folder):
        if any(os.path.islink(os.path.join(top, name)) for name in (*dirs, *files)):
            return True
    return False


class SourceCache:
    def __init__(self, root: Path | None = None):
        self.root = cache_home(root)

    def repo_dir(self, url: str) -> Path:
        return self.root / "repos" / f"{_repo_key(url)}.git"

    def index_path(self, url: str) -> Path:
        return self.root / "repos" / f"{_repo_key(url)}.json"

    def tree_dir(self, commit: str) -> Path:
        return self.root / "trees" / commit

    def cached_commit(self, url: str, ref: str) -> str | None:
        if is_commit(ref):
            return ref if self.tree_digest(ref) else None
        if cached_folder(self.root, "repos") is None:
            return None
        refs = _read_json(self.index_path(url)).get("refs")
        commit = refs.get(ref) if isinstance(refs, dict) else None
        return commit if isinstance(commit, str) and is_commit(commit) and self.tree_digest(commit) else None

    def tree_digest(self, commit: str) -> str | None:
        """The digest recorded when the tree of commit was extracted, None when not cached (or
        when a folder on the way is a symlink: cachedir)."""
        if not is_commit(commit) or cached_folder(self.root, "trees", commit, "manifests") is None:
            return None
        meta = _read_json(self.tree_dir(commit) / "source.json")
        if meta.get("commit") != commit:
            return None
        digest = meta.get("digest")
        return digest if isinstance(digest, str) else None

    def remember_ref(self, url: str, ref: str, commit: str) -> None:
        if is_commit(ref):
            return
        index = _read_json(self.index_path(url))
        index["url"] = strip_userinfo(url)  # the cache never records a credential
        refs = index.get("refs") if isinstance(index.get("refs"), dict) else {}
        refs[ref] = commit
        index["refs"] = refs
        cache_folder(self.root, "repos")
        _write_json(self.index_path(url), index)

    def fetch(self, url: str, ref: str, expected_commit: str | None) -> str:
        """Ask the remote for ref, check the pin, fetch and extract the commit; return it."""
        where = cache_folder(self.root, "repos", self.repo_dir(url).name)
        if _holds_link(where):  # git would write through it: made anew
            shutil.rmtree(where)
            where = cache_folder(self.root, "repos", where.name)
        repo = gitrepo.open_bare_repo(where)
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
        trees = cache_folder(self.root, "trees")
        staging = Path(tempfile.mkdtemp(prefix=f".{commit[:12]}-", dir=trees))
        try:
            gitrepo.extract_manifests(repo, commit, staging / "manifests")
            digest = walk_tree(staging / "manifests")
            _write_json(staging / "source.json", {"commit": commit, "digest": digest})
            final = self.tree_dir(commit)
            if final.is_symlink() or (final.exists() and not final.is_dir()):
                final.unlink()  # the link itself, never what it points to
            elif final.exists():  # an incomplete earlier extraction (no source.json)
                shutil.rmtree(final)
            staging.rename(final)
        finally:
            if staging.exists():
                shutil.rmtree(staging, ignore_errors=True)


def check_pin(url: str, ref: str, commit: str, expected: str | None) -> None:
    if expected and commit != expected:
        raise PinError(
            f"{ref} at {shown_url(url)} resolves to {commit}, but it is pinned to {expected} "
            f"(the tag was moved or the cache was altered); check the upstream, then update the pin"
        )


def check_pinned_digest(url: str, ref: str, commit: str, digest: str | None, what: str) -> None:
    """A pinned commit's manifests must hash to the digest pins.yaml records for it, wherever they
    came from (a fetch, the cache, the copy inside the wheel)."""
    pinned = pinned_digest(commit)
    if pinned and digest != pinned:
        raise PinError(
            f"{what} of {shown_url(url)} {ref} ({commit}) has digest {digest}, but trainerctl pins {pinned} "
            f"for that commit: the upstream tree or the copy was altered"
        )


def expected_commit(url: str, ref: str, lock: Lock | None) -> str | None:
    """The lock's commit first: a lock of a commit ref (a channel without a tag) that records
    another commit was altered, and is refused like a moved tag."""
    if lock is not None and lock.applies_to(url, ref):
        return lock.commit
    if is_commit(ref):
        return ref
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
                f"{shown_url(url)} (ref {ref}) is not in the cache {cache.root} and --offline was given; "
                f"run `trainerctl fetch --source {shown_url(url)} --ref {ref}` where it is reachable"
            )
        try:
            commit = cache.fetch(url, ref, expected)
        except OSError as exc:  # the cache itself: read-only, full, ...
            raise TrainerctlError(f"cache {cache.root}: {exc.strerror}: {exc.filename or ''}".rstrip(": ")) from None
        except FetchError as exc:
            raise FetchError(
                f"{exc}; no cached copy of {ref} in {cache.root}: run `trainerctl fetch` where "
                f"{shown_url(url)} is reachable, or use --source PATH or a local mirror (--source file://…)"
            ) from None
    check_pin(url, ref, commit, expected)
    digest = cache.tree_digest(commit)
    check_pinned_digest(url, ref, commit, digest, f"the cached tree {cache.tree_dir(commit)}")
    if lock is not None and lock.applies_to(url, ref) and digest != lock.digest:
        raise PinError(
            f"the cached tree of {shown_url(url)} {ref} ({commit}) has digest {digest}, but trainerctl.lock "
            f"records {lock.digest}; the lock or the cache {cache.tree_dir(commit)} was altered"
        )
    return SourceTree(cache.tree_dir(commit) / "manifests", url, ref, commit, digest)


def local_source(path: Path) -> SourceTree:
    """A local checkout: the repository root (holding manifests/) or the manifests dir itself."""
    try:
        path = Path(path).resolve()
        manifests = path / "manifests" if (path / "manifests").is_dir() else path
        is_dir = manifests.is_dir()
    except (OSError, RuntimeError) as exc:  # too long, a symlink loop
        problem = os_problem(exc) if isinstance(exc, OSError) else "a symlink loop"
        raise InputError(f"--source {shown_path(str(path))}: {problem}") from None
    if not is_dir:
        raise InputError(f"--source {shown_path(str(path))}: not a directory")
    return SourceTree(manifests, None, None, _head_commit(path), None)


def _head_commit(path: Path) -> str | None:
    """HEAD of a git work tree at path, read from files (no git process); None otherwise."""
    git_dir = path / ".git"

    def text(p: Path) -> str:
        return read_input(str(p), str(p), "cache-file").decode("utf-8", "replace")

    try:
        head = text(git_dir / "HEAD").strip()
        if head.startswith("ref: "):
            ref = head[5:]
            ref_file = git_dir / ref
            if ".." not in ref and ref_file.is_file():
                found = text(ref_file).strip()
                return found if is_commit(found) else None
            for line in text(git_dir / "packed-refs").splitlines():
                if line.endswith(" " + ref):
                    found = line.split(" ", 1)[0]
                    return found if is_commit(found) else None
            return None
        return head if is_commit(head) else None
    except (OSError, InputError):
        return None


def check_tree(source: SourceTree, copy_to: Path | None = None) -> str:
    """Hash (and optionally copy) the source tree; refuse a cached tree that was modified."""
    digest = walk_tree(source.manifests, copy_to=copy_to)
    if source.expected_digest and digest != source.expected_digest and source.embedded:
        raise PinError(
            f"{source.manifests}: the copy of {source.ref} embedded in trainerctl no longer matches its pinned "
            f"digest ({source.expected_digest}, now {digest}): reinstall trainerctl, or render with --refresh "
            f"(fetch) or --source PATH"
        )
    if source.expected_digest and digest != source.expected_digest:
        raise PinError(
            f"{source.manifests} no longer matches the digest recorded when it was fetched "
            f"({source.expected_digest}, now {digest}): the cache was modified; delete "
            f"{source.manifests.parent} and run `trainerctl fetch` again"
        )
    return digest
