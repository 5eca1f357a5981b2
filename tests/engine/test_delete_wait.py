"""Deleting an object whose finalizer we strip: a controller that puts the finalizer back between
our removal and the DELETE must not hold the delete until the deadline (the rollback e2e's
uninstall once timed out on a runtime the v2.2.0 controller re-marked as in use)."""

from __future__ import annotations

import time

import pytest

from trainerctl.cluster.client.client import connect
from trainerctl.cluster.manager.delete import Proof, Target, delete_and_wait

LEGACY = "example.com/legacy"
OTHER = "example.com/other-legacy"


class Remarking:
    """The cluster as the client sees it, with a controller that marks the object again (adds
    the finalizers back) right after each of our finalizer removals, as long as it still may:
    until the object is being deleted, when the API server refuses new finalizers."""

    def __init__(self, cluster, path: str, finalizers: list[str]):
        self._cluster, self._path, self._finalizers = cluster, path, finalizers
        self.remarked = 0

    def request(self, method: str, path: str, **kwargs):
        out = self._cluster.request(method, path, **kwargs)
        if method == "PATCH" and path == self._path and kwargs.get("content_type") == "application/json-patch+json":
            live = self._cluster.request("GET", path)
            if not live["metadata"].get("deletionTimestamp"):
                live["metadata"]["finalizers"] = sorted(set(live["metadata"].get("finalizers") or [])
                                                        | set(self._finalizers))
                self._cluster.request("PUT", path, body=live)
                self.remarked += 1
        return out

    def __getattr__(self, name):
        return getattr(self._cluster, name)


@pytest.mark.cluster
@pytest.mark.parametrize("strip", [(LEGACY,), (LEGACY, OTHER)])
def test_a_finalizer_put_back_before_the_delete_is_stripped_while_waiting(test_cluster, namespace, strip):
    cluster = connect(str(test_cluster.admin_kubeconfig))
    path = f"/api/v1/namespaces/{namespace}/configmaps/held"
    cluster.request("POST", f"/api/v1/namespaces/{namespace}/configmaps",
                    body={"apiVersion": "v1", "kind": "ConfigMap",
                          "metadata": {"name": "held", "namespace": namespace, "finalizers": list(strip),
                                       "labels": {"example.com/owner": "test"}}})
    remarking = Remarking(cluster, path, list(strip))
    target = Target("", "v1", "configmaps", True, namespace, "held", "ConfigMap")
    proof = Proof("the test", label="example.com/owner", value="test")
    assert delete_and_wait(remarking, target, proof, time.monotonic() + 60, strip_finalizers=strip).deleted is True
    assert remarking.remarked >= 1  # the race happened: the finalizer came back before the DELETE
    assert cluster.get_or_none(path) is None
