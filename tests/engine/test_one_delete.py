"""The one delete (cluster/manager/delete.py) against servers that lie.

A list answer, a record or an inventory is only a lead: whatever names, labels and items the
server sends, a DELETE goes out only for an object whose live read proves the caller's ownership,
only to a path made of names that keep Kubernetes' rules, and only with preconditions pinning the
object proved. The property test drives `delete` with arbitrary live objects; the proxy tests put
a lying proxy (tests/support/hostile_api.LyingProxy) in front of the real API server and run the
commands users run, so what was deleted is what the real server deleted.
"""

from __future__ import annotations

import copy
import os
import re
import subprocess
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.support.properties import PROPERTY
from trainerctl.cluster.client.client import ApiError, connect, object_path
from trainerctl.cluster.manager.delete import DELETED, GONE, REFUSED, Proof, Target, delete
from trainerctl.cluster.manager.listing import answers, selector_matches
from trainerctl.cluster.trainer.verify import owned

HOSTILE_NAMES = ["..", ".", "a/../../kube-system", "../../../../tmp/pwned", "a%2F..%2Fb", "", "A", "x" * 300,
                 "kube-system/..", "-a", "a-", "a..b", "\x00", "ä"]


def _ns(name: str) -> Target:
    return Target("", "v1", "namespaces", False, "", name, "Namespace")


def _cm(namespace: str, name: str) -> Target:
    return Target("", "v1", "configmaps", True, namespace, name, "ConfigMap")


@pytest.mark.parametrize("name", HOSTILE_NAMES)
def test_a_name_outside_kubernetes_rules_never_enters_a_url(name):
    class Nothing:
        def request(self, method, path, **kwargs):
            raise AssertionError(f"{method} {path} sent for {name!r}")

    for target in (_ns(name), _cm("team-a", name), _cm(name, "x"), owned.trainjob_target(name, "x")):
        assert target.bad_name()
        outcome = delete(Nothing(), target, Proof("us", label="k", value="v"))
        assert outcome.done == REFUSED and outcome.why == target.bad_name()
        with pytest.raises(ValueError):
            target.path


def test_each_kind_keeps_its_own_name_rule():
    rbac = Target("rbac.authorization.k8s.io", "v1", "clusterroles", False, "", "system:controller:x", "ClusterRole")
    assert not rbac.bad_name()  # RBAC names are path segments
    for bad in ("a/b", "..", ".", "a%b"):
        assert Target("rbac.authorization.k8s.io", "v1", "roles", True, "ns", bad, "Role").bad_name()
    assert _ns("a.b").bad_name() and not _cm("ns", "a.b").bad_name()  # a namespace is a label, a ConfigMap a subdomain
    assert Target("", "v1", "namespaces", False, "x", "y").bad_name()  # cluster-scoped with a namespace
    assert _cm("", "x").bad_name()  # namespaced without one


def test_a_proof_must_name_a_label_or_a_uid():
    with pytest.raises(ValueError):
        Proof("a name alone", name=re.compile("x"))


# -- arbitrary server answers ------------------------------------------------------------------
class Live:
    """A server holding one object (None: nothing), answering every GET with it, whatever was
    asked, and recording what was sent."""

    def __init__(self, obj: dict | None):
        self.obj = obj
        self.sent: list[tuple[str, str, dict | None]] = []

    def request(self, method, path, **kwargs):
        self.sent.append((method, path, kwargs.get("body")))
        if method == "GET":
            if self.obj is None:
                raise ApiError(404, "NotFound", "not found")
            return copy.deepcopy(self.obj)
        if method == "DELETE":
            return {}
        raise AssertionError(method)


RUN = "0a1b2c3d"
NAMES = st.sampled_from([f"trainerctl-verify-ns-{RUN}", "trainerctl-verify-ns-deadbeef", "team-prod",
                         f"trainerctl-verify-ns-{RUN}x", f"x-trainerctl-verify-ns-{RUN}", "kube-system",
                         f"trainerctl-verify-NS-{RUN}", *HOSTILE_NAMES]) | st.text(max_size=40)
VALUES = st.sampled_from([RUN, "deadbeef", "prod", "", "0A1B2C3D", RUN + " ", "0a1b2c3"]) | st.text(max_size=12)
JSON = st.none() | st.booleans() | st.integers() | st.text(max_size=8) | st.lists(st.text(max_size=3), max_size=2)


@st.composite
def live_objects(draw) -> tuple[str, dict | None]:
    """(the name asked for, what the server answers for it): verify's own object, changed in a few
    of the ways a server or another user could (each a near miss, or none)."""
    run = draw(st.sampled_from([RUN, "deadbeef"]))
    asked = f"trainerctl-verify-ns-{run}"
    meta = {"name": asked, "uid": "u-1", "resourceVersion": "7", "labels": {owned.LABEL: run}}
    for change in draw(st.lists(st.integers(0, 8), max_size=2)):
        if change == 0:
            return draw(NAMES), None if draw(st.booleans()) else {"metadata": {**meta, "name": draw(NAMES)}}
        if change == 1:
            asked = draw(NAMES)
        elif change == 2:
            meta["name"] = draw(NAMES)
        elif change == 3:
            meta["labels"] = {**_labels(meta), draw(st.sampled_from([owned.LABEL, "other"])): draw(VALUES)}
        elif change == 4:
            meta["labels"] = draw(JSON | st.dictionaries(st.sampled_from(["verify.trainerctl.io/Run", "x"]), VALUES))
        elif change == 5:
            meta[draw(st.sampled_from(["uid", "resourceVersion"]))] = draw(JSON)
        elif change == 6:
            meta.pop(draw(st.sampled_from(["uid", "resourceVersion", "labels"])), None)
        elif change == 7:
            meta["namespace"] = draw(st.sampled_from(["kube-system", "x"]))
        else:
            meta["labels"] = {**_labels(meta), "unrelated": draw(VALUES)}
    return asked, None if draw(st.integers(0, 20)) == 0 else {"metadata": meta}


def _labels(meta: dict) -> dict:
    return meta["labels"] if isinstance(meta.get("labels"), dict) else {}


def _is_verifys(asked: str, obj: dict | None) -> bool:
    meta = (obj or {}).get("metadata") or {}
    labels = _labels(meta)
    named = owned.NAME.fullmatch(asked)
    return (obj is not None and not _ns(asked).bad_name() and meta.get("name") == asked and not meta.get("namespace")
            and named is not None and labels.get(owned.LABEL) == named["run"]
            and all(isinstance(v, str) for v in labels.values())
            and isinstance(meta.get("uid"), str) and bool(meta["uid"])
            and isinstance(meta.get("resourceVersion"), str) and bool(meta["resourceVersion"]))


@PROPERTY
@given(live_objects(), st.booleans())
def test_whatever_the_server_answers_only_a_proved_object_is_deleted_and_only_that_version(case, one_run):
    asked, obj = case
    server = Live(obj)
    proof = owned.proof(RUN) if one_run else owned.proof()
    outcome = delete(server, _ns(asked), proof)
    deletes = [s for s in server.sent if s[0] == "DELETE"]
    ours = _is_verifys(asked, obj) and (not one_run or asked.endswith(RUN))
    assert bool(deletes) == ours == (outcome.done == DELETED), (asked, obj, outcome)
    if obj is None:
        assert outcome.done == GONE or _ns(asked).bad_name()
    for _, path, body in deletes:
        assert path == object_path("", "v1", "namespaces", None, asked) and "/" not in asked and ".." not in path
        live = obj["metadata"]
        assert body["preconditions"] == {"uid": live["uid"], "resourceVersion": live["resourceVersion"]}
    for _, path, _ in server.sent:  # not even read, when the name breaks the rules
        assert not _ns(asked).bad_name()


@PROPERTY
@given(st.lists(st.fixed_dictionaries({"metadata": st.fixed_dictionaries({
    "name": NAMES, "namespace": st.sampled_from(["team-a", "kube-system", ""]),
    "labels": st.dictionaries(st.sampled_from(["app", "owner", "x"]), st.sampled_from(["a", "b", "helm", ""]),
                              max_size=2)})}) | JSON, max_size=6),
       st.sampled_from(["app=a", "owner=helm,app=a", "app", "app!=a", "!x", ""]))
def test_a_list_answer_keeps_only_items_of_its_selector_and_namespace(items, selector):
    kept = answers(items, "team-a", selector)
    for item in kept:
        meta = item["metadata"]
        assert meta["namespace"] == "team-a" and meta["name"] and selector_matches(selector, meta["labels"])
    assert len(kept) == sum(1 for i in items if isinstance(i, dict) and i["metadata"]["namespace"] == "team-a"
                            and i["metadata"]["name"] and selector_matches(selector, i["metadata"]["labels"]))


def test_the_selector_forms_trainerctl_asks_for():
    labels = {"a": "1", "b": ""}
    assert selector_matches("a=1", labels) and selector_matches("a==1,b", labels) and selector_matches("", labels)
    assert selector_matches("a!=2", labels) and selector_matches("!c", labels)
    assert not selector_matches("a=2", labels) and not selector_matches("c", labels)
    assert not selector_matches("!a", labels) and not selector_matches("a!=1", labels)


# -- a lying proxy in front of the real API server -----------------------------------------------
OWNER = ("platform.opendatahub.io/part-of", "trainer")


def _item(name: str, namespace: str = "", **labels) -> dict:
    meta = {"name": name, "uid": f"forged-{name}", "resourceVersion": "1", "labels": labels}
    if namespace:
        meta["namespace"] = namespace
    return {"metadata": meta}


def _configmap(cluster, namespace: str, name: str, **labels) -> None:
    cluster.request("POST", object_path("", "v1", "configmaps", namespace),
                    body={"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "labels": labels}})


def _trainerctl(*args: str, kubeconfig) -> subprocess.CompletedProcess:
    env = {**os.environ, "TRAINERCTL_COMMAND_TIMEOUT": "120", "CI": "true"}
    return subprocess.run([sys.executable, "-m", "trainerctl", *args, "--kubeconfig", str(kubeconfig)],
                          capture_output=True, text=True, env=env, stdin=subprocess.DEVNULL, timeout=300)


@pytest.mark.cluster
def test_uninstall_through_a_lying_server_deletes_only_what_the_live_objects_prove(test_cluster, namespace, tmp_path):
    """The lists uninstall reads hold, besides what is really ours: a ConfigMap of the namespace
    that is not ours but listed with our label, one in kube-system, kube-system itself, history
    records that are not, and names with `..` and `/`. Only ours go."""
    from tests.support.hostile_api import LyingProxy

    admin = connect(str(test_cluster.admin_kubeconfig))
    owner = {OWNER[0]: OWNER[1]}
    _configmap(admin, namespace, "ours", **owner)
    _configmap(admin, namespace, "theirs")
    _configmap(admin, "kube-system", f"victim-{namespace}")
    _configmap(admin, namespace, "trainerctl-history.v1", **{"trainerctl.io/history": "true"})
    _configmap(admin, namespace, "trainerctl-history.v2")
    forged = [_item("theirs", namespace, **owner), _item(f"victim-{namespace}", "kube-system", **owner),
              *(_item(name, namespace, **owner) for name in HOSTILE_NAMES)]

    def lie(path: str, doc: dict) -> dict:
        if not isinstance(doc.get("items"), list):
            return doc
        if path.startswith(f"/api/v1/namespaces/{namespace}/configmaps?") and "part-of" in path:
            doc["items"] += forged
        elif path.startswith(f"/api/v1/namespaces/{namespace}/configmaps?") and "history" in path:
            doc["items"] += [_item("trainerctl-history.v2", namespace, **{"trainerctl.io/history": "true"}),
                             _item("trainerctl-history.v3/../../x", namespace, **{"trainerctl.io/history": "true"})]
        elif path.startswith("/api/v1/namespaces?"):
            doc["items"] += [_item("kube-system", **owner), _item("a/../../kube-system", **owner)]
        return doc

    with LyingProxy(test_cluster.server, test_cluster.ca_file.read_bytes(), test_cluster.admin_token, lie) as proxy:
        kubeconfig = proxy.kubeconfig(tmp_path / "kubeconfig", token="lying-token-0123456789")
        proc = _trainerctl("uninstall", "-n", namespace, "-o", "json", kubeconfig=kubeconfig)
        sent = list(proxy.requests)
    assert proc.returncode == 0, proc.stderr
    deletes = sorted(r.path.split("?")[0] for r in sent if r.method == "DELETE")
    assert deletes == sorted([f"/api/v1/namespaces/{namespace}/configmaps/ours",
                              f"/api/v1/namespaces/{namespace}/configmaps/trainerctl-history.v1",
                              f"/apis/coordination.k8s.io/v1/namespaces/{namespace}/leases/trainerctl-lock"]), deletes
    for request in sent:  # no hostile name reached any path, read or delete
        where = request.path.split("?")[0]
        assert ".." not in where and "%2F" not in where.upper() and "kube-system" not in where, where
    for request in sent:
        if request.method == "DELETE":
            assert set(request.body["preconditions"]) == {"uid", "resourceVersion"}, request.body
    left = {name for name in ("ours", "theirs", "trainerctl-history.v1", "trainerctl-history.v2")
            if admin.get_or_none(object_path("", "v1", "configmaps", namespace, name)) is not None}
    assert left == {"theirs", "trainerctl-history.v2"}
    assert admin.get_or_none(object_path("", "v1", "configmaps", "kube-system", f"victim-{namespace}")) is not None


@pytest.mark.cluster
def test_verifys_sweep_through_a_lying_server_proves_each_namespace_on_its_live_object(test_cluster, tmp_path):
    """A killed verify's namespace is swept; a namespace the list says is verify's but whose live
    labels say otherwise, kube-system, and names no server allows are not."""
    from tests.support.hostile_api import LyingProxy

    admin = connect(str(test_cluster.admin_kubeconfig))
    killed, impostor, prod = (f"{owned.NAME_PREFIX}-ns-{run}" for run in ("1a2b3c4d", "cafebabe", "00000000"))
    for name, value in ((killed, "1a2b3c4d"), (impostor, "prod")):
        admin.request("POST", "/api/v1/namespaces", body={"apiVersion": "v1", "kind": "Namespace",
                                                          "metadata": {"name": name, "labels": {owned.LABEL: value}}})

    def lie(path: str, doc: dict) -> dict:
        if path.startswith("/api/v1/namespaces?") and isinstance(doc.get("items"), list):
            doc["items"] = [i for i in doc["items"] if i["metadata"]["name"] in (killed, impostor)]
            for item in doc["items"]:  # as the list tells it, the impostor is verify's
                item["metadata"]["labels"][owned.LABEL] = item["metadata"]["name"][-8:]
            doc["items"] += [_item(name, **{owned.LABEL: "00000000"}) for name in ("kube-system", prod,
                                                                                   "a/../../kube-system")]
        return doc

    with LyingProxy(test_cluster.server, test_cluster.ca_file.read_bytes(), test_cluster.admin_token, lie) as proxy:
        lines = owned.sweep(connect(str(proxy.kubeconfig(tmp_path / "kubeconfig"))), None)
        sent = list(proxy.requests)
    assert lines == [f"deleted Namespace {killed} (left by an earlier verify)"], lines
    assert [r.path for r in sent if r.method == "DELETE"] == [f"/api/v1/namespaces/{killed}"]
    assert not any(".." in r.path or r.path.endswith("/kube-system") for r in sent)
    assert (admin.request("GET", f"/api/v1/namespaces/{killed}")["metadata"].get("deletionTimestamp"))
    assert not admin.request("GET", f"/api/v1/namespaces/{impostor}")["metadata"].get("deletionTimestamp")


HELM_RECORD = "sh.helm.release.v1.kubeflow-trainer.v1"


@pytest.mark.parametrize("live, deleted", [
    ({"name": HELM_RECORD, "namespace": "opendatahub", "labels": {"owner": "helm", "name": "kubeflow-trainer"}}, True),
    ({"name": HELM_RECORD, "namespace": "opendatahub", "labels": {"owner": "helm", "name": "other"}}, False),
    ({"name": HELM_RECORD, "namespace": "opendatahub", "labels": {"name": "kubeflow-trainer"}}, False),
    ({"name": HELM_RECORD, "namespace": "kube-system", "labels": {"owner": "helm", "name": "kubeflow-trainer"}}, False),
    ({"name": "sh.helm.release.v1.other.v1", "namespace": "opendatahub",
      "labels": {"owner": "helm", "name": "kubeflow-trainer"}}, False),
])
def test_a_helm_hand_over_deletes_only_records_that_read_as_the_releases(live, deleted):
    from trainerctl.cluster.operations import helm_releases
    from trainerctl.cluster.trainer.helm_handover import HelmState, delete_records

    release = helm_releases.Release("kubeflow-trainer", "opendatahub",
                           records=[helm_releases.Record("Secret", "opendatahub", HELM_RECORD, 1, "deployed")])
    server = Live({"metadata": {**live, "uid": "u-1", "resourceVersion": "3"}})
    [result] = delete_records(server, HelmState([release]), dry_run=False)
    assert [p for m, p, _ in server.sent if m == "DELETE"] == \
        ([f"/api/v1/namespaces/opendatahub/secrets/{HELM_RECORD}"] if deleted else [])
    assert result.action == ("deleted" if deleted else "skipped"), result
