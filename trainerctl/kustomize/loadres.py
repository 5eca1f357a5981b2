"""Objects from YAML text, as kustomize's resource factory reads them: empty documents dropped,
every object needs a kind and (unless it is a list) a metadata.name, and a `*List` with `items`
is replaced by its items."""

from __future__ import annotations

from trainerctl.kustomize.cachedread import SmallParses, load_resources
from trainerctl.kustomize.errors import KustomizeError
from trainerctl.kustomize.resource import Resource
from trainerctl.parsed_cache import ParsedCache


def _brief(obj) -> str:
    text = repr(obj)
    return text if len(text) < 80 else text[:77] + "..."


def _validated(obj, source: str) -> dict:
    if not isinstance(obj, dict):
        raise KustomizeError(f"{source}: expected a Kubernetes object, got {_brief(obj)}")
    kind = obj.get("kind")
    if not kind or not isinstance(kind, str):
        raise KustomizeError(f"{source}: missing `kind` in object {_brief(obj)}")
    if kind.endswith("List"):
        return obj
    md = obj.get("metadata")
    if not isinstance(md, dict) or not md.get("name"):
        raise KustomizeError(f"{source}: missing metadata.name in object {_brief(obj)}")
    return obj


def objects_of(doc, source: str) -> list[dict]:
    """One document's objects: itself, or a list's items (recursively)."""
    pending, out = [_validated(doc, source)], []
    while pending:
        obj = pending.pop(0)
        kind = obj.get("kind")
        if not kind.endswith("List") or "items" not in obj:
            out.append(obj)
            continue
        items = obj["items"]
        if items is None:
            continue
        if not isinstance(items, list):
            raise KustomizeError(f"{source}: expected array in {kind}/items")
        pending.extend(_validated(i, source) for i in items if i is not None)
    return out


def resources_from(text: str, source: str, cache: ParsedCache | None = None,
                   small: SmallParses | None = None) -> list[Resource]:
    """The resources of a file's text; `cache` (`small`, for a small file) keeps its parse for
    the next build."""
    out = []
    for doc, marked, texts in load_resources(text, source, cache, small):
        objects = objects_of(doc, source)
        texts = texts if len(objects) == 1 and objects[0] is doc else None  # not a List's items
        out.extend(Resource(o, source, marked=marked, texts=texts) for o in objects)
    return out
