"""Output order: kustomize's legacy kind order (the CLI default) or input order (fifo)."""

from __future__ import annotations

from trainerctl.kustomize.errors import KustomizeError
from trainerctl.kustomize.resid import ORDER_FIRST, ORDER_LAST
from trainerctl.kustomize.resource import Resource


def _legacy_key(r: Resource, first: list[str], last: list[str]):
    kind = r.gvk.kind
    if kind in first:
        rank = first.index(kind) - len(first)
    elif kind in last:
        rank = 1 + last.index(kind)
    else:
        rank = 0
    gvk = str(r.gvk)
    return (rank, gvk, "|".join([gvk, r.namespace or "~X", r.name or "~N"]))


def order(resources: list[Resource], options: dict | None) -> list[Resource]:
    options = options or {}
    kind = options.get("order", "legacy")
    if kind == "fifo":
        return list(resources)
    if kind != "legacy":
        raise KustomizeError(f"sortOptions.order must be legacy or fifo, got {kind!r}")
    legacy = options.get("legacySortOptions") or {}
    first = legacy.get("orderFirst") or ORDER_FIRST
    last = legacy.get("orderLast") or ORDER_LAST
    return sorted(resources, key=lambda r: _legacy_key(r, first, last))
