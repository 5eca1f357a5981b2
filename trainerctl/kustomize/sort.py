"""Output order: kustomize's legacy kind order (the CLI default) or input order (fifo).
The top kustomization's `sortOptions` chooses (kustfile checks the combination)."""

from __future__ import annotations

import functools

from trainerctl.kustomize.resid import ORDER_FIRST, ORDER_LAST, Gvk
from trainerctl.kustomize.resource import Resource


def _gvk_string(gvk: Gvk) -> str:
    return "_".join([gvk.group or "~G", gvk.version or "~V", gvk.kind or "~K"])


def _id_string(r: Resource) -> str:
    return "|".join([str(r.gvk.id_string()), r.namespace or "~X", r.name or "~N"])


def order(resources: list[Resource], options: dict | None) -> list[Resource]:
    if options is None:
        options = {"order": "legacy"}
    if options.get("order") == "fifo":
        return list(resources)
    legacy = options.get("legacySortOptions")
    if legacy is None:
        first, last = ORDER_FIRST, ORDER_LAST
    else:
        first, last = legacy.get("orderFirst") or [], legacy.get("orderLast") or []
    ranks = {kind: i - len(first) for i, kind in enumerate(first)}
    ranks.update({kind: 1 + i for i, kind in enumerate(last)})
    keyed = [(ranks.get(r.gvk.kind, 0), _gvk_string(r.gvk), _id_string(r), r) for r in resources]
    namespaces = {k[1] for k in keyed if k[3].gvk.kind == "Namespace"}
    if len(namespaces) < 2:
        keyed.sort(key=lambda k: k[:3])
        return [k[3] for k in keyed]

    def less(a, b) -> bool:
        if a[1] != b[1] or a[3].gvk != b[3].gvk:
            if a[0] != b[0]:
                return a[0] < b[0]
            ga, gb = a[3].gvk, b[3].gvk
            if ga.kind == gb.kind == "Namespace" and (not ga.group or not gb.group):
                return a[1] > b[1]
            return a[1] < b[1]
        return a[2] < b[2]

    keyed.sort(key=functools.cmp_to_key(lambda a, b: -1 if less(a, b) else 1 if less(b, a) else 0))
    return [k[3] for k in keyed]
