"""A resource under construction: the object plus the build state kustomize keeps beside it."""

from __future__ import annotations

from dataclasses import dataclass, field

from trainerctl.kustomize.resid import Gvk, ResId


@dataclass
class Resource:
    obj: dict
    source: str  # file (or generator) it came from, for error messages
    # (name, namespace, kind) before each rename, oldest first: name references written against
    # an earlier name still find this object (kustomize's previousNames build annotations).
    previous: list[tuple[str, str, str]] = field(default_factory=list)
    needs_hash: bool = False
    behavior: str = ""  # generators: create | merge | replace
    # (prefix, suffix) pairs applied, innermost first: a reference prefers the referral that
    # went through the same kustomizations as the referrer.
    affixes: list[tuple[str, str]] = field(default_factory=list)

    @property
    def gvk(self) -> Gvk:
        return Gvk.of(self.obj)

    @property
    def kind(self) -> str:
        return self.obj.get("kind") or ""

    @property
    def metadata(self) -> dict:
        md = self.obj.get("metadata")
        if not isinstance(md, dict):
            md = {}
            self.obj["metadata"] = md
        return md

    @property
    def name(self) -> str:
        md = self.obj.get("metadata")
        return (md.get("name") or "") if isinstance(md, dict) else ""

    @property
    def namespace(self) -> str:
        md = self.obj.get("metadata")
        return (md.get("namespace") or "") if isinstance(md, dict) else ""

    @property
    def id(self) -> ResId:
        return ResId(self.gvk, self.name, self.namespace)

    def orig_id(self) -> ResId:
        """The id this object had when first read or generated."""
        if self.previous:
            name, ns, kind = self.previous[0]
            gvk = self.gvk
            return ResId(Gvk(gvk.group, gvk.version, kind), name, ns)
        return self.id

    def store_previous(self) -> None:
        """Remember the current id before a transformer may change it."""
        entry = (self.name, self.namespace, self.kind)
        if not self.previous or self.previous[-1] != entry:
            self.previous.append(entry)

    def all_names(self) -> list[tuple[str, str]]:
        """(name, namespace) pairs this object was known by, including the current one."""
        return [(n, ns) for n, ns, _ in self.previous] + [(self.name, self.namespace)]

    def labels(self) -> dict:
        labels = self.metadata.get("labels")
        return labels if isinstance(labels, dict) else {}

    def annotations(self) -> dict:
        ann = self.metadata.get("annotations")
        return ann if isinstance(ann, dict) else {}
