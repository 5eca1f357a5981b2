"""Fresh installs with honest waits, time-outs, no-op re-installs."""

from __future__ import annotations

import json

import pytest
import yaml

from tests.support.cluster import FakeController, kubeflow_objects, odh_objects, prepare_cluster_for_odh, KF_NS, ODH_NS, live_objects, managers
from tests.support.waiting import finishes_within, wait_until
from tests.support.actions import install
from trainerctl.cluster.client.client import connect
from trainerctl.cluster.install import InstallOptions, RunFailed
from trainerctl.errors import EXIT_TIMEOUT
from trainerctl.ui import Progress


class _ReadyOnceWaitedFor(Progress):
    """The controller comes up only once the install waits for it in the webhooks stage."""

    def __init__(self, fake: FakeController, count: int):
        super().__init__(count, enabled=False)
        self.fake, self.current, self.waited_for = fake, "", []

    def stage(self, name: str, count: int) -> None:
        self.current = name
        super().stage(name, count)

    def waiting(self, what: str, seconds: float, **more) -> None:
        if self.current == "webhooks" and not self.fake.ready:
            self.waited_for.append(what)
            self.fake.ready = True
        super().waiting(what, seconds, **more)


def test_fresh_odh_install_waits_for_controller_then_admits_runtimes(env):
    prepare_cluster_for_odh(env.cluster)
    objects = odh_objects()
    fake = FakeController(env, objects, ready=False)
    with fake:
        progress = _ReadyOnceWaitedFor(fake, len(objects))
        report = install(objects, cluster=env.cluster, namespace=ODH_NS, options=InstallOptions(timeout=60),
                         progress=progress)
    # The runtimes waited for the controller: it came up only while the install waited for it.
    assert progress.waited_for and fake.ready
    assert report.counts() == {"created": len(objects) + 1}  # + the namespace we ensure
    webhooks = next(s for s in report.stages if s.name == "webhooks")
    # How long depends on how fast the earlier stages ran; that it waited at all is the point.
    assert webhooks.waited_seconds > 0
    live = live_objects(env, report)
    assert all(v is not None for v in live.values()), [k for k, v in live.items() if v is None]
    assert all("trainerctl" in managers(v) for v in live.values())
    runtimes = [k for k in live if "/ClusterTrainingRuntime/" in k]
    assert len(runtimes) == 15
    # Admitted through the (fake) controller's webhook with failurePolicy Fail, not around it.
    assert sum("clustertrainingruntime" in c and "CREATE" in c for c in fake.calls) >= 15
    # Cluster-scoped runtimes lost the namespace kustomize put on them.
    assert all(k.split("/")[2] == "" for k in runtimes)


def test_fresh_kubeflow_install_with_bundled_jobset(env):
    objects = kubeflow_objects()
    with FakeController(env, objects):
        report = install(objects, cluster=env.cluster, namespace=KF_NS, options=InstallOptions(timeout=60))
    assert report.counts() == {"created": len(objects)}  # the overlay has its Namespace
    live = live_objects(env, report)
    assert all(v is not None and "trainerctl" in managers(v) for v in live.values())
    assert env.get("/apis/apiextensions.k8s.io/v1/customresourcedefinitions/jobsets.jobset.x-k8s.io")


def test_unready_controller_times_out_with_exit_4_and_no_runtimes(env):
    prepare_cluster_for_odh(env.cluster)
    objects = odh_objects()
    # Each wait gets the whole time-out; it must be long enough for the CRDs to be Established on
    # a loaded machine, so that it is the Deployment wait that trips.
    with FakeController(env, objects, ready=False):
        with pytest.raises(RunFailed) as info:
            # Each wait is bounded by the time-out: the install gives up by itself (the deadline
            # here only catches a wait that never ends).
            finishes_within(120, "an install whose controller never gets ready", lambda: install(
                objects, cluster=env.cluster, namespace=ODH_NS, options=InstallOptions(timeout=10)))
    assert info.value.exit_code == EXIT_TIMEOUT
    assert "timed out after 10s" in str(info.value)
    assert "Deployment opendatahub/kubeflow-trainer-controller-manager" in str(info.value)
    assert env.get("/apis/trainer.kubeflow.org/v1alpha1/clustertrainingruntimes/torch-distributed") is None


def test_rollout_failure_fails_fast_instead_of_sleeping_to_the_timeout(env):
    prepare_cluster_for_odh(env.cluster)
    objects = odh_objects()
    with FakeController(env, objects, ready=False, fail=True):
        with pytest.raises(RunFailed) as info:
            # Failing fast is the outcome: exit 1 naming the rollout failure, not the time-out's
            # exit 4; the deadline, half the time-out, catches a run that sleeps to it.
            finishes_within(60, "an install whose rollout failed", lambda: install(
                objects, cluster=env.cluster, namespace=ODH_NS, options=InstallOptions(timeout=120)))
    assert info.value.exit_code == 1
    assert "ProgressDeadlineExceeded" in str(info.value)


def test_reinstall_without_changes_changes_nothing(env):
    prepare_cluster_for_odh(env.cluster)
    objects = odh_objects()
    with FakeController(env, objects) as fake:
        first = install(objects, cluster=env.cluster, namespace=ODH_NS, options=InstallOptions(timeout=60))
        wait_until(fake.settled, 30, "the fake cert rotator and deployment controller to settle")
        before = {k: v["metadata"]["resourceVersion"] for k, v in live_objects(env, first).items()}
        second = install(objects, cluster=env.cluster, namespace=ODH_NS, options=InstallOptions(timeout=60))
        third = install(objects, cluster=env.cluster, namespace=ODH_NS, options=InstallOptions(timeout=60))
        after = {k: v["metadata"]["resourceVersion"] for k, v in live_objects(env, third).items()}
    assert second.changed == 0 and third.changed == 0
    assert set(second.counts()) == {"unchanged"}
    assert before == after


def test_a_noop_reinstall_writes_only_its_lock_and_asks_nothing_twice(env, monkeypatch):
    """What a no-op costs is its requests (docs/benchmarks.md): besides the lock's create and
    delete it only reads, never the same thing twice, and no more reads than the list below."""
    objects = kubeflow_objects()
    with FakeController(env, objects) as fake:
        install(objects, cluster=env.cluster, namespace=KF_NS, options=InstallOptions(timeout=60))
        wait_until(fake.settled, 30, "the fake cert rotator and deployment controller to settle")
        install(objects, cluster=env.cluster, namespace=KF_NS, options=InstallOptions(timeout=60))  # records their rvs
        wait_until(fake.settled, 30, "the fake controller to settle again")
        cluster = connect(env.kubeconfig)  # its own connection: the fake controller's reads are not counted
        sent: list[tuple[str, str]] = []
        send = cluster.transport.request

        def request(method, target, **kwargs):
            sent.append((method, target))
            return send(method, target, **kwargs)

        monkeypatch.setattr(cluster.transport, "request", request)
        report = install(objects, cluster=cluster, namespace=KF_NS, options=InstallOptions(timeout=60))
    assert set(report.counts()) == {"unchanged"}
    lease = f"/apis/coordination.k8s.io/v1/namespaces/{KF_NS}/leases"
    writes = [(method, target.split("?")[0]) for method, target in sent if method != "GET"]
    assert writes == [("POST", lease), ("DELETE", f"{lease}/trainerctl-lock")]  # the lock is created, not read first
    reads = [target for method, target in sent if method == "GET"]
    assert len(reads) == len(set(reads)), sorted(r for r in reads if reads.count(r) > 1)
    # version, discovery (2), inventory, the Go operator (CR, 2 Deployment lists), Helm (2 record
    # lists), the install namespace, one labelled list per resource and namespace (13), the
    # controllers' Deployments (2), webhook Services (2) and their EndpointSlices (2), the history.
    assert len(reads) <= 30, "\n".join(sorted(reads))


def test_cli_install_json_summary_and_timeout_exit_code(env, tmp_path, capsys):
    from trainerctl.cli import main

    prepare_cluster_for_odh(env.cluster)
    objects = odh_objects()
    rendered = tmp_path / "render.yaml"
    rendered.write_text(yaml.safe_dump_all(objects))
    with FakeController(env, objects, ready=False):  # long enough for the CRDs under load (see above)
        code = main(["install", "-f", str(rendered), "--kubeconfig", env.kubeconfig, "--timeout", "10", "-o", "json"])
    captured = capsys.readouterr()
    assert code == EXIT_TIMEOUT
    assert "error: timed out after 10s" in captured.err
    assert "Deployment opendatahub/kubeflow-trainer-controller-manager" in captured.err
    # Not a terminal: one plain line per event on stderr, the JSON summary alone on stdout.
    assert "stage crds: 3 object(s)" in captured.err
    assert "CustomResourceDefinition.apiextensions.k8s.io trainjobs.trainer.kubeflow.org created" in captured.err
    assert json.loads(captured.out)["summary"]["created"] == 17
    with FakeController(env, objects):
        code = main(["install", "-f", str(rendered), "--kubeconfig", env.kubeconfig, "-o", "json"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    summary = json.loads(captured.out)
    # Exactly the runtimes, left out by the timed-out run, change now (named, so a flake says which).
    changed = sorted(f'{o["kind"]}/{o["name"]}' for o in summary["objects"] if o["action"] != "unchanged")
    runtimes = sorted(f'{o["kind"]}/{o["metadata"]["name"]}' for o in objects if o["kind"].endswith("TrainingRuntime"))
    assert changed == runtimes and summary["summary"]["changed"] == 15
    assert {s["name"] for s in summary["stages"]} >= {"crds", "webhooks", "admitted"}
    assert all(o["action"] in ("created", "unchanged") for o in summary["objects"])


def test_ctrl_c_stops_cleanly_and_says_what_was_applied(env):
    import _thread

    from trainerctl.errors import EXIT_INTERRUPTED
    from trainerctl.ui import Progress

    prepare_cluster_for_odh(env.cluster)
    objects = odh_objects()
    class CtrlCWhileWaitingForController(Progress):
        """Ctrl-C once the install waits for the controller (a fixed delay lands in the CRD stage under load)."""

        def stage(self, name: str, count: int) -> None:
            self.current = name
            super().stage(name, count)

        def waiting(self, what: str, seconds: float, **more) -> None:
            if getattr(self, "current", "") == "webhooks" and not getattr(self, "sent", False):
                self.sent = True
                _thread.interrupt_main()  # arrives in the main thread, which is in the wait
            super().waiting(what, seconds, **more)

    with FakeController(env, objects, ready=False):
        with pytest.raises(RunFailed) as info:
            install(objects, cluster=env.cluster, namespace=ODH_NS, options=InstallOptions(timeout=60),
                    progress=CtrlCWhileWaitingForController(len(objects), enabled=False))
    assert info.value.exit_code == EXIT_INTERRUPTED
    assert "interrupted during stage webhooks; so far: 17 created; re-run to converge" in str(info.value)


def test_cli_renders_rhoai_with_our_runtimes_installs_and_reinstalls_as_noop(env, capsys, tmp_path, monkeypatch):
    """`trainerctl install --source CHECKOUT`: the full pipeline, render included, against the cluster."""
    from tests.support.cluster import require_shared
    from trainerctl.cli import main
    from trainerctl.render import RenderOptions, render

    checkout = require_shared() / "upstream" / "opendatahub-trainer" / "odh-3.5.0"
    monkeypatch.chdir(tmp_path)  # no trainerctl.lock from elsewhere
    prepare_cluster_for_odh(env.cluster)
    rendered = render(RenderOptions(source_path=checkout)).objects
    args = ["install", "--source", str(checkout), "--kubeconfig", env.kubeconfig, "-o", "json"]
    with FakeController(env, rendered):
        assert main(args) == 0, capsys.readouterr().err
        first = json.loads(capsys.readouterr().out)
        assert main(args) == 0, capsys.readouterr().err
        second = json.loads(capsys.readouterr().out)
    assert first["summary"]["created"] == len(rendered) + 1
    assert second["summary"] == {"changed": 0, "unchanged": len(rendered) + 1}
    assert first["source"]["trainer_version"] == "2.1.0" and first["source"]["digest"].startswith("sha256:")
    ours = [o for o in rendered if o["kind"] == "ClusterTrainingRuntime"]
    for o in ours:
        assert env.get(f"/apis/trainer.kubeflow.org/v1alpha1/clustertrainingruntimes/{o['metadata']['name']}")
    assert main(["status", "--kubeconfig", env.kubeconfig, "-o", "json"]) == 0
    st = json.loads(capsys.readouterr().out)
    assert st["trainerVersion"] == "2.1.0" and st["summary"] == {"present": len(rendered) + 1}
    assert st["releases"] == [{"name": "Kubeflow Trainer", "version": "2.1.0",
                               "repoUrl": "https://github.com/kubeflow/trainer"}]
    # A local source is named by its path, never `?`; recorded resolved (../shared may be a link).
    manifests = (checkout / "manifests").resolve()
    assert st["source"]["path"] == str(manifests)
    assert main(["status", "--kubeconfig", env.kubeconfig]) == 0
    assert capsys.readouterr().out.startswith(f"source: {manifests} (local checkout, overlay rhoai)")
