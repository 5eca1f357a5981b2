"""File access for one kustomization root through the build's filesystem (filesys.py), with
kustomize's load restrictor (LoadRestrictionsRootOnly): a file must lie in or below the root.

Paths are joined and cleaned lexically first, as Go's filepath.Join does (`../sub/x` from root
`sub` is `sub/x`), then symlinks are resolved one hop at a time through the filesystem, so an
in-memory layer obeys the same rules as the disk. Where a boundary applies (the root, for a
file; the repository, for a base in a fetched repository) the walk is refused at the first hop
that leaves it, even if a later hop would come back.
"""

from __future__ import annotations

import posixpath

from trainerctl.kustomize.errors import KustomizeError
from trainerctl.kustomize.filesys import DIR, FILE, LINK, FileSystem, FsError, within

KUSTOMIZATION_FILES = ("kustomization.yaml", "kustomization.yml", "Kustomization")
MAX_LINKS = 40  # Linux's limit before ELOOP


class Outside(Exception):
    """A path, or a symlink hop on its way, that leaves the boundary."""

    def __init__(self, where: str):
        super().__init__(where)
        self.where = where


class Missing(Exception):
    def __init__(self, why: str):
        super().__init__(why)
        self.why = why


def clean(path: str) -> str:
    """Lexically clean, like Go's filepath.Clean (a leading `//` is one slash)."""
    out = posixpath.normpath(path)
    return "/" + out.lstrip("/") if out.startswith("//") else out


def real_path(fs: FileSystem, path: str, boundary: str | None = None) -> tuple[str, str]:
    """(the real path of absolute `path`, its kind: FILE, DIR or OTHER's description).

    Raises Outside when `boundary` (a real directory) is left, Missing when a part is absent,
    is no directory, or links loop.
    """
    path = clean(path)
    if boundary is not None:
        if not within(path, boundary):
            raise Outside(path)
        resolved, pending = boundary, path[len(boundary):].split("/")
    else:
        resolved, pending = "/", path.split("/")
    pending.reverse()  # a stack: the next part is last
    hops = 0
    kind = DIR
    while pending:
        part = pending.pop()
        if part in ("", "."):
            continue
        if kind != DIR:
            raise Missing(f"{resolved}: not a directory")
        if part == "..":
            resolved = posixpath.dirname(resolved)
            if boundary is not None and not within(resolved, boundary):
                raise Outside(resolved)
            continue
        candidate = posixpath.join(resolved, part)
        try:
            entry = fs.lstat(candidate)
        except FsError as exc:
            raise Missing(f"{candidate}: {exc}") from None
        if entry is None:
            raise Missing("no such file or directory")
        if entry.kind == LINK:
            hops += 1
            if hops > MAX_LINKS:
                raise Missing("too many levels of symbolic links")
            target = entry.target
            if target.startswith("/"):
                target = clean(target)
                if boundary is not None:
                    if not within(target, boundary):
                        raise Outside(target)
                    resolved, target = boundary, target[len(boundary):]
                else:
                    resolved = "/"
            pending.extend(reversed(target.split("/")))
            continue
        resolved = candidate
        kind = entry.kind if entry.kind in (FILE, DIR) else (entry.what or "not a regular file")
    return resolved, kind


class Loader:
    """File access for one kustomization root."""

    __slots__ = ("root", "fs", "chain", "repo_top", "remote", "display")

    def __init__(self, root: str, fs: FileSystem, chain: tuple[str, ...] = (),
                 repo_top: str | None = None, remote: object | None = None, display: str = ""):
        self.root = root  # real path of the kustomization's directory
        self.fs = fs
        # Real roots of the kustomizations that led here, outermost first (cycle detection).
        self.chain = chain
        # For a base in a fetched repository: the repository's top, which no base may leave.
        self.repo_top = repo_top
        self.remote = remote  # the remote.Fetcher shared by the whole build
        self.display = display  # how to name this root in messages

    def name(self, rel: str) -> str:
        label = getattr(self.fs, "label", None)
        if label is not None:
            found = label(clean(posixpath.join(self.root, rel)))
            if found:
                return found
        base = self.display or self.root
        return f"{base}/{rel}" if rel else base

    def resolve_file(self, rel: str) -> str:
        """`rel` (relative to the root, or absolute) as a real path inside the root."""
        path = rel if posixpath.isabs(rel) else posixpath.join(self.root, rel)
        try:
            real, kind = real_path(self.fs, path, self.root)
        except Outside as exc:
            raise KustomizeError(
                f"{self.name(rel)}: security: file '{exc.where}' is not in or below '{self.root}'"
            ) from None
        except Missing as exc:
            raise KustomizeError(f"{self.name(rel)}: {_missing(exc.why)}") from None
        if kind == DIR:
            raise KustomizeError(f"{self.name(rel)}: is a directory, expected a file")
        if kind != FILE:
            raise KustomizeError(f"{self.name(rel)}: {kind}, not a regular file")
        return real

    def read(self, rel: str) -> bytes:
        """A file of this root, or, as kustomize's loader does for every field that names a
        file (patches, configurations, crds, generator files, openapi), an http(s) URL."""
        if self.remote is not None and rel.startswith(("http://", "https://")):
            return self.remote.get_file(rel, self.name(""))  # type: ignore[attr-defined]
        path = self.resolve_file(rel)
        try:
            return self.fs.read(path)
        except FsError as exc:
            raise KustomizeError(f"{self.name(rel)}: {exc}") from None

    def read_text(self, rel: str) -> str:
        data = self.read(rel)
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            raise KustomizeError(f"{self.name(rel)}: not valid UTF-8 text") from None

    def directory(self, rel: str) -> str | None:
        """The real directory `rel` names (symlinks followed, no restriction), or None."""
        try:
            real, kind = real_path(self.fs, posixpath.join(self.root, rel))
        except (Outside, Missing):
            return None
        return real if kind == DIR else None

    def child(self, directory: str, display: str, repo_top: str | None = None) -> "Loader":
        """A loader for a base's real directory: its own root, checked for cycles and, in a
        fetched repository, for leaving it."""
        top = repo_top or self.repo_top
        if top is not None and not within(directory, top):
            raise KustomizeError(
                f"{display}: security: bases in kustomizations found in fetched git repositories "
                f"must be within the repository, but base '{directory}' is outside '{top}'"
            )
        for visited in self.chain + (self.root,):
            if within(visited, directory):
                raise KustomizeError(
                    f"{display}: cycle detected: candidate root '{directory}' contains visited "
                    f"root '{visited}'"
                )
        return Loader(directory, self.fs, self.chain + (self.root,), top, self.remote, display)

    def base_directory(self, rel: str, display: str) -> str | None:
        """The real directory of base `rel`, or None when there is none. Inside a fetched
        repository the walk may not leave it at any hop (kubectl checks only where it ends)."""
        try:
            real, kind = real_path(self.fs, posixpath.join(self.root, rel), self.repo_top)
        except Outside as exc:
            raise KustomizeError(
                f"{display}: security: bases in kustomizations found in fetched git repositories "
                f"must be within the repository, but base '{exc.where}' is outside "
                f"'{self.repo_top}'"
            ) from None
        except Missing:
            return None
        return real if kind == DIR else None


def _missing(why: str) -> str:
    return "no such file" if why == "no such file or directory" else why


def find_kustomization(loader: Loader) -> str:
    """The name of the one kustomization file of a root. Like kustomize, a file it may not read
    (a symlink leading out of the root) does not count, and is named in the error."""
    found, outside = [], []
    for n in KUSTOMIZATION_FILES:
        try:
            entry = loader.fs.lstat(posixpath.join(loader.root, n))
        except FsError:
            entry = None
        if entry is None or entry.kind == DIR:
            continue
        try:
            loader.resolve_file(n)
        except KustomizeError as exc:
            outside.append(str(exc))
            continue
        found.append(n)
    if not found:
        if outside:
            raise KustomizeError(outside[0])
        raise KustomizeError(
            f"{loader.name('')}: unable to find one of 'kustomization.yaml', 'kustomization.yml' "
            f"or 'Kustomization' in directory '{loader.root}'"
        )
    if len(found) > 1:
        raise KustomizeError(f"{loader.name('')}: found multiple kustomization files")
    return found[0]
