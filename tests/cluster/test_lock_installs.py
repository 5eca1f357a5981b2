"""Concurrent `trainerctl install` runs of different Trainer releases hold the install lock in
turn, a killed holder's lock is taken once it expires, and each run says what it really did.

Each test gets a fresh kube-apiserver and runs trainerctl as separate processes, as two CI jobs
would: kubeflow/trainer v2.2.0 and v2.3.0 `overlays/manager` with our runtimes, rendered from
../shared (JobSet's release file served over loopback), with the fake controller of the install
tests answering the webhooks and marking the Deployments available. Afterwards every live object
must equal one render (never a mix of the two), the inventory and `status` must name that render,
and each run's exit code and output must tell the truth.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from tests.support.waiting import wait_until
from tests.support.actions import session
from trainerctl.defaults import LOCK_TIMEOUT
from trainerctl.cluster.operations.install_lock import Lock, create_namespace, holder_from_env, lease_path
from trainerctl.settings import FIELD_MANAGER

pytestmark = pytest.mark.cluster

NS = "kubeflow-system"
VERSIONS = ("v2.2.0", "v2.3.0")


@pytest.fixture(scope="module")
def served(shared_dir, tmp_path_factory):
    from tests.support import remotes

    work = tmp_path_factory.mktemp("lock-remotes")
    server = remotes.start(shared_dir, work)
    yield shared_dir, server.mirrors[:1], work
    server.stop()


@dataclass
class Run:
    version: str
    proc: subprocess.Popen
    out: str = ""
    err: str = ""

    def finish(self, timeout: float = 240) -> "Run":
        self.out, self.err = self.proc.communicate(timeout=timeout)
        return self

    @property
    def code(self) -> int:
        return self.proc.returncode

    @property
    def report(self) -> dict:
        return json.loads(self.out)


class Runner:
    def __init__(self, env, served):
        self.env = env
        self.shared, self.mirrors, self.workdir = served

    def args(self, version: str) -> list[str]:
        args = ["--source", str(self.shared / "upstream" / "kubeflow-trainer" / version), "--overlay",
                "overlays/manager", "-n", NS]
        for mirror in self.mirrors:
            args += ["--remote-mirror", mirror]
        return args

    def _env(self) -> dict:
        env = {k: v for k, v in os.environ.items() if k not in ("KUBECONFIG",) and not k.startswith("GITHUB_")}
        env.update(NO_COLOR="1", CI="true")
        return env

    def start(self, command: str, version: str | None, *extra: str) -> Run:
        cmd = [sys.executable, "-m", "trainerctl", command, *(self.args(version) if version else ["-n", NS]),
               *extra, "--kubeconfig", self.env.kubeconfig]
        proc = subprocess.Popen(cmd, cwd=self.workdir, env=self._env(), stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL)
        return Run(version or "", proc)

    def install(self, version: str, *extra: str) -> Run:
        return self.start("install", version, "--timeout", "120", "-o", "json", *extra)

    def render(self, version: str) -> list[dict]:
        proc = subprocess.run([sys.executable, "-m", "trainerctl", "render", *self.args(version)], cwd=self.workdir,
                              env=self._env(), capture_output=True, text=True, check=True)
        return [d for d in yaml.safe_load_all(proc.stdout) if d]


@pytest.fixture
def runner(env, served):
    from tests.support.cluster import FakeController

    runner = Runner(env, served)
    # Both releases name the same Deployments, webhooks and Services: one fake controller serves either.
    with FakeController(env, render(runner, "v2.3.0")):
        yield runner


_RENDERS: dict[str, list[dict]] = {}


def render(runner: Runner, version: str) -> list[dict]:
    if version not in _RENDERS:
        _RENDERS[version] = runner.render(version)
    return _RENDERS[version]


def _path(cluster, obj: dict) -> str | None:
    from trainerctl.cluster.client.client import object_path
    from trainerctl.cluster.client.discovery import Discovery

    res = Discovery(cluster).lookup(obj["apiVersion"], obj["kind"])
    if res is None:
        return None
    ns = (obj["metadata"].get("namespace") or NS) if res.namespaced else None
    return object_path(res.group, res.version, res.resource, ns, obj["metadata"]["name"])


def _matches(rendered, live) -> bool:
    """Every rendered field is live with the rendered value (the API server adds defaults)."""
    if isinstance(rendered, dict):
        return isinstance(live, dict) and all(k in live and _matches(v, live[k]) for k, v in rendered.items())
    if isinstance(rendered, list):
        return isinstance(live, list) and len(rendered) == len(live) and all(map(_matches, rendered, live))
    return rendered == live


def _comparable(obj: dict) -> dict:
    """The fields our apply owns (as objects.prepare sends them), status left out."""
    body = {k: v for k, v in obj.items() if k not in ("status",)}
    meta = body.get("metadata") or {}
    body["metadata"] = {k: v for k, v in meta.items() if k in ("labels", "annotations")}
    if obj.get("kind") == "Secret":
        body.pop("data", None)
    if obj.get("kind", "").endswith("WebhookConfiguration"):
        body["webhooks"] = [{**h, "clientConfig": {k: v for k, v in h["clientConfig"].items() if k != "caBundle"}}
                            for h in obj.get("webhooks") or []]
    return body


def which_render(env, runner) -> str:
    """The one render every live object equals; fails on a mix."""
    renders = {v: render(runner, v) for v in VERSIONS}
    verdicts: dict[str, set[str]] = {}
    for version, objects in renders.items():
        for obj in objects:
            path = _path(env.cluster, obj)
            live = env.get(path) if path else None
            if live is not None and _matches(_comparable(obj), live):
                verdicts.setdefault(f"{obj['kind']}/{obj['metadata']['name']}", set()).add(version)
    # Objects equal in both releases say nothing; every one that differs must agree on one.
    telling = {k: v for k, v in verdicts.items() if len(v) == 1}
    assert telling, "no live object tells the two releases apart"
    winners = {next(iter(v)) for v in telling.values()}
    assert len(winners) == 1, f"the cluster is a mix of {sorted(winners)}: " + \
        ", ".join(f"{k}={sorted(v)}" for k, v in sorted(telling.items())[:12])
    winner = winners.pop()
    missing = [f"{o['kind']}/{o['metadata']['name']}" for o in renders[winner]
               if f"{o['kind']}/{o['metadata']['name']}" not in verdicts
               or winner not in verdicts[f"{o['kind']}/{o['metadata']['name']}"]]
    assert not missing, f"live objects differ from the {winner} render: {missing[:12]}"
    return winner


def recorded_source(env) -> dict:
    inv = session(env.cluster, NS).resources.read_inventory()
    assert inv is not None and inv.complete
    return inv.source


def status_doc(runner) -> dict:
    run = runner.start("status", None, "-o", "json").finish(60)
    assert run.code == 0, run.err + run.out
    return json.loads(run.out)


def assert_one_render(env, runner, version: str) -> None:
    """Every live object equals the `version` render; the inventory and `status` name it."""
    assert which_render(env, runner) == version
    source = recorded_source(env)
    assert f"/kubeflow-trainer/{version}/" in source.get("path", "") + "/", source
    doc = status_doc(runner)
    assert doc["source"] == source
    assert doc["summary"] == {"present": len(render(runner, version))}, doc["summary"]
    assert "lock" not in doc, doc["lock"]  # nobody holds it once every run ended


def _wait_lease(env, timeout: float = 90) -> dict:
    def held() -> dict | None:
        lease = env.get(lease_path(NS))
        return lease if lease and lease["spec"].get("holderIdentity") else None

    return wait_until(held, timeout, "a run to take the lock", interval=0.05)


def _pid_of(lease: dict) -> int:
    return json.loads(lease["metadata"]["annotations"]["trainerctl.io/lock-holder"])["pid"]


def test_two_installs_at_once_take_turns_and_the_last_one_is_what_is_live(env, runner):
    render(runner, "v2.2.0")  # rendered beforehand, for the checks
    first = runner.install("v2.2.0")  # both at once: the API server decides who creates the Lease
    second = runner.install("v2.3.0")
    runs = [first.finish(), second.finish()]
    for run in runs:
        assert run.code == 0, run.err
    waited = [r for r in runs if "waiting for the install lock" in r.err]
    assert len(waited) == 1, [r.err for r in runs]  # one went first, the other waited for it
    later, earlier = waited[0], next(r for r in runs if r is not waited[0])
    assert f"pid {earlier.proc.pid} (install" in later.err
    assert "took the install lock after waiting" in later.err
    assert later.report["lock"]["waitedSeconds"] > 0 and f"pid {earlier.proc.pid}" in later.report["lock"]["waitedFor"]
    # The earlier one created everything; the later one found it and changed what its release changes.
    # Only the Namespace may have been made by the later run: each run's lock creates it when it is
    # missing, before the Lease, and both ran at once (the earlier's apply then adds its labels).
    actions = {(o["kind"], o["name"]): o["action"] for o in earlier.report["objects"]}
    assert len(actions) == len(render(runner, earlier.version))
    assert {a for (kind, _), a in actions.items() if kind != "Namespace"} == {"created"}, actions
    assert {a for (kind, _), a in actions.items() if kind == "Namespace"} <= {"created", "configured"}, actions
    # The run whose lock made the Namespace reports it created, even when it was the later one (it
    # made it, bare, then waited); exactly one of them did.
    later_actions = {(o["kind"], o["name"]): o["action"] for o in later.report["objects"]}
    assert "created" not in {a for (kind, _), a in later_actions.items() if kind != "Namespace"}, later_actions
    assert "configured" in later_actions.values(), later_actions
    namespace_created = [a for run_actions in (actions, later_actions)
                         for (kind, _), a in run_actions.items() if kind == "Namespace" and a == "created"]
    assert len(namespace_created) == 1, (actions, later_actions)
    assert_one_render(env, runner, later.version)


def test_a_run_that_waits_too_long_changes_nothing_and_says_who_held_the_lock(env, runner):
    ci = {"GITHUB_RUN_ID": "9182", "GITHUB_RUN_ATTEMPT": "2", "GITHUB_REPOSITORY": "org/infra"}
    holder = Lock(env.cluster, NS, holder_from_env("install", ci), field_manager=FIELD_MANAGER,
                  ensure_namespace=lambda: create_namespace(session(env.cluster, NS, field_manager=FIELD_MANAGER))
                  ).acquire(0)
    try:
        who = holder.holder.describe()
        assert who.endswith("(install, GitHub Actions org/infra run 9182 attempt 2)")
        # While it is held: status shows it; read-only commands neither wait for it nor take it.
        status = runner.start("status", None, "-o", "json").finish(60)
        assert json.loads(status.out)["lock"]["holder"] == who, status.out
        text = runner.start("status", None).finish(60)
        assert f"lock: held by {who} since " in text.out, text.out
        dry = runner.install("v2.2.0", "--dry-run").finish()
        assert dry.code == 0 and "install lock" not in dry.err, dry.err
        assert env.get(lease_path(NS))["spec"]["holderIdentity"] == holder.holder.identity

        for run in (runner.install("v2.2.0", "--lock-timeout", "2").finish(),
                    runner.start("uninstall", None, "--lock-timeout", "0").finish(60)):
            assert run.code == 4, run.err
            lines = run.err.strip().splitlines()
            assert lines[-1].startswith("error: timed out after ") and f"held by {who} since " in lines[-1] \
                and lines[-1].endswith("nothing was changed (wait longer with --lock-timeout)"), run.err
            assert sum(ln.startswith("error:") for ln in lines) == 1
        assert session(env.cluster, NS).resources.read_inventory() is None  # nothing was installed
        assert env.get("/apis/apiextensions.k8s.io/v1/customresourcedefinitions/trainjobs.trainer.kubeflow.org") is None
    finally:
        holder.release()
    after = runner.install("v2.2.0").finish()
    assert after.code == 0 and "waiting for the install lock" not in after.err, after.err
    assert after.report["lock"]["waitedSeconds"] < 5
    assert_one_render(env, runner, "v2.2.0")


def test_a_killed_holder_is_taken_over_once_its_lease_expires(env, runner):
    first = runner.install("v2.2.0")
    lease = _wait_lease(env)
    assert _pid_of(lease) == first.proc.pid
    second = runner.install("v2.3.0")
    # Kill the holder mid-way: once it wrote its growing inventory and some objects.
    wait_until(lambda: session(env.cluster, NS).resources.read_inventory(), 120, "the first run to write its inventory", interval=0.05)
    first.proc.send_signal(signal.SIGKILL)
    first.finish()
    assert first.code == -signal.SIGKILL
    assert second.finish(300).code == 0, second.err
    took = [ln for ln in second.err.splitlines() if ln.startswith("took over the install lock")]
    assert len(took) == 1 and f"pid {first.proc.pid} (install" in took[0] and "stopped renewing" in took[0], second.err
    assert f"pid {first.proc.pid}" in second.report["lock"]["tookOverFrom"]
    assert_one_render(env, runner, "v2.3.0")


def test_sigterm_releases_the_lock_at_once_and_three_runs_take_turns(env, runner):
    first = runner.install("v2.3.0")
    _wait_lease(env)
    first.proc.send_signal(signal.SIGTERM)
    first.finish()
    assert first.code == 130, first.err
    assert env.get(lease_path(NS)) is None  # released, not left to expire
    runs = [runner.install("v2.3.0"), runner.install("v2.2.0"), runner.install("v2.3.0")]  # all three at once
    for run in runs:
        # The first of the list may take the lock last: it waits for both others' installs, which
        # only the lock's own timeout bounds (a bound of one install's time failed on a loaded machine).
        assert run.finish(timeout=LOCK_TIMEOUT + 240).code == 0, run.err
        assert "took over the install lock" not in run.err  # nobody had to wait for an expiry
    # Whoever took the lock last is what is live; the order they took it is in their waits.
    last = max(runs, key=lambda r: r.report["lock"]["acquireTime"])
    assert_one_render(env, runner, last.version)
