"""File access for one kustomization root, refusing anything outside it (kustomize's default
LoadRestrictionsRootOnly): paths are resolved, symlinks included, before the check."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from trainerctl.kustomize.errors import KustomizeError

KUSTOMIZATION_FILES = ("kustomization.yaml", "kustomization.yml", "Kustomization")


@dataclass
class Loader:
    root: Path  # resolved directory of the kustomization
    # Resolved roots of the kustomizations that led here, outermost first (cycle detection).
    chain: tuple[Path, ...] = ()
    # For a remote git base: the clone's top, which no base may leave.
    repo_top: Path | None = None
    remote: "object | None" = None  # the remote.Fetcher shared by the whole build
    display: str = ""  # how to name this root in messages

    def name(self, rel: str) -> str:
        return f"{self.display or self.root}/{rel}" if rel else str(self.display or self.root)

    def resolve_file(self, rel: str) -> Path:
        """`rel` (relative to the root) as a real path inside the root, or a clear error."""
        if os.path.isabs(rel):
            candidate = Path(rel)
        else:
            candidate = self.root / rel
        try:
            real = candidate.resolve(strict=True)
        except FileNotFoundError:
            raise KustomizeError(f"{self.name(rel)}: no such file") from None
        except OSError as exc:
            raise KustomizeError(f"{self.name(rel)}: {exc.strerror}") from None
        if real != self.root and self.root not in real.parents:
            raise KustomizeError(
                f"{self.name(rel)}: security: file '{real}' is not in or below '{self.root}'"
            )
        return real

    def read(self, rel: str) -> bytes:
        path = self.resolve_file(rel)
        if path.is_dir():
            raise KustomizeError(f"{self.name(rel)}: is a directory, expected a file")
        try:
            return path.read_bytes()
        except OSError as exc:
            raise KustomizeError(f"{self.name(rel)}: {exc.strerror}") from None

    def read_text(self, rel: str) -> str:
        data = self.read(rel)
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            raise KustomizeError(f"{self.name(rel)}: not valid UTF-8 text") from None

    def is_local_file(self, rel: str) -> bool:
        return (self.root / rel).is_file()

    def child(self, directory: Path, display: str, repo_top: Path | None = None) -> "Loader":
        """A loader for a base directory: its own root, checked for cycles."""
        real = directory.resolve()
        top = repo_top or self.repo_top
        if top is not None and real != top and top not in real.parents:
            raise KustomizeError(f"{display}: base leaves the remote repository {top}")
        for visited in self.chain + (self.root,):
            if real == visited or real in visited.parents:
                raise KustomizeError(
                    f"{display}: cycle detected: candidate root '{real}' contains visited "
                    f"root '{visited}'"
                )
        return Loader(real, self.chain + (self.root,), top, self.remote, display)


def find_kustomization(loader: Loader) -> Path:
    """The one kustomization file of a root. Like kustomize, a file it may not read (a symlink
    leading out of the root) does not count, and is named in the error."""
    directory, display = loader.root, loader.name("")
    found, outside = [], []
    for n in KUSTOMIZATION_FILES:
        path = directory / n
        if not (path.is_file() or path.is_symlink()):
            continue
        try:
            loader.resolve_file(n)
        except KustomizeError as exc:
            outside.append(str(exc))
            continue
        found.append(path)
    if not found:
        if outside:
            raise KustomizeError(outside[0])
        raise KustomizeError(
            f"{display}: unable to find one of 'kustomization.yaml', 'kustomization.yml' or "
            f"'Kustomization' in directory '{directory}'"
        )
    if len(found) > 1:
        raise KustomizeError(f"{display}: found multiple kustomization files")
    return found[0]
