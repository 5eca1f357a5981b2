"""What an earlier `kubectl apply` installed that the render no longer has: found, reported, never deleted.

A `kubectl apply` leaves no record of what it applied, and its objects do not carry our ownership
label, so they are not ours to prune. What they do carry is kubectl's field manager:
`kubectl` for `kubectl apply --server-side`, `kubectl-client-side-apply` for a client-side apply.
An object is a left-over of such an install when all of these hold:

1. a `kubectl apply` wrote it: its managedFields have a (non-subresource) entry by one of those
   managers;
2. an installer of this render could have made it: its group and kind are among the render's,
   and not a kind that is never pruned (namespaces, leases, events, the render's own jobs);
3. it belongs where the render puts things: a namespaced object in the install namespace; a
   cluster-scoped one of an API group the render's CRDs define (cluster-scoped custom kinds), or one
   that points into the install namespace (a ClusterRoleBinding with a subject there, a webhook
   configuration calling a Service there, a ClusterRole such a binding grants), or a CRD of a
   group the render's CRDs define;
4. it is not in the render, carries no ownership label of ours, and is not exempt
   (`trainerctl.io/managed: "false"`).

Each is reported with the `kubectl delete` line that would remove it; deleting is the user's call.
"""

from __future__ import annotations

from dataclasses import dataclass

from trainerctl.cluster.client.client import ApiError, Cluster, object_path
from trainerctl.cluster.client.discovery import Discovery, Resource
from trainerctl.cluster.client.views import RoleBinding, WebhookConfiguration, read_each
from trainerctl.cluster.manager.objects import Ref, is_exempt, parse_label
from trainerctl.cluster.client.pool import parallel_map

KUBECTL_MANAGERS = ("kubectl", "kubectl-client-side-apply")
CRD = ("apiextensions.k8s.io", "CustomResourceDefinition")
NOT_REPORTED = frozenset({("", "Namespace"), ("coordination.k8s.io", "Lease"), ("", "Event"),
                          ("events.k8s.io", "Event")})
_BINDINGS = ("rbac.authorization.k8s.io", "ClusterRoleBinding")
_ROLES = ("rbac.authorization.k8s.io", "ClusterRole")
_WEBHOOKS = {("admissionregistration.k8s.io", "ValidatingWebhookConfiguration"),
             ("admissionregistration.k8s.io", "MutatingWebhookConfiguration")}
_PARTIAL = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json"


def applied_by_kubectl(meta: dict | None) -> list[str]:
    """The kubectl managers that applied this object (rule 1)."""
    return sorted({e.get("manager") for e in (meta or {}).get("managedFields") or []
                   if e.get("manager") in KUBECTL_MANAGERS and not e.get("subresource")})


@dataclass
class Leftover:
    ref: Ref
    res: Resource
    managers: list[str]
    note: str = ""

    @property
    def delete_command(self) -> str:
        resource = f"{self.res.resource}.{self.res.group}" if self.res.group else self.res.resource
        ns = f" -n {self.ref.namespace}" if self.ref.namespace else ""
        return f"kubectl delete{ns} {resource} {self.ref.name}"

    @property
    def message(self) -> str:
        note = f"; {self.note}" if self.note else ""
        return (f"left over from a kubectl install ({', '.join(self.managers)}), not in the render and not "
                f"labelled as ours, so not pruned{note}; to remove it: {self.delete_command}")


def _list(cluster: Cluster, res: Resource, namespace: str | None, full: bool) -> list[dict]:
    path = object_path(res.group, res.version, res.resource, namespace if res.namespaced else None)
    items: list[dict] = []
    try:
        for page in cluster.pages(path, accept="application/json" if full else _PARTIAL):
            items.extend(page.get("items") or [])
    except ApiError as exc:
        if exc.status not in (403, 404, 405):
            raise
    return items  # 403, 404 or 405: may not list it, or it went away: nothing to report from here


def find(cluster: Cluster, discovery: Discovery, objects: list[dict], rendered: set[str], namespace: str,
         owner_label: str, never: frozenset = frozenset()) -> list[Leftover]:
    """Rules 1-4 above. `objects`: the render (bodies as applied, namespaces set); `rendered`: their
    Ref keys; `never`: (group, kind) the caller never prunes, left out too (users' objects of those
    kinds). "The install namespace" is every namespace the render puts objects in."""
    label_key, label_value = parse_label(owner_label)
    namespaces = sorted({namespace} | {Ref.from_key(k).namespace for k in rendered} - {""})
    crd_groups = {((o.get("spec") or {}).get("group") or "") for o in objects
                  if o.get("kind") == CRD[1] and o.get("apiVersion", "").startswith(CRD[0] + "/")}
    kinds: dict[tuple[str, str], Resource] = {}
    for obj in objects:
        group = obj.get("apiVersion", "").rpartition("/")[0]
        res = discovery.preferred(group, obj.get("kind", ""))
        if res is not None and res.served and (res.group, res.kind) not in NOT_REPORTED | never:
            kinds.setdefault((res.group, res.kind), res)
    # Full objects only where rule 3 reads the spec (few, small); metadata for the rest.
    full = {gk for gk in kinds if gk == _BINDINGS or gk in _WEBHOOKS}
    order = sorted(kinds)
    scans = [(gk, ns) for gk in order for ns in (namespaces if kinds[gk].namespaced else [None])]
    listed = parallel_map(lambda scan: _list(cluster, kinds[scan[0]], scan[1], scan[0] in full), scans)
    items: dict[tuple[str, str], list[dict]] = {}
    for (gk, _), found in zip(scans, listed):
        items.setdefault(gk, []).extend(found)

    # Rule 3 reads bindings and webhook configurations through their views: one that does not fit
    # says nothing of where it points, so it is left out (this is a report; nothing is deleted).
    bindings = {id(raw): b for raw in items.get(_BINDINGS, []) for b in read_each(RoleBinding.read, [raw], [])}
    hooks = {id(raw): w for gk in _WEBHOOKS for raw in items.get(gk, [])
             for w in read_each(lambda r, k=gk[1]: WebhookConfiguration.read(r, k), [raw], [])}
    granted = {b.role_name for b in bindings.values() if b.role_kind == "ClusterRole" and _binds_into(b, namespaces)}

    out: list[Leftover] = []
    for gk in order:
        res = kinds[gk]
        for item in items[gk]:
            meta = item.get("metadata") or {}
            ref = Ref(res.group, res.kind, meta.get("namespace", "") if res.namespaced else "", meta.get("name", ""))
            managers = applied_by_kubectl(meta)
            if not managers or ref.key in rendered or is_exempt(meta) \
                    or (meta.get("labels") or {}).get(label_key) == label_value:
                continue
            if res.namespaced:
                belongs = ref.namespace in namespaces
            elif gk == CRD:
                belongs = ref.name.partition(".")[2] in crd_groups
            elif gk == _BINDINGS:
                belongs = id(item) in bindings and _binds_into(bindings[id(item)], namespaces)
            elif gk == _ROLES:
                belongs = ref.name in granted
            elif gk in _WEBHOOKS:
                belongs = id(item) in hooks and any(h.service is not None and h.service.namespace in namespaces
                                                    for h in hooks[id(item)].webhooks)
            else:
                belongs = res.group in crd_groups
            if belongs:
                note = "deleting a CRD deletes every object of its kind" if gk == CRD else ""
                out.append(Leftover(ref, res, managers, note))
    return out


def _binds_into(binding: RoleBinding, namespaces: list[str]) -> bool:
    return any(s.namespace in namespaces for s in binding.subjects)


def any_applied_by_kubectl(metas) -> bool:
    """The sign worth a search: an object the render has was applied by kubectl."""
    return any(applied_by_kubectl(m) for m in metas)
