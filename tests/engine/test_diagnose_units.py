"""Reading a cause from a pod's status, the support bundle's redaction, the version floors.

The causes themselves are proven on the e2e cluster (tests/e2e/test_e2e_diagnose.py), where the real
scheduler, ReplicaSet controller and (process) kubelet write them; these pin the reading of each
shape, the redaction rules and the floors table.
"""

from __future__ import annotations

import base64
import io
import json
import os
import stat
import tarfile

import pytest

from trainerctl.cluster.client.views import Deployment, Event, Pod
from trainerctl.cluster.operations import bundle_archive
from trainerctl.cluster.manager.diagnose import (CRASH_LOOP_RESTARTS, Cause, Diagnosis, log_excerpt, pod_causes,
                                               selector_query)
from trainerctl.cluster.trainer import floors
from trainerctl.trust import redact


def _pod(*statuses, phase="Pending", conditions=()):
    return Pod.read({"metadata": {"name": "p", "namespace": "ns", "uid": "u"},
                     "spec": {"containers": [{"name": "manager", "image": "example.com/c:v1"}]},
                     "status": {"phase": phase, "conditions": list(conditions), "containerStatuses": list(statuses)}})


def _no_log(pod, container):
    return ["line 1", "line 2"]


def test_image_pull_back_off_names_image_origin_and_message():
    pod = _pod({"name": "manager", "restartCount": 0, "state": {"waiting": {
        "reason": "ImagePullBackOff", "message": 'Back-off pulling image "example.com/c:v1": ErrImagePull: not found'}}})
    [cause] = pod_causes(pod, [], _no_log, {"example.com/c:v1": "--image example.com/c"})
    assert (cause.kind, cause.reason, cause.image, cause.final) == ("image", "ImagePullBackOff", "example.com/c:v1", False)
    assert cause.text() == ('image example.com/c:v1 (from --image example.com/c) cannot be pulled (ImagePullBackOff): '
                            'Back-off pulling image "example.com/c:v1": ErrImagePull: not found')


def test_invalid_image_name_is_final():
    pod = _pod({"name": "manager", "state": {"waiting": {"reason": "InvalidImageName", "message": "bad"}}})
    assert pod_causes(pod, [], _no_log)[0].final


@pytest.mark.parametrize("restarts,final", [(CRASH_LOOP_RESTARTS - 1, False), (CRASH_LOOP_RESTARTS, True)])
def test_a_crash_loop_is_final_past_the_restart_limit_and_carries_the_previous_log(restarts, final):
    pod = _pod({"name": "manager", "restartCount": restarts,
                "state": {"waiting": {"reason": "CrashLoopBackOff", "message": "back-off 4s"}},
                "lastState": {"terminated": {"exitCode": 2, "reason": "Error"}}}, phase="Running")
    [cause] = pod_causes(pod, [], _no_log)
    assert (cause.kind, cause.exit_code, cause.restarts, cause.final) == ("crash", 2, restarts, final)
    assert cause.log == ["line 1", "line 2"]
    assert cause.lines()[1:] == ["  | line 1", "  | line 2"]


def test_a_crash_log_keeps_the_error_line_a_usage_text_buries():
    usage = [f"  -option-{i} value" for i in range(40)]
    whole = ["flag provided but not defined: -x", "Usage of /manager:", *usage]
    excerpt = log_excerpt(whole, whole=True)
    assert excerpt[:2] == ["flag provided but not defined: -x", "..."] and excerpt[2:] == usage[-8:]
    # read from the middle of a long log: the last error line above the tail instead
    middle = ["E0101 reconcile failed: boom", *usage]
    assert log_excerpt(middle)[0] == "E0101 reconcile failed: boom"
    assert log_excerpt(usage[:5]) == usage[:5]


def test_a_running_ready_container_that_restarted_once_is_no_cause():
    pod = _pod({"name": "manager", "restartCount": 1, "ready": True, "state": {"running": {}},
                "lastState": {"terminated": {"exitCode": 1}}}, phase="Running")
    assert pod_causes(pod, [], _no_log) == []


def test_unschedulable_takes_the_scheduler_message():
    pod = _pod(conditions=[{"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
                            "message": "0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector."}])
    [cause] = pod_causes(pod, [], _no_log)
    assert cause.kind == "unschedulable" and "didn't match Pod's node affinity/selector" in cause.message


def test_not_ready_takes_the_newest_readiness_event():
    pod = _pod({"name": "manager", "ready": False, "state": {"running": {}}}, phase="Running")
    events = [{"reason": "Unhealthy", "message": "Readiness probe failed: old", "lastTimestamp": "2026-01-01T00:00:01Z"},
              {"reason": "Unhealthy", "message": "Readiness probe failed: new", "lastTimestamp": "2026-01-01T00:00:02Z"}]
    assert pod_causes(pod, [Event.read(e) for e in events], _no_log)[0].message == "Readiness probe failed: new"


def test_diagnosis_text_is_a_few_lines_and_json_has_everything():
    causes = [Cause("config", "CreateContainerConfigError", "Pod ns/p", f"m{i}", container="manager") for i in range(5)]
    diag = Diagnosis("Deployment", "ns", "d", causes)
    lines = diag.lines()
    assert lines[0] == "Deployment ns/d:" and lines[-1].endswith("(-o json lists them)") and len(lines) == 5
    assert len(diag.to_dict()["causes"]) == 5


def test_selector_query_covers_match_expressions():
    assert selector_query(Deployment.read({"metadata": {"name": "d"}, "spec": {"selector": {
        "matchLabels": {"a": "1"}, "matchExpressions": [
            {"key": "b", "operator": "In", "values": ["x", "y"]}, {"key": "c", "operator": "DoesNotExist"}]}}})) == \
        "a=1,b in (x,y),!c"


# -- the bundle ------------------------------------------------------------------------------
def test_sanitize_elides_ca_bundles_and_the_written_secret_keeps_key_names_only(tmp_path):
    secret = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s", "managedFields": [{}], "annotations": {
        "kubectl.kubernetes.io/last-applied-configuration": '{"data": {"tls.key": "c2VjcmV0LXZhbHVl"}}'}},
        "data": {"tls.key": base64.b64encode(b"secret-value").decode()}}
    safe = bundle_archive.sanitize(secret)
    assert "managedFields" not in safe["metadata"]
    assert safe["metadata"]["annotations"]["kubectl.kubernetes.io/last-applied-configuration"] == bundle_archive.ELIDED
    hooks = bundle_archive.sanitize({"kind": "ValidatingWebhookConfiguration", "metadata": {"name": "v"},
                        "webhooks": [{"clientConfig": {"caBundle": "Q0E="}}]})
    assert hooks["webhooks"][0]["clientConfig"]["caBundle"] == bundle_archive.ELIDED
    crd = bundle_archive.sanitize({"kind": "CustomResourceDefinition", "metadata": {"name": "c"},
                      "spec": {"conversion": {"webhook": {"clientConfig": {"caBundle": "Q0E="}}}}})
    assert crd["spec"]["conversion"]["webhook"]["clientConfig"]["caBundle"] == bundle_archive.ELIDED
    # Written: the Secret keeps its key names and sizes; its value is blanked anywhere else,
    # plain or base64, in a member added before the Secret was.
    bundle = bundle_archive.Bundle("root")
    bundle.add_text("a.log", "log: secret-value and " + base64.b64encode(b"secret-value").decode())
    bundle.add_yaml("objects/core/Secret/ns/s.yaml", safe)
    try:
        contents = bundle.contents()
    finally:
        redact.forget_all()
    assert "REDACTED (12 bytes)" in contents["objects/core/Secret/ns/s.yaml"].decode()
    for data in contents.values():
        assert b"secret-value" not in data and base64.b64encode(b"secret-value") not in data


def test_the_archive_is_private_and_refuses_to_overwrite(tmp_path):
    bundle = bundle_archive.Bundle("root")
    bundle.add_json("a.json", {"x": 1})
    out = tmp_path / "bundle.tar.gz"
    old = os.umask(0)
    try:
        bundle.write(str(out))
    finally:
        os.umask(old)
    assert stat.S_IMODE(out.stat().st_mode) == 0o600
    with tarfile.open(out) as tar:
        member = tar.getmember("root/a.json")
        assert member.mode == 0o600 and json.load(io.TextIOWrapper(tar.extractfile(member))) == {"x": 1}
    with pytest.raises(Exception, match="exists"):
        bundle.write(str(out))


# -- floors ----------------------------------------------------------------------------------
@pytest.mark.parametrize("version,kubernetes,jobset", [
    ("2.0.0", (1, 29), (0, 8, 0)), ("v2.1.0", (1, 31), (0, 10, 0)), ("2.2.0", (1, 31), (0, 11, 0)),
    ("2.3.0", (1, 31), (0, 12, 0)), ("2.4.1", (1, 31), (0, 12, 0)), (None, (1, 31), (0, 12, 0)),
])
def test_floors_per_release_with_their_sources(version, kubernetes, jobset):
    floor = floors.for_release(version)
    assert (floor.kubernetes, floor.jobset) == (kubernetes, jobset)
    assert "go.mod" in floor.jobset_source and floor.kubernetes_source
