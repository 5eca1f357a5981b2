"""Name references: after renames (prefix, suffix, namespace, hash, patches that may rename),
point every reference at the referred object's current name. kustomize's FixBackReferences
(filters/nameref): a referral is found by a previous name, narrowed by namespace, by a
binding's roleRef kind, and by the prefixes and suffixes it went through with the referrer."""

from __future__ import annotations

from trainerctl.kustomize import fieldspecs
from trainerctl.kustomize.config import TransformerConfig
from trainerctl.kustomize.errors import KustomizeError
from trainerctl.kustomize.resid import NOT_A_NAMESPACE, Gvk
from trainerctl.kustomize.resource import Resource, annotation_text


def fix(resources: list[Resource], cfg: TransformerConfig) -> None:
    # Per referral kind: the renamed objects that kind selects (only a renamed object can be
    # referred to by an out-of-date name).
    pools = []
    for (group, version, kind), specs in cfg.name_reference:
        pool = [r for r in resources if r.previous
                and any(i.gvk.selected_by(group, version, kind) for i in r.prev_ids())]
        pools.append((Gvk(group, version, kind), specs, pool))
    for r in resources:
        if r.kind == "RoleBinding" and not r.gvk.cluster_scoped:
            _binding_namespaces(r)  # kustomize checks every binding's subjects
    # Every field a name reference may sit in is walked even when nothing was renamed: kustomize
    # walks them all (its resHasField is always true), and the walk refuses what is no place for
    # a name (a scalar where the path goes on, a map without `name`, a list in a list).
    for referrer in resources:
        org_gvk = referrer.orig_id().gvk
        gvk = referrer.gvk
        subset = None
        for target_gvk, specs, pool in pools:
            for spec in specs:
                if not org_gvk.selected_by(spec.group, spec.version, spec.kind):
                    continue
                if pool and subset is None:
                    subset = _could_be_referenced(referrer, resources)
                candidates = [c for c in pool if id(c) in subset] if pool else None
                ref = _Ref(referrer, spec, target_gvk, candidates, resources, subset)
                try:
                    fieldspecs.walk(referrer.obj, fieldspecs.FieldSpec(spec.path, gvk.group, gvk.version,
                                                                     gvk.kind, False),
                                    fieldspecs.SCALAR, ref.visit)
                except KustomizeError as exc:
                    raise KustomizeError(
                        f"{referrer.source}: updating name reference in '{spec.path_string}' "
                        f"field of {referrer.id}: {exc}"
                    ) from None


def _could_be_referenced(referrer: Resource, resources: list[Resource]) -> set[int]:
    """kustomize's SubsetThatCouldBeReferencedByResource (ids of the resources)."""
    rid = referrer.id
    if rid.gvk.cluster_scoped:
        return {id(r) for r in resources}
    binding_ns = _binding_namespaces(referrer)
    ns = rid.effective_namespace
    out = set()
    for r in resources:
        cid = r.id
        if cid.gvk.cluster_scoped or cid.effective_namespace == ns or r.namespace in binding_ns:
            out.add(id(r))
    return out


def _binding_namespaces(referrer: Resource) -> set[str]:
    """The namespaces a RoleBinding's ServiceAccount subjects name (refused when blank)."""
    out: set[str] = set()
    if referrer.kind != "RoleBinding" or not isinstance(referrer.obj.get("subjects"), list):
        return out
    for s in referrer.obj["subjects"]:
        if isinstance(s, dict) and "namespace" in s and "kind" in s and s["kind"] == "ServiceAccount":
            if not isinstance(s["namespace"], str):
                raise KustomizeError(f"{referrer.source}: Invalid Input: namespace is blank for "
                                     f"resource {referrer.id} (subjects[].namespace)")
            out.add(s["namespace"])
    return out


class _Ref:
    __slots__ = ("referrer", "spec", "target_gvk", "candidates", "resources", "subset")

    def __init__(self, referrer, spec, target_gvk, candidates, resources, subset):
        self.referrer = referrer
        self.spec = spec
        self.target_gvk = target_gvk
        self.candidates = candidates
        self.resources = resources
        self.subset = subset

    def visit(self, parent, key) -> None:
        value = parent.get(key) if isinstance(parent, dict) else parent[key]
        if value is None:
            return
        if isinstance(value, dict):
            self._mapping(value)
        elif isinstance(value, list):
            for i, item in enumerate(value):
                if item is None:
                    continue
                if isinstance(item, dict):
                    self._mapping(item)
                elif isinstance(item, list):
                    raise KustomizeError("expected a string or a map of string in a sequence")
                else:
                    self._scalar(value, i)
        else:
            self._scalar(parent, key)

    def _scalar(self, container, key) -> None:
        if self.candidates is None:  # nothing of the target's kind was renamed: only the walk's checks
            return
        old = _text(container[key])
        referral = self._select(old, self.candidates, same_names_only=True)
        if referral is not None and referral.name != old:
            container[key] = referral.name

    def _mapping(self, node: dict) -> None:
        if "name" not in node:
            raise KustomizeError("path config error; no 'name' field in node")
        if self.candidates is None:
            return
        old = _text(node["name"])
        candidates = self.candidates
        if "namespace" in node:
            candidates = self._in_namespace(_text(node["namespace"]))
        referral = self._select(old, candidates, same_names_only=False)
        if referral is None:
            return
        if referral.name == old and not referral.namespace:
            return
        node["name"] = referral.name
        if referral.namespace:
            node["namespace"] = referral.namespace

    def _in_namespace(self, namespace: str) -> list[Resource]:
        """Candidates grouped by original namespace, else by current one (kustomize's
        filterMapCandidatesByNamespace); cluster-scoped objects have no namespace."""
        pool = [c for c in self.resources if id(c) in self.subset]
        by_org = [c for c in pool if c.orig_id().effective_namespace == namespace
                  and namespace != NOT_A_NAMESPACE]
        chosen = by_org if by_org else [c for c in pool if c.id.effective_namespace == namespace
                                        and namespace != NOT_A_NAMESPACE]
        ids = {id(c) for c in self.candidates}
        return [c for c in chosen if id(c) in ids]

    def _select(self, old: str, candidates: list[Resource], same_names_only: bool):
        tg = self.target_gvk
        found = [c for c in candidates
                 if any(i.name == old for i in c.prev_ids())
                 and any(i.gvk.selected_by(tg.group, tg.version, tg.kind) for i in c.prev_ids())]
        found = self._role_ref(found)
        found = self._same_namespace(found)
        if len(found) == 1:
            return found[0]
        found = [c for c in found if _affixes_equal(c, self.referrer, allow_empty=True)]
        if len(found) > 1:
            found = [c for c in found if _affixes_equal(c, self.referrer, allow_empty=False)]
        if len(found) == 1:
            return found[0]
        if not found:
            return None
        first = found[0]
        if all(c.name == first.name and (same_names_only or c.namespace == first.namespace)
               for c in found[1:]):
            return first
        raise KustomizeError(
            f"found multiple possible referrals: {', '.join(str(c.id) for c in found)}"
        )

    def _role_ref(self, found: list[Resource]) -> list[Resource]:
        path = self.spec.path
        if len(path) < 2 or path[-2:] != ("roleRef", "name"):
            return found
        role_ref = self.referrer.obj.get("roleRef")
        if not isinstance(role_ref, dict) or role_ref.get("apiGroup") is None \
                or role_ref.get("kind") is None:
            return found
        group, kind = _text(role_ref["apiGroup"]), _text(role_ref["kind"])
        return [c for c in found if any(i.gvk.selected_by(group, "", kind) for i in c.prev_ids())]

    def _same_namespace(self, found: list[Resource]) -> list[Resource]:
        rid = self.referrer.id
        if rid.gvk.cluster_scoped:
            return found
        ns = rid.effective_namespace
        return [c for c in found if c.id.gvk.cluster_scoped or c.kind == "ServiceAccount"
                or c.id.effective_namespace == ns]


def _ends_with(longer: list[str], shorter: list[str]) -> bool:
    """kustomize's SameEndingSubSlice."""
    if len(longer) < len(shorter):
        longer, shorter = shorter, longer
    if not shorter:
        return not longer
    return longer[len(longer) - len(shorter):] == shorter


def _affixes_equal(a: Resource, b: Resource, allow_empty: bool) -> bool:
    if allow_empty:
        prefixes = not a.prefixes or not b.prefixes or _ends_with(a.prefixes, b.prefixes)
        suffixes = not a.suffixes or not b.suffixes or _ends_with(a.suffixes, b.suffixes)
        return prefixes and suffixes
    return _ends_with(a.prefixes, b.prefixes) and _ends_with(a.suffixes, b.suffixes)


def _text(value) -> str:
    return annotation_text(value) if not isinstance(value, (dict, list)) else ""
