"""Guards are not preflight: `--skip-preflight` leaves out the advisory checks, while the upgrade
guard of `install` and the stored-version guard of `rollback` still refuse a CRD change that would
leave stored objects unreadable; only `--allow-breaking` lets it through. Both commands, both
flags, on a real API server: a CRD whose storedVersions hold v2, and a target that stops serving it."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from tests.support.actions import install
from tests.support.cluster import versioned_crd, wait_served
from trainerctl.cluster import rollback
from trainerctl.cluster.client.client import connect
from trainerctl.cluster.install import InstallOptions
from trainerctl.errors import EXIT_PREFLIGHT, TrainerctlError
from trainerctl.upgrade import guard

pytestmark = pytest.mark.cluster

CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"


def _crd(group: str, *versions: tuple[str, bool, bool]) -> dict:
    return versioned_crd(group, "Gadget", *versions)


@pytest.fixture
def stored_at_v2(test_cluster, namespace):
    """(cluster, group, the target CRD): the live CRD stores objects at v2; the target keeps v2 in
    its versions (so the API server would take it) but no longer serves it."""
    api = connect(str(test_cluster.admin_kubeconfig))
    group = f"{namespace}.guards.example.com"
    live = _crd(group, ("v1", True, False), ("v2", True, True))
    api.request("POST", CRDS, body=live, query={"fieldManager": "test-setup"})
    wait_served(api, live)
    api.request("POST", f"/apis/{group}/v2/namespaces/{namespace}/gadgets",
                body={"apiVersion": f"{group}/v2", "kind": "Gadget", "metadata": {"name": "stored"}})
    return api, group, _crd(group, ("v1", True, True), ("v2", False, False))


def _guard(command: str, allow_breaking: bool):
    if command == "install":
        return guard
    return rollback.guard(guard, SimpleNamespace(what="revision 1"), allow_breaking)


@pytest.mark.parametrize("command", ["install", "rollback"])
def test_skip_preflight_does_not_skip_the_guards(stored_at_v2, namespace, command):
    api, group, target = stored_at_v2
    options = InstallOptions(skip_preflight=True, wait=False, upgrade_guard=_guard(command, False))
    with pytest.raises(TrainerctlError) as refused:
        install([target], cluster=api, namespace=namespace, options=options)
    assert refused.value.exit_code == EXIT_PREFLIGHT, str(refused.value)
    said = str(refused.value)
    if command == "rollback":
        assert said.startswith(f"rollback refused: CRD gadgets.{group} version v2 has 1 object(s)"), said
    else:
        assert said.startswith("upgrade blocked by") and "--allow-breaking" in said, said
    live = api.request("GET", f"{CRDS}/gadgets.{group}")
    assert [v["served"] for v in live["spec"]["versions"]] == [True, True]  # nothing written


@pytest.mark.parametrize("command", ["install", "rollback"])
def test_allow_breaking_lets_the_change_through(stored_at_v2, namespace, command):
    api, group, target = stored_at_v2
    options = InstallOptions(skip_preflight=True, allow_breaking=True, wait=False, force_conflicts=True,
                             upgrade_guard=_guard(command, True))
    report = install([target], cluster=api, namespace=namespace, options=options)
    assert not report.failed, report.text()
    live = api.request("GET", f"{CRDS}/gadgets.{group}")
    assert [v["served"] for v in live["spec"]["versions"]] == [True, False]
