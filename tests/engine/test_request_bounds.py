"""Requests per command are bounded by what the user asked, never by the length of a list the
server sends (docs/trust.md): a list that never ends (a new continue token every page, or the
same one again), discovery listing a thousand group versions, a CRD whose storedVersions lists
20,000 versions. Each against tests/support/hostile_api.py, through the real client."""

from __future__ import annotations

import pytest

from tests.support.hostile_api import HostileServer
from trainerctl.cluster.client import client
from trainerctl.cluster.client.client import BadResponse, connect
from trainerctl.cluster.client.discovery import MAX_GROUP_VERSIONS, Discovery, Resource
from trainerctl.cluster.manager.listing import list_meta
from trainerctl.cluster.trainer.stored_versions import dropped, refuse_dropped
from trainerctl.errors import PreflightError

CONFIGMAPS = Resource("", "v1", "ConfigMap", "configmaps", True, ("list",))


def _cluster(server: HostileServer, tmp_path):
    return connect(str(server.kubeconfig(tmp_path / "kubeconfig")))


def test_a_list_that_never_ends_is_read_to_the_bound(tmp_path, monkeypatch):
    monkeypatch.setattr(client, "MAX_LIST_PAGES", 20)
    with HostileServer("endless-list") as server:
        with pytest.raises(BadResponse, match=r"the list of .* did not end within 20 pages of 500; trainerctl reads "
                                              "no more of it"):
            list_meta(_cluster(server, tmp_path), CONFIGMAPS, "ns", "a=b")
        assert len([r for r in server.requests if "/configmaps" in r.path]) == 20


def test_a_continue_token_given_twice_ends_the_list(tmp_path):
    with HostileServer("same-continue") as server:
        with pytest.raises(BadResponse, match="gave the same continue token twice: the list would never end"):
            list_meta(_cluster(server, tmp_path), CONFIGMAPS, "ns", "a=b")
        assert len([r for r in server.requests if "/configmaps" in r.path]) == 2


def test_discovery_reads_at_most_its_bound_of_group_versions(tmp_path):
    with HostileServer("many-groups") as server:
        with pytest.raises(BadResponse, match=f"lists 1001 API group versions, each a request to read; trainerctl "
                                              f"reads at most {MAX_GROUP_VERSIONS}"):
            Discovery(_cluster(server, tmp_path)).refresh()
        assert not [r for r in server.requests if r.path.startswith("/apis/")]  # not one group version read


def test_the_stored_version_guard_costs_two_requests_per_crd_whatever_the_server_lists(tmp_path):
    """The sample: one list request per storedVersions entry (300 took 17 s, 20,000 hung)."""
    target = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
              "metadata": {"name": "widgets.example.com"},
              "spec": {"group": "example.com", "versions": [{"name": "v1", "served": True, "storage": True}]}}
    with HostileServer("stored-versions") as server:
        cluster = _cluster(server, tmp_path)
        found = dropped(cluster, [target, target])  # the same CRD twice: read once
        assert len(found) == 19999 and {d.objects for d in found} == {42}
        assert len(server.requests) == 2
        with pytest.raises(PreflightError) as refused:
            refuse_dropped(cluster, [target], what="revision 1")
    line = str(refused.value)
    assert line.startswith("rollback refused: CRD widgets.example.com version v2 has 42 object(s) that may be stored "
                           "at it (status.storedVersions: v1, v2, v3, v4, v5, v6, v7, v8, … (20000 in all)), and "
                           "revision 1 does not serve v2 (and 19998 more);"), line
    assert len(line) < 600
