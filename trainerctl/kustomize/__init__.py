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


def build_resources(path: str, *, remote_mirrors: Iterable[str] = (), timeout: float | None = None):
    from trainerctl.kustomize import remote, sort
    from trainerctl.kustomize.hashing import hash_of
    from trainerctl.kustomize.loader import Loader
    from trainerctl.kustomize.target import Builder
    from trainerctl.kustomize.transformers import nameref

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
    acc = builder.build_dir(loader)
    resources = acc.resources
    for r in resources:
        if r.needs_hash:
            r.store_previous()
            r.metadata["name"] = f"{r.name}-{hash_of(r.obj)}"
    nameref.fix(resources, acc.config)
    resources = [
        r for r in resources
        if r.annotations().get("config.kubernetes.io/local-config") != "true"
    ]
    return sort.order(resources, acc.kustomization.get("sortOptions"))


def build(path: str, *, remote_mirrors: Iterable[str] = (), timeout: float | None = None) -> list[dict]:
    """The objects `kustomize build path` produces, in its output order."""
    return [r.obj for r in build_resources(path, remote_mirrors=remote_mirrors, timeout=timeout)]


def build_yaml(path: str, *, remote_mirrors: Iterable[str] = (), timeout: float | None = None) -> str:
    """Exactly the bytes `kubectl kustomize path` prints."""
    from trainerctl.kustomize.yamlio import dump_all

    return dump_all(build(path, remote_mirrors=remote_mirrors, timeout=timeout))
