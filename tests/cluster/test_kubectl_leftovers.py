"""What an earlier `kubectl apply` made that the render no longer has: the rule that finds it
(trainerctl/cluster/operations/leftovers.py), on the real API server, one case per clause, and the
`kubectl delete` line reported for it."""

from __future__ import annotations

import pytest

from tests.support.cluster import apply_raw
from trainerctl.cluster.operations import leftovers
from trainerctl.cluster.client.client import connect
from trainerctl.cluster.client.discovery import Discovery
from trainerctl.cluster.manager.objects import Ref, ref_of
from trainerctl.owner_label import DEFAULT_OWNER_LABEL

OWNER = DEFAULT_OWNER_LABEL.selector


def _cm(name: str, ns: str, **labels: str) -> dict:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": ns, "labels": labels},
            "data": {"k": "v"}}


def _crb(name: str, ns: str, role: str) -> dict:
    return {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding", "metadata": {"name": name},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
            "subjects": [{"kind": "ServiceAccount", "name": "sa", "namespace": ns}]}


def _cr(name: str) -> dict:
    return {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": name}, "rules": []}


def _vwc(name: str, ns: str) -> dict:
    return {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingWebhookConfiguration",
            "metadata": {"name": name}, "webhooks": [{
                "name": f"{name}.example.com", "admissionReviewVersions": ["v1"], "sideEffects": "None",
                "failurePolicy": "Ignore", "rules": [{"apiGroups": ["example.com"], "apiVersions": ["v1"],
                                                     "operations": ["CREATE"], "resources": ["nothings"]}],
                "clientConfig": {"service": {"name": "svc", "namespace": ns, "port": 443}}}]}


def _crd(plural: str, group: str) -> dict:
    kind = plural.capitalize().rstrip("s")
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": f"{plural}.{group}"},
            "spec": {"group": group, "scope": "Namespaced",
                     "names": {"plural": plural, "singular": kind.lower(), "kind": kind, "listKind": f"{kind}List"},
                     "versions": [{"name": "v1", "served": True, "storage": True,
                                   "schema": {"openAPIV3Schema": {"type": "object"}}}]}}


@pytest.mark.cluster
def test_only_what_kubectl_applied_here_and_the_render_dropped_is_reported(test_cluster, namespace):
    cluster = connect(str(test_cluster.admin_kubeconfig))
    ns, other = namespace, f"{namespace}-x"
    cluster.request("POST", "/api/v1/namespaces", body={"apiVersion": "v1", "kind": "Namespace",
                                                        "metadata": {"name": other}})
    group = f"{ns}.example.com"
    render = [_cm("rendered", ns), _crb(f"{ns}-rendered", ns, f"{ns}-rendered"), _cr(f"{ns}-rendered"),
              _vwc(f"{ns}-rendered", ns), _crd("widgets", group)]
    reported = [_cm("old", ns), _crb(f"{ns}-old", ns, f"{ns}-old-role"), _cr(f"{ns}-old-role"),
                _vwc(f"{ns}-old", ns), _crd("gadgets", group)]
    for obj in render + reported:
        apply_raw(cluster, obj, "kubectl")
    # Not reported: elsewhere, ours, applied by another kubectl command or tool, unrelated.
    apply_raw(cluster, _cm("elsewhere", other), "kubectl")
    apply_raw(cluster, _cm("ours", ns, **{DEFAULT_OWNER_LABEL.key: DEFAULT_OWNER_LABEL.value}), "kubectl")
    apply_raw(cluster, _cm("edited", ns), "kubectl-edit")
    apply_raw(cluster, _cm("by-helm", ns), "helm")
    apply_raw(cluster, _cr(f"{ns}-unrelated"), "kubectl")
    apply_raw(cluster, _vwc(f"{ns}-calls-elsewhere", other), "kubectl")
    apply_raw(cluster, _crd("things", f"{ns}-other.example.com"), "kubectl")
    cluster.request("POST", f"/api/v1/namespaces/{ns}/configmaps", body=_cm("client-side", ns),
                    query={"fieldManager": "kubectl-client-side-apply"})

    discovery = Discovery(cluster)
    discovery.refresh()
    keys = {ref_of(o).key for o in render}
    found = leftovers.find(cluster, discovery, render, keys, ns, OWNER)
    got = {(f.ref.kind, f.ref.name): f for f in found}
    expected = {(o["kind"], o["metadata"]["name"]) for o in reported} | {("ConfigMap", "client-side")}
    assert set(got) == expected, sorted(got)
    assert got[("ConfigMap", "client-side")].managers == ["kubectl-client-side-apply"]
    assert got[("ConfigMap", "old")].delete_command == f"kubectl delete -n {ns} configmaps old"
    assert got[("ClusterRole", f"{ns}-old-role")].delete_command == \
        f"kubectl delete clusterroles.rbac.authorization.k8s.io {ns}-old-role"
    crd = got[("CustomResourceDefinition", f"gadgets.{group}")]
    assert "deletes every object of its kind" in crd.message
    assert crd.message.endswith(f"to remove it: kubectl delete customresourcedefinitions.apiextensions.k8s.io "
                                f"gadgets.{group}")
    # The sign that makes install look at all: an object it renders was applied by kubectl.
    live = cluster.request("GET", f"/api/v1/namespaces/{ns}/configmaps/rendered")["metadata"]
    assert leftovers.any_applied_by_kubectl([live, None])
    assert not leftovers.any_applied_by_kubectl([cluster.request("GET", f"/api/v1/namespaces/{ns}/configmaps/by-helm")["metadata"]])
    assert Ref("", "ConfigMap", ns, "old") == got[("ConfigMap", "old")].ref
