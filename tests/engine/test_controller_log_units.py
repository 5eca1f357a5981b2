"""Reading the cause out of a controller's log (trainer/controller_log.py over manager/log_text.py),
from canned lines in the shapes the real parts write: client-go's reflector through klog or zap,
Trainer's config loader, the API server's RBAC message. Property tests: whatever text surrounds a
cause, however many times it is quoted, it is still found; no line breaks the reader; what the
log or the server says is cut and made printable in the message. On a real API server:
tests/cluster/test_controller_log.py."""

from __future__ import annotations

import json
import string
from pathlib import Path

import pytest
from hypothesis import assume, given, strategies as st

from tests.support.properties import PROPERTY
from trainerctl.cluster.client.views import Pod
from trainerctl.cluster.manager.diagnose import Cause, LogCause, log_lines, pod_causes
from trainerctl.cluster.manager.log_text import texts
from trainerctl.cluster.trainer.controller_log import explainer

SA = "system:serviceaccount:kubeflow-system:kubeflow-trainer-controller-manager"
DECODE = ("failed to list *v1alpha1.TrainJob: json: cannot unmarshal string into Go struct field "
          "Trainer.items.spec.trainer.numProcPerNode of type int32")


class FakeCluster:
    """Discovery with TrainJob, its objects, and the answer to every SubjectAccessReview."""

    server = "https://fake"

    def __init__(self, objects=(), allowed=False, review_fails=False):
        self.objects, self.allowed, self.review_fails = list(objects), allowed, review_fails
        self.reviews: list[dict] = []

    def request(self, method, path, **kwargs):
        if path == "/api":
            return {"kind": "APIVersions", "versions": ["v1"]}
        if path == "/apis":
            return {"kind": "APIGroupList", "groups": [{"name": "trainer.kubeflow.org", "versions": [
                {"groupVersion": "trainer.kubeflow.org/v1alpha1", "version": "v1alpha1"}]}]}
        if path == "/api/v1":
            return {"kind": "APIResourceList", "groupVersion": "v1", "resources": []}
        if path == "/apis/trainer.kubeflow.org/v1alpha1":
            return {"kind": "APIResourceList", "groupVersion": "trainer.kubeflow.org/v1alpha1", "resources": [
                {"name": "trainjobs", "kind": "TrainJob", "namespaced": True, "verbs": ["list"]}]}
        if path.endswith("/subjectaccessreviews"):
            self.reviews.append(kwargs["body"]["spec"])
            if self.review_fails:
                from trainerctl.cluster.client.client import ApiError
                raise ApiError(403, "forbidden", "Forbidden")
            return {"status": {"allowed": self.allowed}}
        raise AssertionError(path)

    def items(self, path, query=None):
        assert path == "/apis/trainer.kubeflow.org/v1alpha1/trainjobs", path
        return self.objects


def _trainjob(name: str, trainer: dict) -> dict:
    return {"metadata": {"name": name, "namespace": "bar-s"}, "spec": {"trainer": trainer}}


def _zap(msg: str, error: str) -> str:
    return json.dumps({"level": "error", "ts": "2026-08-21T09:40:14Z", "logger": "UnhandledError", "msg": msg,
                       "error": error, "stacktrace": "k8s.io/client-go/tools/cache.(*Reflector).ListAndWatch\n\t..."})


def _klog(msg: str, err: str) -> str:
    return f'E0821 09:40:14.123456       1 reflector.go:204] {json.dumps(msg)} err={json.dumps(err)} type="*v1alpha1.TrainJob"'


def _forbidden(verb="list", resource="trainjobs", group="trainer.kubeflow.org", namespace="", user=SA) -> str:
    plural = f"{resource.split('/')[0]}.{group}" if group else resource.split("/")[0]
    where = f'in the namespace "{namespace}"' if namespace else "at the cluster scope"
    return (f'failed to list *v1alpha1.TrainJob: {plural} is forbidden: User "{user}" cannot {verb} resource '
            f'"{resource}" in API group "{group}" {where}')


# -- the three causes, in the real shapes --------------------------------------------------------
@pytest.mark.parametrize("wrap", [lambda e: e, lambda e: _zap("Failed to watch", e), lambda e: _klog("Failed to watch", e)],
                         ids=["plain", "zap", "klog"])
def test_a_stored_object_the_controller_cannot_decode_is_found_and_named(wrap):
    cluster = FakeCluster([_trainjob("tj-two", {"numProcPerNode": 2}), _trainjob("tj-auto", {"numProcPerNode": "auto"})])
    found = explainer(cluster, "2.2.0")(["I0821 starting", wrap(DECODE), "I0821 retrying"])
    assert (found.reason, found.final) == ("CannotDecode", True)
    assert found.message == ('the controller cannot read TrainJob bar-s/tj-auto: spec.trainer.numProcPerNode is "auto", '
                             'the v2.2.0 API wants an integer (`trainerctl upgrade-check`)')
    assert found.line == DECODE


def test_a_decode_cause_counts_the_others_and_without_them_is_named_but_not_final():
    many = [_trainjob(f"tj-{i}", {"numProcPerNode": "gpu" if i % 2 else "auto"}) for i in range(6)]
    found = explainer(FakeCluster(many))([DECODE])
    assert found.message.startswith("the controller cannot read TrainJob bar-s/tj-0 (and 5 more TrainJob(s) like it): "
                                    'spec.trainer.numProcPerNode is "auto", its API wants an integer')
    gone = explainer(FakeCluster([_trainjob("ok", {"numProcPerNode": 1})]))([DECODE])
    assert (gone.final, gone.message) == (False, "the controller cannot read the stored TrainJobs: "
                                          "spec.trainer.numProcPerNode holds a string, its API wants an integer "
                                          "(`trainerctl upgrade-check` names them)")


def test_an_out_of_range_number_is_matched_by_its_value():
    line = DECODE.replace("unmarshal string", "unmarshal number 3000000000")
    objects = [_trainjob("small", {"numProcPerNode": 7}), _trainjob("big", {"numProcPerNode": 3000000000})]
    found = explainer(FakeCluster(objects), "v2.2.0")([line])
    assert found.message == ("the controller cannot read TrainJob bar-s/big: spec.trainer.numProcPerNode is 3000000000, "
                             "the v2.2.0 API wants an integer that fits int32 (`trainerctl upgrade-check`)")


@pytest.mark.parametrize("error,message", [
    ('failed to decode config file: strict decoding error: unknown field "statusServer"',
     'the controller rejects its configuration file: unknown field "statusServer", which its release does not know '
     '(are its image and its config from different releases?)'),
    ('failed to decode config file: strict decoding error: unknown field "statusServer", unknown field "tls"',
     'the controller rejects its configuration file: unknown field "statusServer", "tls", which its release does not '
     'know (are its image and its config from different releases?)'),
    ("invalid configuration: webhook.port: Invalid value: 70000: must be between 1 and 65535",
     "the controller rejects its configuration: webhook.port: Invalid value: 70000: must be between 1 and 65535"),
    ("failed to read config file: open /etc/config/config.yaml: no such file or directory",
     "the controller cannot read its configuration file: open /etc/config/config.yaml: no such file or directory"),
])
def test_a_configuration_the_controller_rejects_is_named(error, message):
    found = explainer(FakeCluster())([_zap("Unable to load configuration", error)])
    assert (found.reason, found.message, found.final, found.line) == ("ConfigRejected", message, True, error)


@pytest.mark.parametrize("kwargs,where", [
    ({}, "list trainjobs.trainer.kubeflow.org at the cluster scope"),
    ({"verb": "update", "resource": "trainjobs/status"}, "update trainjobs/status.trainer.kubeflow.org at the cluster scope"),
    ({"verb": "get", "resource": "secrets", "group": "", "namespace": "kubeflow-system"},
     "get secrets in namespace kubeflow-system"),
])
def test_a_permission_the_controller_lacks_is_asked_of_the_api_server(kwargs, where):
    cluster = FakeCluster(allowed=False)
    found = explainer(cluster)([_klog("Failed to watch", _forbidden(**kwargs))])
    assert (found.reason, found.final) == ("Forbidden", True)
    assert found.message == f"the controller may not {where} (user {SA}): its RBAC lacks the permission"
    [review] = cluster.reviews
    assert review["user"] == SA and "system:serviceaccounts:kubeflow-system" in review["groups"]
    attributes = review["resourceAttributes"]
    assert attributes["verb"] == kwargs.get("verb", "list")
    assert attributes["resource"] == kwargs.get("resource", "trainjobs").split("/")[0]
    assert attributes.get("subresource", "") == kwargs.get("resource", "").partition("/")[2]


def test_a_forbidden_line_older_than_the_grant_is_no_cause_and_an_unconfirmed_one_is_not_final():
    line = _klog("Failed to watch", _forbidden())
    assert explainer(FakeCluster(allowed=True))([line, line, line]) is None
    unconfirmed = explainer(FakeCluster(review_fails=True))([line])
    assert unconfirmed.final is False and unconfirmed.message.endswith("(the log says so; whether it still does could "
                                                                       "not be asked)")


def test_the_newest_cause_wins_and_a_repeated_line_is_judged_once():
    cluster = FakeCluster([_trainjob("tj-auto", {"numProcPerNode": "auto"})], allowed=False)
    forbidden = _klog("Failed to watch", _forbidden())
    assert explainer(cluster)([forbidden, _zap("Failed to watch", DECODE)]).reason == "CannotDecode"
    assert explainer(cluster)([_zap("Failed to watch", DECODE), *[forbidden] * 50]).reason == "Forbidden"
    assert len(cluster.reviews) == 1  # fifty lines, one review: a look judges a cause once


def test_lines_without_a_cause_are_none():
    lines = ["I0821 09:40:12 starting manager", _zap("Reconciler error", "the object has been modified"),
             '{"level":"info","msg":"forbidden word in a message"}', "cannot unmarshal (nothing else)"]
    assert explainer(FakeCluster())(lines) is None


REAL = Path(__file__).resolve().parents[1] / "support" / "controller_logs"  # the real v2.2.0 controller's


@pytest.mark.parametrize("log,reason,message", [
    ("cannot-decode-v2.2.0.log", "CannotDecode",
     'the controller cannot read TrainJob bar-s/tj-auto: spec.trainer.numProcPerNode is "auto", the v2.2.0 API wants '
     "an integer (`trainerctl upgrade-check`)"),
    ("config-rejected-v2.2.0.log", "ConfigRejected",
     'the controller rejects its configuration file: unknown field "noSuchField", which its release does not know '
     "(are its image and its config from different releases?)"),
    ("forbidden-v2.2.0.log", "Forbidden",
     "the controller may not list clustertrainingruntimes.trainer.kubeflow.org at the cluster scope (user "
     "testenv-restricted): its RBAC lacks the permission"),
])
def test_what_the_real_controller_logged_is_named(log, reason, message):
    text = (REAL / log).read_text()
    for lines in (text.splitlines(), log_lines(text)):  # as logged, and as the diagnosis reads them (cut, masked)
        cluster = FakeCluster([_trainjob("tj-auto", {"numProcPerNode": "auto"})], allowed=False)
        found = explainer(cluster, "2.2.0")(lines)
        assert (found.reason, found.message, found.final) == (reason, message, True)
        assert found.line.startswith("failed to ")  # the error it quotes, unwrapped from its JSON line
    if reason == "Forbidden":  # a user that is no ServiceAccount: in every authenticated user's group only
        assert cluster.reviews[0]["groups"] == ["system:authenticated"]


# -- the diagnosis carries it -------------------------------------------------------------------------
def _pod(state: dict) -> Pod:
    return Pod.read({"metadata": {"name": "p", "namespace": "ns", "uid": "u"},
                     "spec": {"containers": [{"name": "manager", "image": "example.com/c:v1"}]},
                     "status": {"phase": "Running", "containerStatuses": [{"name": "manager", **state}]}})


def test_a_log_cause_replaces_the_crash_and_the_readiness_failure_it_explains():
    asked = []

    def log_cause(pod, container, previous):
        asked.append((pod, container, previous))
        return LogCause("ConfigRejected", "the controller rejects its configuration: x", "the line")

    crashed = _pod({"restartCount": 1, "state": {"waiting": {"reason": "CrashLoopBackOff"}},
                    "lastState": {"terminated": {"exitCode": 1, "reason": "Error"}}})
    [cause] = pod_causes(crashed, [], lambda p, c: ["unread"], None, log_cause)
    assert (cause.kind, cause.reason, cause.final, cause.exit_code, cause.restarts) == ("log", "ConfigRejected", True, 1, 1)
    assert cause.text() == cause.headline() == "the controller rejects its configuration: x"
    assert cause.lines() == [cause.text(), "  | the line"] and Cause.from_dict(cause.to_dict()) == cause
    unready = _pod({"ready": False, "restartCount": 0, "state": {"running": {}}})
    [cause] = pod_causes(unready, [], lambda p, c: [], None, log_cause)
    assert cause.kind == "log"
    assert asked == [("p", "manager", True), ("p", "manager", False)]  # the crashed container's log: the previous one
    assert pod_causes(unready, [], lambda p, c: [], None, lambda *a: None) == []  # no probe event, no cause


# -- properties -------------------------------------------------------------------------------------
_NAME = st.from_regex(r"[a-z]([-a-z0-9]{0,20}[a-z0-9])?", fullmatch=True)
_WRAPS = st.sampled_from(["plain", "zap", "klog", "zap-in-klog", "klog-in-zap"])


def _wrapped(error: str, how: str) -> str:
    if how == "zap":
        return _zap("Failed to watch", error)
    if how == "klog":
        return _klog("Failed to watch", error)
    if how == "zap-in-klog":
        return _klog("Reconciler error", _zap("Failed to watch", error))
    if how == "klog-in-zap":
        return _zap("Reconciler error", _klog("Failed to watch", error))
    return error


@given(_NAME, _NAME, st.sampled_from(["list", "watch", "get", "create", "update", "patch", "delete"]),
       st.sampled_from(["", "trainer.kubeflow.org", "jobset.x-k8s.io", "coordination.k8s.io"]),
       st.one_of(st.just(""), _NAME), _WRAPS, st.text(max_size=60), st.text(max_size=60))
@PROPERTY
def test_a_forbidden_line_is_found_whatever_surrounds_it(account, resource, verb, group, namespace, how, before, after):
    user = f"system:serviceaccount:ns:{account}"
    line = before + _wrapped(_forbidden(verb, resource, group, namespace, user), how) + after
    assume("\n" not in line and "\r" not in line)  # one line of a log
    where = f"in namespace {namespace}" if namespace else "at the cluster scope"
    plural = f"{resource}.{group}" if group else resource
    for lines in ([line], log_lines(line)):  # as logged, and as the diagnosis reads it (cut, masked)
        found = explainer(FakeCluster())(lines)
        assert found is not None and found.reason == "Forbidden", (line, found)
        assert found.message == (f"the controller may not {verb} {plural} {where} (user {user}): its RBAC lacks the "
                                 "permission")


_KEY = st.from_regex(r"[a-z][a-zA-Z0-9]{0,12}", fullmatch=True)
_JSON_VALUES = {"string": st.text(max_size=20), "number": st.integers(-2**40, 2**40), "bool": st.booleans(),
                "array": st.lists(st.integers(), max_size=3), "object": st.dictionaries(_KEY, st.integers(), max_size=2)}


@given(st.lists(_KEY, min_size=1, max_size=5), st.sampled_from(sorted(_JSON_VALUES)), st.data(),
       st.booleans(), _WRAPS)
@PROPERTY
def test_the_object_holding_the_described_json_type_at_the_field_is_the_one_named(path, kind, data, in_list, how):
    """Go names the field without list indices: an object whose value of that JSON type sits in a
    list on the way is found too; one holding another type there is not."""
    bad = data.draw(_JSON_VALUES[kind])
    other = data.draw(st.sampled_from([k for k in sorted(_JSON_VALUES) if k != kind]))
    good = data.draw(_JSON_VALUES[other])

    def holding(value):  # a list on the way (never the field's own value: that is the value)
        inner = value
        for key in reversed(path[1:]):
            inner = {key: inner}
        return {path[0]: [inner] if in_list and len(path) > 1 else inner}

    objects = [{"metadata": {"name": "fine", "namespace": "ns"}, "spec": holding(good)},
               {"metadata": {"name": "bad", "namespace": "ns"}, "spec": holding(bad)}]
    error = (f"failed to list *v1alpha1.TrainJob: json: cannot unmarshal {kind} into Go struct field "
             f"X.items.spec.{'.'.join(path)} of type int32")
    found = explainer(FakeCluster(objects))([_wrapped(error, how)])
    assert found.final and found.message.startswith("the controller cannot read TrainJob ns/bad: spec."
                                                    + ".".join(path) + " is "), found


@given(st.text(max_size=300), st.binary(max_size=300))
@PROPERTY
def test_no_line_breaks_the_reader_and_every_message_is_one_printable_bounded_line(text, data):
    lines = [text, data.decode("utf-8", "replace"), "\\" * 50 + text, "{" + text + "}",
             _zap(text, _forbidden(user="system:serviceaccount:ns:" + "x" * 2000)),
             _klog(text, DECODE.replace("Trainer.items", text.replace(" ", "") + ".items"))]
    cluster = FakeCluster([_trainjob("\x1b[31mred\u202e" + "n" * 500, {"numProcPerNode": "\x1b]52;c;evil\x07"})])
    found = explainer(cluster)(lines)
    for cause in [found, explainer(cluster)([lines[-1]]), explainer(cluster)([lines[-2]])]:
        if cause is not None:
            for part in (cause.message, cause.line):
                assert part.isprintable() and len(part) <= 1200, part


def test_texts_unwrap_level_by_level():
    inner = 'User "u" cannot list'
    line = _zap("m", json.dumps({"error": inner}))
    assert inner in texts(line)
    found = texts(r'err="a \"quoted\" word"')
    assert found[0] == r'err="a \"quoted\" word"' and {'err="a "quoted" word"', 'a "quoted" word'} <= set(found)
    assert all(isinstance(t, str) for t in texts("".join(string.printable) * 3))


# -- the wait ---------------------------------------------------------------------------------------
def test_the_wait_reads_logs_after_a_short_while_and_stops_at_a_final_log_cause(monkeypatch):
    """Logs are asked for from READ_LOGS_AFTER on; a final cause found there ends the wait at once
    (exit 1), a cause that is not final is named and waited out (exit 4)."""
    from tests.support.clock import FakeClock
    from trainerctl.cluster.manager import wait
    from trainerctl.cluster.manager.diagnose import Diagnosis

    def item(final: bool) -> tuple[wait.Pending, list]:
        asked: list = []

        def diagnose(logs: bool) -> Diagnosis:
            asked.append((clock.now - start, logs))
            causes = [Cause("log", "Forbidden", "Pod ns/p", "the controller may not list x", final=final)] if logs else []
            return Diagnosis("Deployment", "ns", "d", causes)

        return wait.Pending("Deployment ns/d", lambda: (False, "", "not available"), diagnose=diagnose), asked

    clock = FakeClock()
    monkeypatch.setattr(wait, "time", clock)
    start = clock.now
    pending, asked = item(final=True)
    with pytest.raises(wait.RolloutFailed) as failed:
        wait.wait_all([pending], 180)
    assert str(failed.value).startswith("Deployment ns/d: the controller may not list x, which will not recover by "
                                        "itself (its log names the cause); stopped waiting after ")
    assert all(logs == (at >= wait.READ_LOGS_AFTER) for at, logs in asked) and asked[-1][1]
    assert clock.now - start < 10  # seconds on the wait's own clock, not its 180
    pending, asked = item(final=False)
    with pytest.raises(wait.RolloutTimeout) as timed_out:
        wait.wait_all([pending], 30)
    assert "Deployment ns/d: the controller may not list x" in str(timed_out.value)
