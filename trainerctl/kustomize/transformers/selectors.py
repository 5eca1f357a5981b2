"""Which resources a patch target, replacement or replica count selects."""

from __future__ import annotations

import re

from trainerctl.kustomize.errors import KustomizeError
from trainerctl.kustomize.resource import Resource, annotation_text

TYPE_CHECKING = False  # typing costs a tenth of a kustomize run's start-up
if TYPE_CHECKING:
    from typing import Iterable

SELECTOR_FIELDS = {"group", "version", "kind", "name", "namespace", "labelSelector",
                   "annotationSelector"}


def label_selector(expr: str, where: str):
    """A Kubernetes label selector string as a predicate on a label map."""
    reqs = []
    for part in re.split(r",(?![^()]*\))", expr):
        part = part.strip()
        if not part:
            continue
        m = re.fullmatch(r"([\w./-]+)\s+(in|notin)\s+\(([^)]*)\)", part)
        if m:
            values = {v.strip() for v in m[3].split(",") if v.strip()}
            key, op = m[1], m[2]
            if op == "in":
                reqs.append(lambda l, k=key, vs=values: l.get(k) in vs)
            else:
                reqs.append(lambda l, k=key, vs=values: l.get(k) not in vs)
            continue
        m = re.fullmatch(r"([\w./-]+)\s*(==|=|!=)\s*([\w./-]*)", part)
        if m:
            key, op, value = m[1], m[2], m[3]
            if op == "!=":
                reqs.append(lambda l, k=key, v=value: l.get(k) != v)
            else:
                reqs.append(lambda l, k=key, v=value: k in l and l[k] == v)
            continue
        m = re.fullmatch(r"(!?)([\w./-]+)", part)
        if m:
            neg, key = m[1] == "!", m[2]
            reqs.append(lambda l, k=key, n=neg: (k in l) != n)
            continue
        raise KustomizeError(f"{where}: cannot parse selector {expr!r}")
    return lambda labels: all(r(labels) for r in reqs)


class _Literal:
    """An anchored pattern without regular-expression syntax: equality, with no compile (most
    selectors name a kind or a name outright)."""

    __slots__ = ("text",)

    def __init__(self, text: str):
        self.text = text

    def match(self, value: str) -> bool:
        return value == self.text


_PLAIN = re.compile(r"[\w/-]*\Z", re.ASCII)


def anchored(pattern: str, where: str):
    """`pattern` as kustomize's selectors read it: a regular expression matching whole values."""
    if _PLAIN.match(pattern):
        return _Literal(pattern)
    try:
        return re.compile(f"^(?:{pattern})\\Z")
    except re.error as exc:
        raise KustomizeError(f"{where}: invalid regular expression {pattern!r}: {exc}") from None


def select(resources: Iterable[Resource], sel: dict, where: str) -> list[Resource]:
    """kustomize's ResMap.Select: group, version, kind, name and namespace are anchored regular
    expressions; name and namespace may match the original or the current id."""
    if not isinstance(sel, dict):
        raise KustomizeError(f"{where}: target must be a mapping")
    unknown = set(sel) - SELECTOR_FIELDS
    if unknown:
        raise KustomizeError(f"{where}: unknown target field(s) {', '.join(sorted(unknown))}")
    res = {k: anchored(sel[k], where) for k in ("group", "version", "kind", "name", "namespace")
           if sel.get(k)}
    name_re, ns_re = res.get("name"), res.get("namespace")
    labels = label_selector(sel["labelSelector"], where) if sel.get("labelSelector") else None
    annos = (label_selector(sel["annotationSelector"], where)
             if sel.get("annotationSelector") else None)
    out = []
    for r in resources:
        org, cur = r.orig_id(), r.id
        if ns_re and not (ns_re.match(org.effective_namespace) or ns_re.match(cur.effective_namespace)):
            continue
        if name_re and not (name_re.match(org.name) or name_re.match(cur.name)):
            continue
        gvk = cur.gvk
        if any(k in res and not res[k].match(getattr(gvk, k)) for k in ("group", "version", "kind")):
            continue
        if labels and not labels(text_values(r.labels())):
            continue
        if annos and not annos(text_values(r.annotations())):
            continue
        out.append(r)
    return out


def text_values(values: dict) -> dict:
    return {k: annotation_text(v) for k, v in values.items()}
