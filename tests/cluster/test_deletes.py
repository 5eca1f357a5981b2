"""The one delete on the real API server: ownership is proved on the object as it is just before
its DELETE, and the DELETE's preconditions (uid and resourceVersion), which the API server
enforces, pin that very object. Its users each pass their own proof: verify owns only what it
named and labelled with a run id it makes (a killed run's leftovers included), the lock only a
Lease this run holds, history trimming only its records, prune only what its inventory names
under Kubernetes' name rules. tests/engine/test_one_delete.py puts a lying server in front."""

from __future__ import annotations

import time

import pytest

from tests.support.waiting import wait_until
from trainerctl.cluster.client.client import connect, object_path
from trainerctl.cluster.manager.prune import PruneRules
from trainerctl.cluster.manager.delete import ATTEMPTS, REFUSED, Proof, Target, delete, delete_and_wait
from trainerctl.cluster.manager.inventory_configmap import Entry
from trainerctl.cluster.operations import install_history
from trainerctl.cluster.operations import install_lock, lock_holder, lock_lease
from trainerctl.cluster.trainer.policy import STAGES
from trainerctl.cluster.trainer.verify import owned
from tests.support.actions import session

pytestmark = pytest.mark.cluster

MINE = ("example.com/owner", "me")


@pytest.fixture
def api(test_cluster):
    return connect(str(test_cluster.admin_kubeconfig))


def _configmap(api, namespace: str, name: str, labels: dict | None = None) -> dict:
    return api.request("POST", object_path("", "v1", "configmaps", namespace), body={
        "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "labels": labels or {}}})


class Meddling:
    """The cluster as the client sees it, with someone else writing to `path` right after each of
    our reads of it, `times` times (between our proof and our DELETE)."""

    def __init__(self, cluster, path: str, meddle, times: int = 1):
        self._cluster, self._path, self._meddle, self._left = cluster, path, meddle, times
        self.deletes: list[dict] = []

    def request(self, method: str, path: str, **kwargs):
        if method == "DELETE":
            self.deletes.append(kwargs.get("body"))
        out = self._cluster.request(method, path, **kwargs)
        if method == "GET" and path == self._path and self._left:
            self._left -= 1
            self._meddle()
        return out

    def __getattr__(self, name):
        return getattr(self._cluster, name)


def _relabel(api, path: str, value: str):
    return lambda: api.request("PATCH", path, body={"metadata": {"labels": {MINE[0]: value}}},
                               content_type="application/merge-patch+json")


def test_an_object_that_changes_after_its_proof_is_proved_again_and_kept_if_it_is_not_ours_now(api, namespace):
    proof = Proof("me", label=MINE[0], value=MINE[1])
    # Relabelled by someone else in between: the API server refuses the guarded DELETE (409), the
    # fresh read no longer proves it ours, and it stays.
    path = object_path("", "v1", "configmaps", namespace, "taken")
    _configmap(api, namespace, "taken", dict([MINE]))
    meddling = Meddling(api, path, _relabel(api, path, "someone-else"))
    outcome = delete(meddling, Target("", "v1", "configmaps", True, namespace, "taken", "ConfigMap"), proof)
    assert outcome.done == REFUSED and "'someone-else'" in outcome.why
    assert len(meddling.deletes) == 1 and api.get_or_none(path) is not None

    # Changed, but still ours: proved again on the fresh read, deleted.
    path = object_path("", "v1", "configmaps", namespace, "edited")
    _configmap(api, namespace, "edited", dict([MINE]))
    meddling = Meddling(api, path, lambda: api.request("PATCH", path, body={"data": {"k": "v"}},
                                                       content_type="application/merge-patch+json"))
    assert delete(meddling, Target("", "v1", "configmaps", True, namespace, "edited", "ConfigMap"), proof).deleted
    assert len(meddling.deletes) == 2 and api.get_or_none(path) is None
    first, second = meddling.deletes
    assert first["preconditions"]["uid"] == second["preconditions"]["uid"]
    assert first["preconditions"]["resourceVersion"] != second["preconditions"]["resourceVersion"]

    # Deleted and made again by someone else under the same name: another uid, not ours.
    path = object_path("", "v1", "configmaps", namespace, "replaced")
    _configmap(api, namespace, "replaced", dict([MINE]))

    def replace():
        api.request("DELETE", path)
        _configmap(api, namespace, "replaced", {"team": "b"})

    meddling = Meddling(api, path, replace)
    outcome = delete(meddling, Target("", "v1", "configmaps", True, namespace, "replaced", "ConfigMap"), proof)
    assert outcome.done == REFUSED and api.get_or_none(path)["metadata"]["labels"] == {"team": "b"}

    # Changing under every try: given up after a few, never deleted blind.
    path = object_path("", "v1", "configmaps", namespace, "busy")
    _configmap(api, namespace, "busy", dict([MINE]))
    count = iter(range(100))
    meddling = Meddling(api, path, lambda: api.request(
        "PATCH", path, body={"data": {"n": str(next(count))}}, content_type="application/merge-patch+json"), times=100)
    outcome = delete(meddling, Target("", "v1", "configmaps", True, namespace, "busy", "ConfigMap"), proof)
    assert outcome.done == REFUSED and "changed" in outcome.why
    assert len(meddling.deletes) == ATTEMPTS and api.get_or_none(path) is not None


def test_a_dry_run_delete_deletes_nothing(api, namespace):
    path = object_path("", "v1", "configmaps", namespace, "kept")
    _configmap(api, namespace, "kept", dict([MINE]))
    target = Target("", "v1", "configmaps", True, namespace, "kept", "ConfigMap")
    assert delete(api, target, Proof("me", label=MINE[0], value=MINE[1]), dry_run=True).deleted
    assert delete_and_wait(api, target, Proof("me", label=MINE[0], value=MINE[1]), time.monotonic() + 30,
                           dry_run=True).deleted
    assert api.get_or_none(path) is not None


def _trainjob_crd(api) -> None:
    api.request("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", body={
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "trainjobs.trainer.kubeflow.org"},
        "spec": {"group": "trainer.kubeflow.org", "scope": "Namespaced",
                 "names": {"plural": "trainjobs", "singular": "trainjob", "kind": "TrainJob",
                           "listKind": "TrainJobList"},
                 "versions": [{"name": "v1alpha1", "served": True, "storage": True, "schema": {"openAPIV3Schema": {
                     "type": "object", "x-kubernetes-preserve-unknown-fields": True}}}]}})
    wait_until(lambda: api.get_or_none(owned.trainjobs_path(None)) is not None, 60, "TrainJobs served")


def test_verify_sweeps_what_a_killed_run_left_and_nothing_else_carrying_its_label(env):
    api = env.cluster
    _trainjob_crd(api)
    run = "0a1b2c3d"
    namespaces = {  # name -> label value
        f"trainerctl-verify-ns-{run}": run,  # a killed run's: swept
        "team-prod": "prod",  # someone's namespace that carries the label key: left
        "trainerctl-verify-ns-11111111": "22222222",  # the name's run id is not the label's: left
        f"prod-trainerctl-verify-ns-{run}": run,  # not verify's prefix: left
        "trainerctl-verify-ns-prod": "prod",  # not a run id verify makes: left
    }
    for name, value in namespaces.items():
        api.request("POST", "/api/v1/namespaces", body={"apiVersion": "v1", "kind": "Namespace",
                                                        "metadata": {"name": name, "labels": {owned.LABEL: value}}})
    api.request("POST", "/apis/apps/v1/namespaces/team-prod/deployments", body={
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
        "spec": {"selector": {"matchLabels": {"a": "b"}}, "template": {
            "metadata": {"labels": {"a": "b"}}, "spec": {"containers": [{"name": "c", "image": "busybox"}]}}}})
    jobs = {  # name in team-prod -> label value
        f"trainerctl-verify-reconcile-{run}": run,  # a killed run's: swept
        "users-job": run,  # a user's job with verify's label: left
        "trainerctl-verify-reconcile-deadbeef": "prod",  # left
    }
    for name, value in jobs.items():
        api.request("POST", owned.trainjobs_path("team-prod"), body={
            "apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob",
            "metadata": {"name": name, "labels": {owned.LABEL: value}}, "spec": {}})

    lines = owned.sweep(api, None)
    earlier = "(left by an earlier verify)"
    assert sorted(lines) == [f"deleted Namespace trainerctl-verify-ns-{run} {earlier}",
                             f"deleted TrainJob team-prod/trainerctl-verify-reconcile-{run} {earlier}"]
    for name in namespaces:
        deleting = bool(api.request("GET", f"/api/v1/namespaces/{name}")["metadata"].get("deletionTimestamp"))
        assert deleting == (name == f"trainerctl-verify-ns-{run}"), name
    assert api.get_or_none("/apis/apps/v1/namespaces/team-prod/deployments/web") is not None
    assert {j["metadata"]["name"] for j in api.request("GET", owned.trainjobs_path("team-prod"))["items"]} == \
        {"users-job", "trainerctl-verify-reconcile-deadbeef"}

    # A run's own cleanup deletes what it made, each guarded by what its create answered.
    mine = owned.Owned(api)
    made = mine.create_namespace()
    mine.create_trainjob({"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob", "metadata": {
        "name": mine.name("reconcile"), "namespace": "team-prod", "labels": mine.labels}, "spec": {}})
    assert sorted(mine.cleanup(wait=False)) == [f"deleted Namespace {made}",
                                                f"deleted TrainJob team-prod/{mine.name('reconcile')}"]
    assert api.get_or_none(owned.trainjobs_path("team-prod", mine.name("reconcile"))) is None


def _lock(api, namespace: str, command: str) -> install_lock.Lock:
    return install_lock.Lock(api, namespace, lock_holder.Holder("u", "h", 1, command), field_manager="test")


def test_the_lock_is_released_only_while_this_run_holds_it(api, namespace):
    path = lock_lease.lease_path(namespace)
    held = _lock(api, namespace, "install").acquire(0)
    held._stop.set()  # no renewal notices what follows
    lease = api.request("GET", path)
    other = lock_holder.Holder("other", "h2", 2, "install")
    lease["spec"]["holderIdentity"] = other.identity
    api.request("PUT", path, body=lease)  # it expired and another run took it, unseen by this one
    held.release()
    assert api.request("GET", path)["spec"]["holderIdentity"] == other.identity

    api.request("DELETE", path)
    held = _lock(api, namespace, "install").acquire(0)
    held.renew()  # our last write's answer is what the release proves, and pins
    held.release()
    assert api.get_or_none(path) is None


def test_history_trimming_deletes_only_its_records(api, namespace):
    entries = {"apps/Deployment/ns/c": Entry("apps/v1", "deployments", True, "controllers", "h1")}
    for ref in ("v1", "v2"):
        install_history.record(session(api, namespace, field_manager="t"), install_history.NewRevision({"ref": ref}, entries),
                       history_max=0)
    # A record's name without its label (someone's ConfigMap of that name) is not a record.
    _configmap(api, namespace, "trainerctl-history.v9", {"other": "x"})
    install_history.record(session(api, namespace, field_manager="t"), install_history.NewRevision({"ref": "v3"}, entries),
                   history_max=1)
    names = {c["metadata"]["name"] for c in api.request("GET", object_path("", "v1", "configmaps", namespace))["items"]}
    assert {n for n in names if n.startswith("trainerctl-history")} == {"trainerctl-history.v3",
                                                                         "trainerctl-history.v9"}
    assert install_history.delete_all(session(api, namespace)) == 1
    assert api.get_or_none(object_path("", "v1", "configmaps", namespace, "trainerctl-history.v9")) is not None


def test_prune_checks_the_names_its_record_lists_before_any_url(api, namespace):
    """The inventory lives on the server: entries named `..` or `a/../../kube-system` are skipped
    with the rule they break, and no request carries them; what is ours is pruned."""
    _configmap(api, namespace, "old", {"owner": "me"})
    entry = Entry("v1", "configmaps", True, "config")
    candidates = {f"/ConfigMap/{namespace}/old": entry, f"/ConfigMap/{namespace}/..": entry,
                  f"/ConfigMap/{namespace}/a/../../kube-system": entry, "/ConfigMap/../x": entry}
    sent = []

    class Recording:
        def request(self, method, path, **kwargs):
            sent.append(path)
            return api.request(method, path, **kwargs)

        def __getattr__(self, name):
            return getattr(api, name)

    over = session(Recording(), namespace, owner_label="owner=me")
    over.discovery.refresh()
    sent.clear()  # what discovery asked: only the prune's requests are looked at
    results = over.resources.prune(candidates, PruneRules(STAGES), timeout=30)
    by_name = {r.name: r for r in results}
    assert by_name["old"].action == "pruned"
    for name in ("..", "a/../../kube-system", "x"):
        assert by_name[name].action == "skipped" and "not pruned:" in by_name[name].message, by_name[name]
    assert all(".." not in p and "%2F" not in p.upper() for p in sent), sent
    assert api.get_or_none(object_path("", "v1", "configmaps", namespace, "old")) is None
