"""Issue 18, precheck: the API server says what the current user may do before anything is applied.

On the base test cluster, whose restricted user has no RBAC grant at all.
"""

from __future__ import annotations

import pytest

from trainerctl.cluster.engine.client import connect
from trainerctl.cluster.engine import access
from trainerctl.cluster.engine.access import Need, Permission

NEEDS = [Need(Permission("patch", "apiextensions.k8s.io", "customresourcedefinitions"), "CRD a"),
         Need(Permission("patch", "apiextensions.k8s.io", "customresourcedefinitions"), "CRD b"),
         Need(Permission("get", "", "configmaps", "default"), "the inventory")]


def test_the_admin_lacks_nothing(test_cluster):
    assert access.missing(connect(str(test_cluster.admin_kubeconfig)), NEEDS) == []


def test_the_restricted_user_lacks_each_permission_once_in_order(test_cluster):
    cluster = connect(str(test_cluster.restricted_kubeconfig))
    lacking = access.missing(cluster, NEEDS)
    assert [n.why for n in lacking] == ["CRD a", "the inventory"]
    with pytest.raises(access.AccessDenied) as denied:
        access.check(cluster, NEEDS)
    assert str(denied.value) == (
        "user testenv-restricted may not patch customresourcedefinitions.apiextensions.k8s.io (cluster-scoped), "
        "which this install needs for CRD a; 1 more permission(s) missing (nothing was applied; "
        "`trainerctl check` lists them all)")
    assert denied.value.exit_code == 3
