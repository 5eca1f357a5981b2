"""The install lock (a Lease) on the real API server: one holder at a time, waits that name the
holder, expiry of a dead holder, loss, release on Ctrl-C; and who a holder says it is.

The CLI-level tests (two real `trainerctl install` processes at once, one of them killed) are in
tests/cluster/test_lock_installs.py; these exercise the Lease protocol itself with short durations.
"""

from __future__ import annotations

import json
import threading
from datetime import datetime

import pytest

from tests.support.clock import FakeClock
from tests.support.waiting import wait_until

from tests.support.actions import session
from trainerctl.cluster.operations import install_lock, lock_lease
from trainerctl.cluster.client.client import connect
from trainerctl.cluster.operations.install_lock import Lock, LockLost, LockTimeout
from trainerctl.cluster.operations.lock_holder import Holder, ci_identity, holder_from_env
from trainerctl.cluster.operations.lock_lease import lease_path
from trainerctl.settings import FIELD_MANAGER


@pytest.mark.parametrize("env, expected", [
    ({"GITHUB_RUN_ID": "42", "GITHUB_RUN_ATTEMPT": "2", "GITHUB_REPOSITORY": "org/repo", "GITHUB_JOB": "deploy"},
     "GitHub Actions org/repo run 42 attempt 2 job deploy"),
    ({"CI_JOB_ID": "7", "CI_PIPELINE_ID": "3", "CI_PROJECT_PATH": "g/p", "GITLAB_CI": "true"},
     "GitLab CI g/p pipeline 3 job 7"),
    ({"PIPELINE_RUN": "deploy-x7", "TASKRUN": "deploy-x7-install"},
     "Tekton PipelineRun deploy-x7 TaskRun deploy-x7-install"),
    ({"BUILD_URL": "https://jenkins.example/job/deploy/12/"}, "Jenkins https://jenkins.example/job/deploy/12/"),
    ({"BUILDKITE_BUILD_ID": "b-1", "BUILDKITE_JOB_ID": "j-2"}, "Buildkite build b-1 job j-2"),
    ({"CIRCLE_BUILD_URL": "https://circleci.com/gh/o/r/9"}, "CircleCI https://circleci.com/gh/o/r/9"),
    ({"BUILD_BUILDID": "5", "BUILD_REPOSITORY_NAME": "r"}, "Azure Pipelines r build 5"),
    ({"CI": "true"}, ""),
    ({}, ""),
])
def test_ci_identity_names_the_job(env, expected):
    assert ci_identity(env) == expected


def test_holder_says_user_host_pid_command_and_ci():
    holder = holder_from_env("install", {"GITHUB_RUN_ID": "9", "GITHUB_REPOSITORY": "o/r"})
    import os

    assert holder.pid == os.getpid() and holder.host and holder.user
    assert holder.describe() == f"{holder.user}@{holder.host} pid {holder.pid} (install, GitHub Actions o/r run 9)"
    assert holder.identity.endswith(f" #{holder.token}")
    assert holder_from_env("install", {}).token != holder.token  # one per run


def test_lease_state_reads_the_annotation_and_survives_a_foreign_lease():
    holder = Holder("ann", "h1", 12, "uninstall")
    lease = {"metadata": {"annotations": {lock_lease.HOLDER_ANNOTATION: holder.annotation()}, "resourceVersion": "5"},
             "spec": {"holderIdentity": holder.identity, "acquireTime": "2026-08-21T09:40:12.000000Z",
                      "leaseDurationSeconds": 30}}
    state = lock_lease.LeaseState.of(lease)
    assert state.held and state.description == "ann@h1 pid 12 (uninstall)"
    assert state.since().startswith("since 2026-08-21T09:40:12Z (")
    foreign = lock_lease.LeaseState.of({"metadata": {"annotations": {lock_lease.HOLDER_ANNOTATION: "{nope"}},
                                      "spec": {"holderIdentity": "someone-else"}})
    assert foreign.description == "someone-else" and foreign.since() == "since an unknown time"
    # Server text in every waiting line: cut like any (a 1 MB holder, a 2000-character host).
    huge = lock_lease.LeaseState.of({"metadata": {}, "spec": {"holderIdentity": "H" * (1 << 20)}})
    assert huge.holder == "H" * (1 << 20) and huge.description == "H" * 1000 + " …(cut)"
    host = Holder("ann", "h" * 2000, 12, "install")
    far = lock_lease.LeaseState.of({"metadata": {"annotations": {lock_lease.HOLDER_ANNOTATION: host.annotation()}},
                                  "spec": {"holderIdentity": host.identity}})
    assert len(far.description) == 1000 + len(" …(cut)") and far.description.startswith("ann@hhh")


# -- a Lease that does not fit its view ------------------------------------------------------------
class _OneLease:
    """An API server holding one Lease as given, of any shape (a real one refuses to store these):
    updates guarded by resourceVersion, as the API server guards them."""

    def __init__(self, lease: dict | None):
        self.lease, self.writes, self.server = lease, [], "https://fake"

    def get_or_none(self, path):
        return json.loads(json.dumps(self.lease)) if self.lease is not None else None

    def request(self, method, path, body=None, query=None):
        from trainerctl.cluster.client.client import ApiError

        self.writes.append(method)
        current = (self.lease or {}).get("metadata", {}).get("resourceVersion") if isinstance(self.lease, dict) else None
        if method == "POST":
            if self.lease is not None:
                raise ApiError(409, "AlreadyExists", "exists")
        elif method in ("PUT", "DELETE"):
            wanted = (body.get("metadata") or {}).get("resourceVersion") if method == "PUT" else \
                body["preconditions"]["resourceVersion"]
            if self.lease is None or wanted != current:
                raise ApiError(409, "Conflict", "changed")
            if method == "DELETE":
                self.lease = None
                return {}
        self.lease = json.loads(json.dumps(body))
        self.lease["metadata"].update(resourceVersion=str(int(current or 0) + 100), uid="uid-lease")
        return self.get_or_none(path)

    def resume(self):
        pass


BAD_SPECS = {"an acquire time without a zone": {"acquireTime": "2026-01-01T00:00:00"},
             "a duration of 'abc'": {"leaseDurationSeconds": "abc"},
             "an infinite duration": {"leaseDurationSeconds": json.loads("1e400")},
             "a duration of 10^400": {"leaseDurationSeconds": 10 ** 400},
             "a list as holder": {"holderIdentity": ["a", "b"], "acquireTime": 12345},
             "transitions of 'abc'": {"leaseTransitions": "abc", "leaseDurationSeconds": 2}}


def _bad_lease(spec: dict, rv: str | None = "7") -> dict:
    meta = {"name": "trainerctl-lock", "namespace": "ns", **({"resourceVersion": rv} if rv else {})}
    return {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": meta,
            "spec": {"holderIdentity": "ci@runner pid 1 #abc", "leaseDurationSeconds": 20,
                     "acquireTime": "2026-01-01T00:00:00.000000Z", **spec}}


@pytest.mark.parametrize("spec", BAD_SPECS.values(), ids=list(BAD_SPECS))
def test_a_lease_that_cannot_be_read_is_waited_for_with_the_lock_codes(spec, monkeypatch):
    """Nobody can be named as its holder: the run waits as for any holder, says why in its lines,
    and times out with the lock's code (4), nothing written; the field is in the line."""
    server = _OneLease(_bad_lease(spec))
    messages: list[str] = []
    monkeypatch.setattr(install_lock, "time", FakeClock())
    with pytest.raises(LockTimeout) as timed_out:
        Lock(server, "ns", Holder("me", "h", 2, "install"), field_manager=FIELD_MANAGER,
             on_message=messages.append).acquire(5)
    line = str(timed_out.value)
    assert timed_out.value.exit_code == 4 and "\n" not in line
    assert line.startswith("timed out after 5s waiting for the install lock (Lease ns/trainerctl-lock), which cannot "
                           "be read (unreadable Lease ns/trainerctl-lock: spec."), line
    assert line.endswith("nothing was changed (if no run holds it, delete the Lease: "
                         "docs/lock.md#one-run-at-a-time-the-install-lock)"), line
    assert server.writes == ["POST"]  # the create that found it; nothing after
    assert messages[0].startswith("waiting for the install lock (Lease ns/trainerctl-lock): it cannot be read "
                                  "(unreadable Lease ns/trainerctl-lock: spec.")


@pytest.mark.parametrize("spec", BAD_SPECS.values(), ids=list(BAD_SPECS))
def test_a_lease_that_cannot_be_read_and_stays_unchanged_is_taken_over(spec, monkeypatch):
    """No trainerctl run can renew it (its renewal reads it back and loses the lock): unchanged for
    the lock's own duration, as watched from here, it is taken over by an update guarded by its
    resourceVersion, and the run says so."""
    server = _OneLease(_bad_lease(spec))
    messages: list[str] = []
    clock = FakeClock()
    monkeypatch.setattr(install_lock, "time", clock)
    started = clock.now
    taker = Lock(server, "ns", Holder("me", "h", 2, "install"), field_manager=FIELD_MANAGER,
                 on_message=messages.append, renew_every=3600)
    taker.acquire(30)
    assert lock_lease.DURATION_SECONDS <= clock.now - started < lock_lease.DURATION_SECONDS + 1.1
    assert server.writes == ["POST", "PUT"] and server.lease["metadata"]["resourceVersion"] == "107"
    assert server.lease["spec"]["holderIdentity"] == taker.holder.identity
    assert server.lease["spec"]["leaseTransitions"] == 1  # the old count cannot be read: counted from 0
    [took] = [m for m in messages if m.startswith("took over")]
    assert "it could not be read (unreadable Lease ns/trainerctl-lock: spec." in took and "unchanged for 20s" in took
    taker.release()
    assert server.lease is None


def test_a_lease_without_a_readable_version_is_never_taken(monkeypatch):
    """Without a resourceVersion neither a change can be seen nor a take guarded: only the wait."""
    for meta in ({"resourceVersion": 7}, {"labels": ["x"], "resourceVersion": "7"}):
        lease = _bad_lease({"leaseDurationSeconds": "abc"})
        lease["metadata"].update(meta)
        server = _OneLease(lease)
        monkeypatch.setattr(install_lock, "time", FakeClock())
        with pytest.raises(LockTimeout):
            Lock(server, "ns", Holder("me", "h", 2, "install"), field_manager=FIELD_MANAGER).acquire(60)
        assert server.writes == ["POST"]


def test_a_holder_whose_lease_becomes_unreadable_has_lost_the_lock(monkeypatch):
    server = _OneLease(None)
    held = Lock(server, "ns", Holder("me", "h", 2, "install"), field_manager=FIELD_MANAGER, renew_every=3600)
    held.acquire(0)
    server.lease = _bad_lease({"leaseDurationSeconds": "abc"}, rv="999")  # edited by someone
    assert held.renew() is False
    with pytest.raises(LockLost) as lost:
        held.check()
    assert lost.value.exit_code == 1 and "the Lease no longer fits (unreadable Lease" in str(lost.value)


# -- on the API server --------------------------------------------------------------------
@pytest.fixture
def cluster(test_cluster):
    return connect(str(test_cluster.admin_kubeconfig))


def _lock(cluster, namespace, who: str, messages: list | None = None, **kwargs) -> Lock:
    kwargs.setdefault("duration", 3)
    kwargs.setdefault("renew_every", 0.5)
    kwargs.setdefault("poll_every", 0.1)
    return Lock(cluster, namespace, Holder(who, "host", 1, "install"), field_manager=FIELD_MANAGER,
                on_message=(messages.append if messages is not None else None), **kwargs)



@pytest.mark.cluster
def test_second_taker_waits_names_the_holder_and_times_out(cluster, namespace, monkeypatch):
    messages: list[str] = []
    with _lock(cluster, namespace, "first").acquire(0):
        lease = cluster.request("GET", lease_path(namespace))
        assert lease["spec"]["holderIdentity"].startswith("first@host pid 1 (install) #")
        assert lock_lease.read(session(cluster, namespace)).description == "first@host pid 1 (install)"
        clock = FakeClock()
        monkeypatch.setattr(install_lock, "time", clock)
        started = clock.now
        with pytest.raises(LockTimeout) as timed_out:
            _lock(cluster, namespace, "second", messages).acquire(1.5)
        # It gave up at its deadline: not before, and not a poll (0.1 s) later.
        assert 1.5 <= clock.now - started < 1.6, clock.now - started
        monkeypatch.undo()
        assert lock_lease.read(session(cluster, namespace)).description == "first@host pid 1 (install)"  # still held
    line = str(timed_out.value)
    assert line.startswith(f"timed out after 1.5s waiting for the install lock (Lease {namespace}/trainerctl-lock) "
                           "held by first@host pid 1 (install) since ")
    assert line.endswith("nothing was changed (wait longer with --lock-timeout)")
    assert timed_out.value.exit_code == 4
    assert messages and messages[0].startswith(f"waiting for the install lock (Lease {namespace}/trainerctl-lock): "
                                               "held by first@host pid 1 (install) since ")
    # Released: the Lease is gone, and nobody holds the lock.
    assert cluster.get_or_none(lease_path(namespace)) is None
    assert lock_lease.read(session(cluster, namespace)) is None


@pytest.mark.cluster
def test_a_waiter_takes_the_lock_when_the_holder_releases_it(cluster, namespace):
    messages: list[str] = []
    first = _lock(cluster, namespace, "first").acquire(0)
    got: list[Lock] = []
    waiter = threading.Thread(target=lambda: got.append(_lock(cluster, namespace, "second", messages).acquire(20)))
    waiter.start()
    wait_until(lambda: messages, 20, "the second to wait for the lock")
    assert not got
    first.release()
    waiter.join(20)
    assert got and got[0].acquired.waited_for == "first@host pid 1 (install)"
    assert not got[0].acquired.took_over_from
    assert messages[-1].startswith("took the install lock after waiting ")
    assert lock_lease.read(session(cluster, namespace)).description == "second@host pid 1 (install)"
    got[0].release()


@pytest.mark.cluster
def test_many_takers_at_once_hold_it_one_at_a_time(cluster, namespace):
    """Optimistic concurrency: creates and updates race, the API server lets one win each time."""
    inside: list[str] = []
    overlaps: list[tuple[str, str]] = []
    guard = threading.Lock()
    errors: list[BaseException] = []
    names = [f"t{i}" for i in range(6)]
    state = dict.fromkeys(names, "starting")  # then waiting, inside, done

    def waits(who: str, line: str) -> None:
        if line.startswith("waiting for the install lock") and state[who] == "starting":
            state[who] = "waiting"

    def contended(who: str) -> bool:
        """Someone else waits for the lock `who` holds, or nobody is left to."""
        others = [state[n] for n in names if n != who]
        return "waiting" in others or all(s == "done" for s in others)

    def run(who: str) -> None:
        try:
            lock = Lock(cluster, namespace, Holder(who, "host", 1, "install"), duration=3, renew_every=0.5,
                        poll_every=0.1, field_manager=FIELD_MANAGER, on_message=lambda line: waits(who, line))
            with lock.acquire(60):
                with guard:
                    if inside:
                        overlaps.append((inside[-1], who))
                    inside.append(who)
                state[who] = "inside"
                wait_until(lambda: contended(who), 60, f"another taker to wait while {who} holds the lock")
                with guard:
                    inside.remove(who)
            state[who] = "done"
        except BaseException as exc:  # noqa: BLE001 - reported below
            state[who] = "done"
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(who,)) for who in names]
    for t in threads:
        t.start()
    for t in threads:
        t.join(90)
    assert not errors, errors
    assert not overlaps, overlaps


@pytest.mark.cluster
def test_a_dead_holders_lease_is_taken_once_expired_and_the_taker_says_so(cluster, namespace, monkeypatch):
    dead = _lock(cluster, namespace, "dead").acquire(0)
    dead._stop.set()  # the process died: no renewal, no release
    dead._thread.join()
    messages: list[str] = []
    clock = FakeClock()
    monkeypatch.setattr(install_lock, "time", clock)
    taker = _lock(cluster, namespace, "taker", messages).acquire(30)
    monkeypatch.undo()
    waited = taker.acquired.waited_seconds
    assert 3 <= waited < 3.2, waited  # its duration (3s), watched from here: taken a poll after it expired
    assert taker.acquired.took_over_from == "dead@host pid 1 (install)"
    took = [m for m in messages if m.startswith("took over the install lock")]
    assert len(took) == 1 and "from dead@host pid 1 (install)" in took[0] and "stopped renewing" in took[0]
    lease = cluster.request("GET", lease_path(namespace))
    assert lease["spec"]["leaseTransitions"] == 1
    taker.release()


@pytest.mark.cluster
def test_a_holder_that_lost_the_lease_stops_before_writing_more(cluster, namespace):
    holder = _lock(cluster, namespace, "slow", renew_every=60).acquire(0)
    lease = cluster.request("GET", lease_path(namespace))
    other = Holder("other", "h2", 2, "install")
    lease["spec"]["holderIdentity"] = other.identity
    lease["metadata"]["annotations"][lock_lease.HOLDER_ANNOTATION] = other.annotation()
    cluster.request("PUT", lease_path(namespace), body=lease)  # it expired and another run took it
    holder.check()  # nothing noticed yet
    assert holder.renew() is False
    with pytest.raises(LockLost) as lost:
        holder.check()
    assert "other@h2 pid 2 (install) holds it now" in str(lost.value)
    holder.release()  # not ours any more: left alone
    assert cluster.request("GET", lease_path(namespace))["spec"]["holderIdentity"] == other.identity


@pytest.mark.cluster
def test_renewals_keep_it_and_ctrl_c_releases_it(cluster, namespace):
    with pytest.raises(KeyboardInterrupt):
        with _lock(cluster, namespace, "ctrl-c", duration=2, renew_every=0.3) as held:
            held.acquire(0)
            first = cluster.request("GET", lease_path(namespace))["spec"]["renewTime"]
            renewed = wait_until(lambda: (cluster.request("GET", lease_path(namespace))["spec"]["renewTime"] != first
                                          and cluster.request("GET", lease_path(namespace))["spec"]), 20, "a renewal")
            # Renewed before it would have expired (duration 2 s), by the times the Lease records.
            age = datetime.fromisoformat(renewed["renewTime"]) - datetime.fromisoformat(first)
            assert age.total_seconds() < 2, age
            raise KeyboardInterrupt
    assert cluster.get_or_none(lease_path(namespace)) is None


@pytest.mark.cluster
@pytest.mark.parametrize("where", ["_hold", "_start_renewing"])
def test_a_signal_between_the_create_and_holding_it_deletes_the_lease(cluster, namespace, monkeypatch, where):
    """SIGTERM right after our create went through, before the caller holds the lock (before its
    answer is read, or before renewing starts): the Lease is deleted, not left to expire."""
    def interrupted(self, *args):
        raise KeyboardInterrupt

    monkeypatch.setattr(Lock, where, interrupted)
    with pytest.raises(KeyboardInterrupt):
        _lock(cluster, namespace, "signalled").acquire(0)
    assert cluster.get_or_none(lease_path(namespace)) is None
    monkeypatch.undo()

    class Interrupting(list):  # the signal comes while waiting for another holder
        def append(self, message):
            raise KeyboardInterrupt

    with _lock(cluster, namespace, "other").acquire(0) as other:
        with pytest.raises(KeyboardInterrupt):
            _lock(cluster, namespace, "waiting", Interrupting()).acquire(5)
        # A Lease that is not the interrupted taker's is left alone.
        assert cluster.request("GET", lease_path(namespace))["spec"]["holderIdentity"] == other.holder.identity


@pytest.mark.cluster
def test_first_install_creates_the_namespace_for_the_lock(cluster, test_cluster):
    import secrets

    ns = f"t-missing-{secrets.token_hex(3)}"
    made: list[str] = []

    def ensure() -> None:
        made.append(ns)
        cluster.request("POST", "/api/v1/namespaces", body={"apiVersion": "v1", "kind": "Namespace",
                                                             "metadata": {"name": ns}})

    with _lock(cluster, ns, "first", ensure_namespace=ensure).acquire(0):
        assert made == [ns]
        assert cluster.get_or_none(lease_path(ns)) is not None


def test_lock_timeout_flag_default_and_bad_values(capsys):
    from trainerctl.cli import main
    from trainerctl.cluster.install import InstallOptions
    from trainerctl.cluster.uninstall import UninstallOptions
    from trainerctl.settings import LOCK_TIMEOUT, Settings

    # The flag's default is what install and uninstall wait for the lock when not told.
    assert Settings().lock_timeout == InstallOptions().lock_timeout == UninstallOptions().lock_timeout \
        == LOCK_TIMEOUT == 600
    for command in ("install", "uninstall"):
        for bad in ("-1", "nan", "inf"):
            assert main([command, "--lock-timeout", bad, "--kubeconfig", "/nonexistent"]) == 2
            err = capsys.readouterr().err
            assert err.count("\n") == 1 and err.startswith("error: ") and "--lock-timeout" in err, err
