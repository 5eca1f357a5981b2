"""The typed views of server objects (trainerctl/cluster/client/views) and bounded decoding of
what the server sends (trainerctl/trust/server_payloads.py).

Each example of issue 25 has a test: a Lease with an acquire time without a zone, a duration of
"abc" or 1e400, a list as holder, a create answer without resourceVersion; a ReplicaSet revision
of "abc", a null spec.replicas, a restart count of "5", container statuses that are not
mappings; a Helm record with info a string, chart a list, a 5000-digit revision, nesting past
any limit; a 4 MB gzip that would expand to 4 GiB. Then the whole class, by property: whatever
JSON a server sends for a kind, reading it gives its view or `Unreadable`, one line, never any
other exception. The commands over these views are run against the hostile API server in
tests/engine/test_hostile_api.py.
"""

from __future__ import annotations

import base64
import copy
import gzip
import json
import tracemalloc

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.cli.test_properties import PROPERTY, json_values, keys
from tests.support.hostile_api import gzip_bomb, helm_payload, helm_record
from trainerctl.trust import limits, server_payloads
from trainerctl.trust.server_payloads import Undecodable
from trainerctl.cluster.client.views import (CRD, VIEWS, Deployment, Event, InventoryRecord, Lease, Node, Pod,
                                             ReplicaSet, Unreadable, parse_time)
from trainerctl.cluster.manager import diagnose
from trainerctl.cluster.operations import helm_releases, lock_lease

NS = "opendatahub"


def _lease(**spec) -> dict:
    return {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
            "metadata": {"name": "trainerctl-lock", "namespace": NS, "resourceVersion": "7"},
            "spec": {"holderIdentity": "ann@h1 pid 12 (install) #0123456789ab", "leaseDurationSeconds": 20,
                     "acquireTime": "2026-08-21T09:40:12.000000Z", "renewTime": "2026-08-21T09:40:17.000000Z",
                     **spec}}


# -- the Lease ------------------------------------------------------------------------------------
@pytest.mark.parametrize("spec, line", [
    ({"leaseDurationSeconds": "abc"}, "spec.leaseDurationSeconds: expected an integer 1..2147483647, got 'abc'"),
    ({"leaseDurationSeconds": json.loads("1e400")}, "spec.leaseDurationSeconds: expected an integer 1..2147483647, "
                                                    "got inf"),
    ({"leaseDurationSeconds": 0}, "spec.leaseDurationSeconds: expected an integer 1..2147483647, got 0"),
    ({"holderIdentity": ["ann"]}, "spec.holderIdentity: expected a string, got a list of 1"),
    ({"acquireTime": "2026-08-21T09:40:12"}, "spec.acquireTime: expected an RFC 3339 time with a zone and "
                                             "microseconds (e.g. 2026-08-21T09:40:12.000000Z), got "
                                             "'2026-08-21T09:40:12'"),
    ({"renewTime": 1755769212}, "spec.renewTime: expected an RFC 3339 time"),
])
def test_a_lease_that_does_not_fit_names_its_field(spec, line):
    with pytest.raises(Unreadable) as caught:
        lock_lease.LeaseState.of(_lease(**spec))
    assert str(caught.value).startswith(f"unreadable Lease {NS}/trainerctl-lock: {line}")
    assert caught.value.exit_code == 3


def test_a_lease_is_read_with_its_zone():
    state = lock_lease.LeaseState.of(_lease(acquireTime="2026-08-21T11:40:12.5+02:00"))
    assert state.since().startswith("since 2026-08-21T09:40:12Z (") and state.duration == 20
    assert state.to_dict()["acquireTime"] == "2026-08-21T09:40:12.500000Z"
    assert lock_lease.LeaseState.of(_lease(leaseDurationSeconds=None)).duration == lock_lease.DURATION_SECONDS


def test_an_answer_without_resource_version_cannot_guard_the_lock():
    answer = _lease()
    del answer["metadata"]["resourceVersion"]
    with pytest.raises(Unreadable, match=r"^unreadable Lease opendatahub/trainerctl-lock: metadata.resourceVersion: "
                                         r"expected a non-empty string$"):
        Lease.read(answer).version()


@pytest.mark.parametrize("text, ok", [
    ("2026-08-21T09:40:12Z", True), ("2026-08-21T09:40:12.123456789-07:30", True), ("2026-08-21t09:40:12z", True),
    ("2026-08-21T09:40:12", False), ("2026-08-21 09:40:12Z", False), ("2026-13-21T09:40:12Z", False),
    ("2026-08-21T09:40:12+24:00", False), ("2026-08-21T09:40:12Z\n", False), ("٢٠٢٦-08-21T09:40:12Z", False),
    ("", False)])
def test_times_need_their_zone(text, ok):
    assert (parse_time(text) is not None) == ok


# -- workloads ------------------------------------------------------------------------------------
def _rs(**fields) -> dict:
    rs = {"metadata": {"name": "d-1", "namespace": NS, "uid": "rs", "ownerReferences": [{"uid": "d"}],
                       "annotations": {"deployment.kubernetes.io/revision": "3"}},
          "spec": {"replicas": 2}, "status": {"replicas": 1}}
    for path, value in fields.items():
        node = rs
        *parents, last = path.split(".")
        for key in parents:
            node = node[key]
        node[last] = value
    return rs


def test_a_replicaset_revision_must_be_a_number_and_null_replicas_mean_one():
    with pytest.raises(Unreadable, match=r"metadata.annotations\['deployment.kubernetes.io/revision'\]: expected a "
                                         r"revision number, got 'abc'"):
        ReplicaSet.read({"metadata": {"name": "d-1", "annotations": {"deployment.kubernetes.io/revision": "abc"}}})
    assert ReplicaSet.read(_rs()).revision == 3
    assert ReplicaSet.read({"metadata": {"name": "d-1"}, "spec": {"replicas": None}}).replicas == 1
    assert Deployment.read({"metadata": {"name": "d"}, "spec": {"replicas": None}}).replicas == 1


def _crash_status(**fields) -> dict:
    return {"name": "manager", "restartCount": 4, "state": {"waiting": {"reason": "CrashLoopBackOff"}},
            "lastState": {"terminated": {"exitCode": 2}}, **fields}


def _pod(*statuses) -> dict:
    return {"metadata": {"name": "p", "namespace": NS, "uid": "u"},
            "spec": {"containers": [{"name": "manager", "image": "example.com/c:v1"}]},
            "status": {"phase": "Running", "containerStatuses": list(statuses)}}


@pytest.mark.parametrize("statuses, line", [
    ([_crash_status(restartCount="5")], "status.containerStatuses[0].restartCount: expected an integer "
                                        "0..2147483647, got '5'"),
    (["not-a-mapping"], "status.containerStatuses[0]: expected a mapping, got 'not-a-mapping'"),
    ({"manager": {}}, "status.containerStatuses: expected a list of mappings, got a mapping"),
    ([_crash_status(state={"waiting": "CrashLoopBackOff"})], "status.containerStatuses[0].state.waiting: expected "
                                                              "a mapping, got 'CrashLoopBackOff'"),
    ([_crash_status(lastState={"terminated": {"exitCode": "2"}})],
     "status.containerStatuses[0].lastState.terminated.exitCode: expected an integer -2147483648..2147483647"),
])
def test_container_statuses_that_do_not_fit_name_the_pod_and_field(statuses, line):
    with pytest.raises(Unreadable) as caught:
        Pod.read(_pod(*statuses) if isinstance(statuses, list) else {**_pod(), "status": {"containerStatuses": statuses}})
    assert str(caught.value).startswith(f"unreadable Pod {NS}/p: {line}")


def test_a_container_or_node_or_crd_without_a_name_is_unreadable():
    with pytest.raises(Unreadable, match=r"spec.containers\[0\].name: expected a Kubernetes name"):
        Pod.read({**_pod(), "spec": {"containers": [{"image": "busybox"}]}})
    with pytest.raises(Unreadable, match=r"^unreadable Node \(without a name\): metadata.name"):
        Node.read({"metadata": {"labels": {}}})
    with pytest.raises(Unreadable, match=r"^unreadable CustomResourceDefinition \(without a name\): metadata.name"):
        CRD.read({"spec": {"group": "g"}})
    with pytest.raises(Unreadable, match="got '../../x'"):
        Pod.read({"metadata": {"name": "../../x", "namespace": NS}})


def test_a_diagnosis_reads_the_pods_that_fit_and_names_the_others():
    """pod_causes on a view: the example pods of the issue cannot reach it, the rest still explain."""
    pod = Pod.read(_pod(_crash_status()))
    [cause] = diagnose.pod_causes(pod, [], lambda *_: [])
    assert (cause.kind, cause.restarts, cause.exit_code, cause.final) == ("crash", 4, 2, True)
    events = [Event.read({"metadata": {"name": "e"}, "reason": "Unhealthy", "message": f"Readiness probe failed: {i}",
                          "lastTimestamp": f"2026-01-01T00:00:0{i}Z"}) for i in (2, 1)]
    running = Pod.read(_pod({"name": "manager", "ready": False, "state": {"running": {}}}))
    assert diagnose.pod_causes(running, sorted(events, key=lambda e: e.last_seen), lambda *_: [])[0].message == \
        "Readiness probe failed: 2"


# -- Helm records ---------------------------------------------------------------------------------
def _release(**fields) -> dict:
    return {"name": "kubeflow-trainer", "namespace": NS, "version": 1, "info": {"status": "deployed"},
            "chart": {"metadata": {"name": "kubeflow-trainer", "version": "2.2.0"}}, "manifest": "", **fields}


@pytest.mark.parametrize("record, line", [
    (helm_record("kubeflow-trainer", "1", helm_payload(_release(info="deployed"))),
     "release.info: expected a mapping, got 'deployed'"),
    (helm_record("kubeflow-trainer", "1", helm_payload(_release(chart=["kubeflow-trainer"]))),
     "release.chart: expected a mapping, got a list of 1"),
    (helm_record("kubeflow-trainer", "1", helm_payload(_release(version=10**40))),
     "release.version: expected an integer 0..2147483647, got a number of about 41 digits"),
    (helm_record("kubeflow-trainer", "1", helm_payload(b'{"info": ' + b"[" * 50000 + b"]" * 50000 + b"}")),
     "data.release: expected Helm's encoding of a release (base64 of gzip of JSON): nested deeper than 200"),
    (helm_record("kubeflow-trainer", "1", helm_payload(b'{"version": 1' + b"0" * 5000 + b"}")),
     "data.release: expected Helm's encoding of a release (base64 of gzip of JSON): not JSON trainerctl reads"),
    (helm_record("kubeflow-trainer", "1", helm_payload(_release(
        manifest="apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: [a, b]\n"))),
     "release.manifest: expected a YAML stream of objects (manifest: document 1: expected a Kubernetes object"),
    (helm_record("kubeflow-trainer", "1", helm_payload(_release(
        manifest="---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: runtimes}\ndata: [runtimes.yaml]\n"))),
     "release.manifest: expected a YAML stream of objects (manifest: document 1: ConfigMap runtimes: data: expected a "
     "mapping of strings"),
    (helm_record("kubeflow-trainer", "1", helm_payload(_release(manifest="just text\n"))),
     "release.manifest: expected a YAML stream of objects (manifest: document 1: expected a Kubernetes object"),
    (helm_record("kubeflow-trainer", "1", helm_payload(_release(manifest="a: " + "[" * 20000))),
     "release.manifest: expected a YAML stream of objects (manifest: not YAML: exceeded maximum nesting depth"),
    (helm_record("kubeflow-trainer", "1", helm_payload(_release(manifest="a: &a [x, x]\n" + "".join(
        f"{chr(98 + i)}: &{chr(98 + i)} [*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}]\n"
        for i in range(12))))),
     "release.manifest: expected a YAML stream of objects (manifest: its aliases expand to more than"),
])
def test_a_helm_record_that_does_not_fit_is_kept_unread_and_named(record, line):
    """The record still goes at a hand-over (deleting it is how Helm forgets), but its revision is
    not read: the release's chart is unknown, and the line says why."""
    [release] = helm_releases.releases_from_records([record])
    assert release.revisions == {} and [r.revision for r in release.records] == [1]
    [said] = release.unreadable
    assert said.startswith(f"unreadable Secret {NS}/sh.helm.release.v1.kubeflow-trainer.v1: {line}"), said


def test_a_record_with_a_5000_digit_revision_is_skipped_and_named():
    skipped: list[str] = []
    good = helm_record("kubeflow-trainer", "2", helm_payload(_release(version=2)))
    releases = helm_releases.releases_from_records([helm_record("kubeflow-trainer", "9" * 5000, helm_payload(_release())),
                                           good], skipped)
    assert [r.revision for r in releases[0].records] == [2] and releases[0].chart == "kubeflow-trainer"
    [line] = skipped
    assert "metadata.name: expected sh.helm.release.v1.NAME.vREVISION with a revision 1..2147483647" in line
    assert len(line) < 600


def test_a_four_megabyte_gzip_never_expands_towards_four_gibibytes(monkeypatch):
    bomb = gzip_bomb(4 << 30)
    assert len(bomb) < 5 * 2**20
    record = helm_record("kubeflow-trainer", "1", base64.b64encode(bomb))
    inflated = _count_inflated(monkeypatch)
    tracemalloc.start()
    try:
        [release] = helm_releases.releases_from_records([record])
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert "larger than the 64 MiB limit" in release.unreadable[0] and "TRAINERCTL_MAX_DECODED" in release.unreadable[0]
    # Work, not time: no more than the limit (and the one byte that proves it passed) is ever inflated.
    assert (64 << 20) < sum(inflated) <= (64 << 20) + 1 and peak < 200 * 2**20


def _count_inflated(monkeypatch) -> list[int]:
    """The bytes each decompress call of server_payloads.gunzip gives back."""
    import zlib

    counts: list[int] = []

    class Counting:
        def __init__(self, inner):
            self._inner = inner

        def decompress(self, data, max_length=0):
            out = self._inner.decompress(data, max_length)
            counts.append(len(out))
            return out

        def __getattr__(self, name):
            return getattr(self._inner, name)

    original = zlib.decompressobj
    monkeypatch.setattr(zlib, "decompressobj", lambda *a: Counting(original(*a)))
    return counts


def test_decoding_limits_are_raised_by_their_variables(monkeypatch):
    monkeypatch.setenv("TRAINERCTL_MAX_DECODED", "1Ki")
    with pytest.raises(Undecodable, match="larger than the 1 KiB limit"):
        server_payloads.gunzip(gzip.compress(b"x" * 2000))
    with pytest.raises(Undecodable, match="larger than the 1 KiB limit"):
        server_payloads.b64decode(base64.b64encode(b"x" * 2000))
    assert server_payloads.gunzip(gzip.compress(b"x" * 1024)) == b"x" * 1024
    monkeypatch.setenv("TRAINERCTL_LOG_TIMEOUT", "2m")
    assert limits.seconds_for("log-time") == 120
    monkeypatch.setenv("TRAINERCTL_LOG_TIMEOUT", "soon")
    with pytest.raises(limits.InputError, match="TRAINERCTL_LOG_TIMEOUT: 'soon': expected a number of seconds"):
        limits.seconds_for("log-time")


def test_the_inventory_is_read_by_its_view():
    data = {"objects": json.dumps({"apps/Deployment/ns/d": {"api_version": "apps/v1", "resource": "deployments",
                                                            "namespaced": "yes", "stage": "controllers"}})}
    with pytest.raises(Unreadable, match=r"^unreadable ConfigMap ns/trainerctl-inventory: "
                                         r"data.objects\['apps/Deployment/ns/d'\].namespaced: expected true or false"):
        InventoryRecord.read({"metadata": {"name": "trainerctl-inventory", "namespace": "ns"}, "data": data})
    with pytest.raises(Unreadable, match=r"data.source.images: expected a mapping of strings"):
        InventoryRecord.read({"metadata": {"name": "i"}, "data": {"source": json.dumps({"images": ["x"]})}})
    for field in ("channel", "trainer_version", "ref"):  # what status and history print, each by its type
        with pytest.raises(Unreadable, match=rf"data.source.{field}: expected a string"):
            InventoryRecord.read({"metadata": {"name": "i"}, "data": {"source": json.dumps({field: ["stable"]})}})
    assert InventoryRecord.read({"metadata": {"name": "i"}, "data": {"source": json.dumps(
        {"channel": "stable"})}}).source == {"channel": "stable"}


# -- the whole class: any JSON, for every view ------------------------------------------------------
SAMPLES = {
    "Lease": _lease(),
    "Deployment": {"metadata": {"name": "d", "namespace": NS, "uid": "d", "generation": 2},
                   "spec": {"replicas": 1, "selector": {"matchLabels": {"a": "b"}, "matchExpressions": [
                       {"key": "k", "operator": "In", "values": ["v"]}]},
                            "template": {"spec": {"containers": [{"name": "c", "image": "i"}]}}},
                   "status": {"observedGeneration": 2, "replicas": 1, "updatedReplicas": 1, "conditions": [
                       {"type": "Available", "status": "True", "lastTransitionTime": "2026-01-01T00:00:00Z"}]}},
    "ReplicaSet": _rs(),
    "Pod": {**_pod(_crash_status(), {"name": "side", "ready": True, "state": {"running": {"startedAt": "x"}}}),
            "metadata": {"name": "p", "namespace": NS, "uid": "u", "ownerReferences": [{"uid": "rs"}],
                         "deletionTimestamp": "2026-01-01T00:00:00Z"}},
    "Event": {"metadata": {"name": "e", "namespace": NS}, "involvedObject": {"kind": "Pod", "name": "p", "uid": "u"},
              "reason": "BackOff", "message": "m", "count": 2, "lastTimestamp": "2026-01-01T00:00:00Z",
              "eventTime": "2026-01-01T00:00:00.000000Z", "series": {"count": 3,
                                                                    "lastObservedTime": "2026-01-01T00:00:01.5Z"}},
    "Node": {"metadata": {"name": "n1", "labels": {"topology.kubernetes.io/zone": "z"}},
             "spec": {"unschedulable": True, "taints": [{"key": "k", "value": "v", "effect": "NoSchedule"}]},
             "status": {"conditions": [{"type": "Ready", "status": "True"}], "nodeInfo": {"kubeletVersion": "v1"},
                        "allocatable": {"cpu": "4"}}},
    "CustomResourceDefinition": {"metadata": {"name": "xs.g"}, "spec": {
        "group": "g", "names": {"kind": "X", "plural": "xs"}, "versions": [{"name": "v1", "served": True}]},
        "status": {"storedVersions": ["v1"], "conditions": [{"type": "Established", "status": "True"}]}},
    "Service": {"metadata": {"name": "s", "namespace": NS}, "spec": {"selector": {"a": "b"}, "ports": [
        {"name": "https", "port": 443, "targetPort": 9443}, {"port": 80, "targetPort": "http"}]}},
    "EndpointSlice": {"metadata": {"name": "s-1"}, "ports": [{"name": "https", "port": 9443}],
                      "endpoints": [{"addresses": ["10.0.0.1"], "conditions": {"ready": True}}]},
    "HelmRecord": helm_record("r", "1", helm_payload(_release())),
    "HelmRecord (ConfigMap)": helm_record("r", "1", helm_payload(_release()).decode(), kind="ConfigMap"),
    "HelmRelease": _release(hooks=[{"manifest": "kind: Job"}]),
    "Inventory": {"metadata": {"name": "trainerctl-inventory", "namespace": NS}, "data": {
        "complete": "false", "objects": json.dumps({"apps/Deployment/ns/d": {
            "api_version": "apps/v1", "resource": "deployments", "namespaced": True, "stage": "s", "rv": "1"}}),
        "source": json.dumps({"url": "u", "releases": [{"name": "n", "version": "v"}], "images": {"a": "b"}})}},
    "HistoryRecord": {"metadata": {"name": "trainerctl-history.v2", "namespace": NS}, "data": {
        "revision": "2", "time": "2026-01-01T00:00:00Z", "who": "admin (me@host)", "version": "0.1.0",
        "action": "rollback", "rollbackTo": "1", "objectCount": "1",
        "objects": json.dumps({"apps/Deployment/ns/d": {
            "api_version": "apps/v1", "resource": "deployments", "namespaced": True, "stage": "s"}}),
        "render": json.dumps({"platform": "kubernetes", "images": {"a": "b"}, "components": ["runtimes"],
                              "manager": {"replicas": 2}, "ha": False}),
        "source": json.dumps({"url": "u", "ref": "v2.2.0", "embedded": True})}},
    "ConfigMap": {"metadata": {"name": "kubeflow-trainer-public", "namespace": NS}, "data": {"version": "v2.3.0"}},
    "ValidatingWebhookConfiguration": {"metadata": {"name": "v"}, "webhooks": [
        {"name": "v.x.io", "clientConfig": {"service": {"namespace": NS, "name": "s", "port": 443}},
         "rules": [{"apiGroups": ["x.io"], "resources": ["xs"]}]}]},
    "MutatingWebhookConfiguration": {"metadata": {"name": "m"}, "webhooks": [
        {"name": "m.x.io", "clientConfig": {"url": "https://example.com/m"}, "rules": [{"apiGroups": ["x.io"]}]}]},
    "SelfSubjectAccessReview": {"kind": "SelfSubjectAccessReview", "status": {"allowed": True, "denied": False,
                                                                            "reason": "RBAC", "evaluationError": ""}},
    "SubjectAccessReview": {"kind": "SubjectAccessReview", "status": {"allowed": False, "reason": "no rule"}},
    "SelfSubjectReview": {"kind": "SelfSubjectReview", "status": {"userInfo": {"username": "admin"}}},
    "version.Info": {"major": "1", "minor": "27+", "gitVersion": "v1.27.3-gke.100", "platform": "linux/amd64",
                     "goVersion": "go1.20"},
    "ClusterRoleBinding": {"metadata": {"name": "b"}, "roleRef": {"apiGroup": "rbac.authorization.k8s.io",
                                                                "kind": "ClusterRole", "name": "r"},
                           "subjects": [{"kind": "ServiceAccount", "name": "sa", "namespace": NS}]},
}


def test_every_view_has_a_sample_that_reads():
    assert set(SAMPLES) == set(VIEWS)
    for kind, read in VIEWS.items():
        assert read(copy.deepcopy(SAMPLES[kind])) is not None, kind


def _paths(value, path=()):
    yield path
    if isinstance(value, dict):
        for key, child in value.items():
            yield from _paths(child, (*path, key))
    elif isinstance(value, list):
        for i, child in enumerate(value):
            yield from _paths(child, (*path, i))


@st.composite
def bent(draw, sample):
    """The sample with a few of its fields (any depth) replaced by any JSON value, or removed."""
    doc = copy.deepcopy(sample)
    for _ in range(draw(st.integers(1, 3))):
        paths = [p for p in _paths(doc) if p]
        if not paths:
            break
        *parents, last = draw(st.sampled_from(paths))
        node = doc
        for key in parents:
            node = node[key]
        if draw(st.booleans()) or not isinstance(node, dict):
            node[last] = draw(json_values)
        else:
            del node[last]
    return doc


def _read_or_unreadable(kind: str, raw) -> None:
    try:
        view = VIEWS[kind](raw)
    except Unreadable as exc:
        text = str(exc)
        assert text.startswith("unreadable ") and "\n" not in text and len(text) < 2000, text
        return
    if kind == "HelmRecord" or kind == "HelmRecord (ConfigMap)":
        if view is not None:
            try:
                view.decoded()
            except Unreadable as exc:
                assert str(exc).startswith("unreadable ") and "\n" not in str(exc)


@pytest.mark.parametrize("kind", sorted(VIEWS))
@PROPERTY
@given(data=st.data())
def test_any_json_for_a_view_gives_the_view_or_one_unreadable_line(kind, data):
    raw = data.draw(bent(SAMPLES[kind]) | json_values | st.dictionaries(keys, json_values, max_size=6))
    _read_or_unreadable(kind, raw)


@PROPERTY
@given(release=bent(SAMPLES["HelmRelease"]), kind=st.sampled_from(["Secret", "ConfigMap"]))
def test_any_release_inside_a_helm_record_is_read_or_named(release, kind):
    payload = helm_payload(release)
    record = helm_record("r", "1", payload.decode() if kind == "ConfigMap" else payload, kind=kind)
    skipped: list[str] = []
    for found in helm_releases.releases_from_records([record], skipped):
        for line in found.unreadable:
            assert line.startswith(f"unreadable {kind} ") and "\n" not in line
        found.describe(), found.manifest_objects(), found.hook_objects()


@PROPERTY
@given(data=st.binary(max_size=400) | st.text(max_size=400).map(str.encode))
def test_bounded_decoders_give_a_value_or_say_why(data):
    for decode in (server_payloads.b64decode, server_payloads.gunzip, server_payloads.load_json):
        try:
            decode(data)
        except Undecodable as exc:
            assert str(exc) and "\n" not in str(exc)
    try:
        server_payloads.load_yaml_stream(data.decode("utf-8", "replace"))
    except Undecodable as exc:
        assert "\n" not in str(exc)


@PROPERTY
@given(lease=bent(SAMPLES["Lease"]), holder=json_values)
def test_any_lease_gives_the_lock_state_or_one_unreadable_line(lease, holder):
    """What the lock and `status` make of a Lease: its state (said in words, whatever the holder
    annotation holds), or the unreadable line; never another exception."""
    if isinstance(lease, dict) and isinstance(lease.get("metadata"), dict):
        lease["metadata"]["annotations"] = {lock_lease.HOLDER_ANNOTATION: json.dumps(holder)}
    try:
        state = lock_lease.LeaseState.of(lease)
    except Unreadable as exc:
        assert str(exc).startswith("unreadable Lease ") and "\n" not in str(exc)
        return
    assert isinstance(state.description, str) and state.since().startswith("since ")
    assert isinstance(state.to_dict()["leaseDurationSeconds"], int)
