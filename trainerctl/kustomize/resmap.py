"""The ordered set of resources a build carries (kustomize's ResMap): adding with the id check,
absorbing generated objects (merge / replace), finding by id."""

from __future__ import annotations

from trainerctl.kustomize import openapi
from trainerctl.kustomize.errors import KustomizeError
from trainerctl.kustomize.resid import ResId
from trainerctl.kustomize.resource import Resource


class ResMap:
    __slots__ = ("items",)

    def __init__(self, items: list[Resource] | None = None):
        self.items: list[Resource] = items if items is not None else []

    def __iter__(self):
        return iter(list(self.items))

    def __len__(self) -> int:
        return len(self.items)

    def append(self, r: Resource, where: str) -> None:
        openapi.saw((r,))
        rid = r.id
        key = rid.key()
        for existing in self.items:
            if existing.id.key() == key:
                raise KustomizeError(
                    f"{where}: may not add resource with an already registered id: {rid}"
                )
        self.items.append(r)

    def append_all(self, resources, where: str) -> None:
        openapi.saw(resources)
        if len(self.items) + len(resources) > 64:
            seen = {r.id.key() for r in self.items}
            for r in resources:
                key = r.id.key()
                if key in seen:
                    raise KustomizeError(
                        f"{where}: may not add resource with an already registered id: {r.id}"
                    )
                seen.add(key)
                self.items.append(r)
            return
        for r in resources:
            self.append(r, where)

    def matching_any_id(self, rid: ResId, exact_namespace: bool = True) -> list[Resource]:
        """Resources any of whose ids (previous or current) equals `rid` (kustomize's
        GetMatchingResourcesByAnyId with Equals, or GvknEquals without namespaces)."""
        out = []
        for r in self.items:
            if not r.obj:
                continue
            for candidate in r.all_ids():
                if candidate.equals(rid) if exact_namespace else candidate.gvkn_equals(rid):
                    out.append(r)
                    break
        return out

    def get_by_id(self, rid: ResId, where: str) -> Resource:
        matches = self.matching_any_id(rid)
        if len(matches) == 1:
            return matches[0]
        how = "multiple matches" if matches else "no matches"
        raise KustomizeError(f"{where}: {how} for Id {rid}; failed to find unique target for "
                             f"patch {rid}")

    def absorb(self, r: Resource, where: str) -> None:
        """A generated object: new, or merged into / replacing the one with its id."""
        openapi.saw((r,))
        rid = r.id
        matches = self.matching_any_id(rid)
        if not matches:
            if r.behavior in ("merge", "replace"):
                raise KustomizeError(f"{where}: id {rid} does not exist; cannot merge or replace")
            self.append(r, where)
            return
        if len(matches) > 1:
            raise KustomizeError(f"{where}: found multiple objects that could accept merge of {rid}")
        old = matches[0]
        if r.behavior == "replace":
            _copy_merge_metadata(r, old)
        elif r.behavior == "merge":
            origin = old.origin
            _copy_merge_metadata(r, old)
            for key in ("data", "binaryData"):
                # kustomize merges these as maps of strings: the old values as their text.
                merged = {**old.text_map(key), **(r.obj.get(key) or {})}
                if merged:
                    r.obj[key] = merged
                else:
                    r.obj.pop(key, None)
            if origin is not None:
                r.origin = origin
        else:
            raise KustomizeError(
                f"{where}: id {rid} exists; behavior must be merge or replace, "
                f"got {r.behavior or 'create'!r}"
            )
        self.items[self.items.index(old)] = r

    def drop_empties(self) -> None:
        self.items = [r for r in self.items if r.obj]


def _copy_merge_metadata(r: Resource, old: Resource) -> None:
    """kustomize's CopyMergeMetaDataFieldsFrom: labels and annotations merged (the new
    object's win), name and namespace and build state from the old one."""
    md = r.metadata
    labels = {**old.text_map("labels"), **r.labels()}
    annotations = {**old.annotations(), **r.annotations()}
    for key, value in (("labels", labels), ("annotations", annotations)):
        if value:
            md[key] = value
        else:
            md.pop(key, None)
    md["name"] = old.name
    if old.namespace:
        md["namespace"] = old.namespace
    else:
        md.pop("namespace", None)
    # The build annotations are the old object's, but a hash only if both asked for one.
    r.needs_hash = r.needs_hash and old.needs_hash
    r.copy_build_state(old)
