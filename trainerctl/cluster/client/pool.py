"""A small thread pool for per-object requests: the API server handles them concurrently and
one round-trip per object is the cost that dominates an install."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Callable, Iterable, TypeVar

T = TypeVar("T")
R = TypeVar("R")

WORKERS = 8


def parallel_map(fn: Callable[[T], R], items: Iterable[T], workers: int = WORKERS) -> list[R]:
    """Results in input order; the first exception propagates after the others are cancelled."""
    items = list(items)
    if len(items) <= 1:
        return [fn(i) for i in items]
    pool = ThreadPoolExecutor(max_workers=min(workers, len(items)))
    try:
        futures = [pool.submit(fn, i) for i in items]
        return [f.result() for f in futures]
    finally:
        # cancel_futures: on Ctrl-C or an error nothing new starts; running requests finish.
        pool.shutdown(wait=True, cancel_futures=True)
