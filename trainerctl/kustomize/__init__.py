"""A pure-Python kustomize: `build(path)` returns what `kustomize build path` would print.

The room list: yamlio (reading and kustomize's exact writing), resid/resource (identity),
loader/remote (files, the load restrictor, https and git), kustfile (the kustomization file),
target (one kustomization's pipeline), generators/hashing, smp (strategic merge),
transformers/ (one module per transformer family), fieldspecs/config (which fields they touch),
sort (output order).
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterable

from trainerctl.kustomize.errors import KustomizeError

__all__ = ["build", "build_resources", "build_yaml", "KustomizeError"]


MANAGED_BY = ("app.kubernetes.io/managed-by", "kustomize-v5.8.1")


def build_resources(path: str, *, remote_mirrors: Iterable[str] = (), timeout: float | None = None):
    """The resources `kustomize build path` prints, in its order, build state attached.

    Very deep input (kustomize allows 10000 levels) outgrows Python's default recursion limit;
    such a build is retried once with a larger limit on a thread with a larger stack.
    """
    return _deep_retry(_build_resources, path, remote_mirrors, timeout)


def _deep_retry(fn, *args):
    try:
        return fn(*args)
    except RecursionError:
        return _deep(fn, *args)


def _deep(fn, *args):
    import sys
    import threading

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


def _build_resources(path: str, remote_mirrors, timeout):
    from trainerctl.kustomize import openapi, remote, sort
    from trainerctl.kustomize.loader import Loader
    from trainerctl.kustomize.resource import annotation_text
    from trainerctl.kustomize.target import Builder
    from trainerctl.kustomize.transformers import hashes, nameref, refvar

    openapi.begin()
    fetcher = remote.Fetcher(mirrors=remote.parse_mirrors(list(remote_mirrors)))
    if timeout:
        fetcher.timeout = timeout
    builder = Builder(fetcher)
    if remote.is_remote(path):
        top, directory = fetcher.clone(path, path)
        loader = Loader(directory.resolve(), (), top.resolve(), fetcher, path)
    else:
        root = Path(path)
        if not root.exists():
            raise KustomizeError(f"{path}: no such directory")
        if not root.is_dir():
            raise KustomizeError(f"{path}: not a directory containing a kustomization")
        loader = Loader(root.resolve(), (), None, fetcher, path.rstrip("/") or path)
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


def build(path: str, *, remote_mirrors: Iterable[str] = (), timeout: float | None = None) -> list[dict]:
    """The objects `kustomize build path` produces, in its output order."""
    return [r.obj for r in build_resources(path, remote_mirrors=remote_mirrors, timeout=timeout)]


def build_yaml(path: str, *, remote_mirrors: Iterable[str] = (), timeout: float | None = None) -> str:
    """Exactly the bytes `kubectl kustomize path` prints."""
    from trainerctl.kustomize.yamlio import dump_all

    def run(p, mirrors, t):
        return dump_all([r.obj for r in _build_resources(p, mirrors, t)])

    return _deep_retry(run, path, remote_mirrors, timeout)
