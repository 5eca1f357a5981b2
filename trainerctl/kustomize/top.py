"""A build from its top kustomization: the entry points, from a directory (or remote URL) to
resources, objects or the bytes `kubectl kustomize` prints."""

from __future__ import annotations

import os
import sys

from trainerctl.kustomize import openapi, remote, sort
from trainerctl.kustomize.cachedread import SmallParses
from trainerctl.kustomize.errors import KustomizeError
from trainerctl.kustomize.filesys import DIR, DiskFS, FileSystem, within
from trainerctl.kustomize.loader import Loader, Missing, real_path
from trainerctl.kustomize.resource import annotation_text
from trainerctl.kustomize.target import Builder
from trainerctl.kustomize.transformers import hashes, nameref, refvar
from trainerctl.kustomize.cachedwrite import dump_all
from trainerctl.parsed_cache import ParsedCache

TYPE_CHECKING = False  # typing costs a tenth of a kustomize run's start-up
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Iterable


MANAGED_BY = ("app.kubernetes.io/managed-by", "kustomize-v5.8.1")


def build_resources(path: str, *, remote_mirrors: Iterable[str] = (), timeout: float | None = None,
                    fs: FileSystem | None = None, repo_root: str | None = None,
                    parsed_cache: ParsedCache | None = None, cache_dir: str | Path | None = None):
    """The resources `kustomize build path` prints, in its order, build state attached.

    `fs` is where files are read (default: the disk); `repo_root` names the top of a fetched
    repository that `path` lies in: no base may leave it, as kubectl holds cloned repositories.
    `parsed_cache` keeps resource files' parses between builds (default: none, parse every time).
    `cache_dir` is trainerctl's cache home (trainerctl.cachedir), where remote bases and files are
    kept (default: the default home).
    Very deep input (kustomize allows 10000 levels) outgrows Python's default recursion limit;
    such a build is retried once with a larger limit on a thread with a larger stack.
    """
    return _deep_retry(_build_resources, path, remote_mirrors, timeout, fs, repo_root, parsed_cache, cache_dir)


def _deep_retry(fn, *args):
    try:
        return fn(*args)
    except RecursionError:
        return _deep(fn, *args)


def _deep(fn, *args):
    import threading  # only for a build nested deeper than the interpreter's stack allows

    result: dict = {}

    def run() -> None:
        try:
            result["value"] = fn(*args)
        except BaseException as exc:  # re-raised on the calling thread
            result["error"] = exc

    old_limit, old_stack = sys.getrecursionlimit(), threading.stack_size()
    sys.setrecursionlimit(200_000)
    threading.stack_size(512 * 1024 * 1024)
    try:
        worker = threading.Thread(target=run)
        worker.start()
        worker.join()
    finally:
        threading.stack_size(old_stack)
        sys.setrecursionlimit(old_limit)
    if "error" in result:
        if isinstance(result["error"], RecursionError):
            raise KustomizeError(f"{args[0]}: input nested too deeply to build")
        raise result["error"]
    return result["value"]


def _top_loader(path: str, fetcher, fs: FileSystem, repo_root: str | None):
    if remote.is_remote(path):
        top, directory = fetcher.clone(path, path)
        return Loader(str(directory.resolve()), fs, (), str(top.resolve()), fetcher, remote.redact(path))
    absolute = path if os.path.isabs(path) else os.path.join(os.getcwd(), path)
    try:
        root, kind = real_path(fs, absolute)
        if repo_root is not None:
            repo_root = real_path(fs, repo_root)[0]
    except Missing as exc:
        why = "no such directory" if exc.why == "no such file or directory" else exc.why
        raise KustomizeError(f"{path}: {why}") from None
    if kind != DIR:
        raise KustomizeError(f"{path}: not a directory containing a kustomization")
    if repo_root is not None and not within(root, repo_root):
        raise KustomizeError(f"{path}: outside the repository {repo_root}")
    return Loader(root, fs, (), repo_root, fetcher, path.rstrip("/") or path)


def _build_resources(path: str, remote_mirrors, timeout, fs, repo_root, parsed_cache, cache_dir):
    openapi.begin()
    fetcher = remote.Fetcher(mirrors=remote.parse_mirrors(list(remote_mirrors)), cache_home=cache_dir)
    if timeout:
        fetcher.timeout = timeout
    small = SmallParses(parsed_cache, str(path)) if parsed_cache is not None else None
    try:
        built = _build_with(Builder(fetcher, parsed_cache, small), _top_loader(path, fetcher, fs or DiskFS(), repo_root))
    except KustomizeError as exc:  # a message may quote a URL as it was written
        raise KustomizeError(remote.redact(str(exc))) from None
    finally:
        fetcher.close()
    if small is not None:
        small.save()
    return built


def _build_with(builder, loader):
    acc = builder.build_top(loader)
    k = acc.kustomization
    hashes.add_hashes(acc.resmap)
    nameref.fix(acc.resources, acc.config)
    refvar.resolve(acc.resources, acc.variables, acc.config.specs.get("varReference", []),
                   loader.name(""))
    kept = [r for r in acc.resources
            if annotation_text(r.annotations().get("config.kubernetes.io/local-config", "false"))
            == "false"]
    resources = sort.order(kept, k.get("sortOptions"))
    metadata = k.get("buildMetadata") or []
    if "managedByLabel" in metadata:
        for r in resources:
            labels = r.metadata.get("labels")
            if not isinstance(labels, dict):
                labels = r.metadata["labels"] = {}
            labels[MANAGED_BY[0]] = MANAGED_BY[1]
    keep_origin = "originAnnotations" in metadata
    keep_transformations = "transformerAnnotations" in metadata
    for r in resources:
        r.finish(keep_origin, keep_transformations)
    return resources


def build(path: str, *, remote_mirrors: Iterable[str] = (), timeout: float | None = None,
          fs: FileSystem | None = None, repo_root: str | None = None,
          parsed_cache: ParsedCache | None = None, cache_dir: str | Path | None = None) -> list[dict]:
    """The objects `kustomize build path` produces, in its output order."""
    return [r.obj for r in build_resources(path, remote_mirrors=remote_mirrors, timeout=timeout,
                                           fs=fs, repo_root=repo_root, parsed_cache=parsed_cache,
                                           cache_dir=cache_dir)]


def build_yaml(path: str, *, remote_mirrors: Iterable[str] = (), timeout: float | None = None,
               fs: FileSystem | None = None, repo_root: str | None = None,
               parsed_cache: ParsedCache | None = None, cache_dir: str | Path | None = None) -> str:
    """Exactly the bytes `kubectl kustomize path` prints."""
    def run(*args):
        return dump_all([r.obj for r in _build_resources(*args)], parsed_cache)

    return _deep_retry(run, path, remote_mirrors, timeout, fs, repo_root, parsed_cache, cache_dir)
