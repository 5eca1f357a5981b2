"""`trainerctl verify` on the real controllers: a healthy install passes, and each way users'
installs break is named in the one error line.

One install of v2.3.0 for the module; each test breaks one link of it the way it breaks on users'
clusters, runs verify, and restores the link before the next test (fixture `restored`). The
breaks are real: the Trainer Deployment scaled to 0 (its webhook has no endpoints), the JobSet
controller scaled to 0 (the Trainer controller's JobSet create fails at JobSet's webhook), a
namespace enforcing the restricted Pod Security level.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys

import pytest

from tests.support import e2e as h
from tests.support.e2e import KF_NS, TRAINER
from tests.testenv.api import ApiError

LABEL = "verify.trainerctl.io/run"
TRAINER_SERVICE = "kubeflow-trainer-controller-manager"
FAULT_TIMEOUT = "20"


@pytest.fixture(scope="module", autouse=True)
def installed(tctl, api):
    h.cleanup_trainer(tctl, api)
    report = tctl.install("v2.3.0")
    assert report["summary"].get("failed", 0) == 0, report
    yield
    h.cleanup_trainer(tctl, api)


def _scale(api, name: str, replicas: int) -> None:
    h.merge_patch(api, f"/apis/apps/v1/namespaces/{KF_NS}/deployments/{name}/scale", {"spec": {"replicas": replicas}})


def _probe_error(api) -> str:
    """What the API server says now to a dry-run TrainJob ("" when it is admitted)."""
    try:
        h.dry_run_create(api, f"{TRAINER}/namespaces/default/trainjobs", h.trainjob("probe", "default", suspend=True))
    except ApiError as exc:
        return exc.body
    return ""


@pytest.fixture
def restored(api):
    """After the test: both controllers at one replica and Trainer's webhook admitting again."""
    yield
    for name in (h.TRAINER_DEPLOYMENT, h.JOBSET_DEPLOYMENT):
        _scale(api, name, 1)
    _patch_target_port(api, "webhook")
    for name in (h.TRAINER_DEPLOYMENT, h.JOBSET_DEPLOYMENT):
        h.wait_until(lambda name=name: h.deployment_available(api, KF_NS, name), 120, f"{name} available again")
    h.wait_until(lambda: not _probe_error(api), 60, "Trainer's webhook to admit again")


def _patch_target_port(api, target) -> None:
    api.request("PATCH", f"/api/v1/namespaces/{KF_NS}/services/{TRAINER_SERVICE}",
                {"spec": {"ports": [{"port": 443, "targetPort": target}]}},
                content_type="application/strategic-merge-patch+json")


def _verify(tctl, *args: str, expect: int):
    return tctl.run("verify", "-n", KF_NS, "-o", "json", *args, expect=expect)


def _error_line(proc) -> str:
    lines = [line for line in proc.stderr.splitlines() if line.startswith("error: ")]
    assert len(lines) == 1, proc.stderr
    return lines[0]


def _leftovers(api) -> list[str]:
    found = [f"Namespace {n['metadata']['name']}" for n in
             api.request("GET", "/api/v1/namespaces", query={"labelSelector": LABEL}).get("items") or []]
    found += [f"TrainJob {j['metadata']['namespace']}/{j['metadata']['name']}" for j in
              api.request("GET", f"{TRAINER}/trainjobs", query={"labelSelector": LABEL}).get("items") or []]
    return found


def test_a_healthy_install_passes_every_tier_runs_a_trainjob_and_leaves_nothing(tctl, api):
    report = json.loads(_verify(tctl, "--run", expect=0).stdout)
    results = report["results"]
    assert {(r["tier"], r["status"]) for r in results} == {
        ("admission", "ok"), ("reconcile", "ok"), ("run", "ok"), ("consumers", "ok")}, report
    runtimes = api.request("GET", f"{TRAINER}/clustertrainingruntimes")["items"]
    assert len([r for r in results if r["tier"] == "admission"]) == len(runtimes)
    phases = [r["check"] for r in results if r["tier"] == "run"]
    assert phases == ["TrainJob admitted", "JobSet created", "pods created", "pods scheduled", "pods running",
                      "TrainJob complete"], phases
    assert all(isinstance(r.get("seconds"), (int, float)) for r in results if r["tier"] == "run")
    [sdk] = [r for r in results if r["tier"] == "consumers"]
    assert "says v2.3.0" in sdk["message"], sdk
    assert _leftovers(api) == []


def test_a_restricted_namespace_names_each_rejected_runtime_and_the_pod_security_reason(tctl, api):
    ns = "e2e-verify-restricted"
    api.request("POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {
        "name": ns, "labels": {"pod-security.kubernetes.io/enforce": "restricted"}}})
    try:
        proc = _verify(tctl, "--job-namespace", ns, expect=1)
        results = [r for r in json.loads(proc.stdout)["results"] if r["tier"] == "namespace"]
        runtimes = api.request("GET", f"{TRAINER}/clustertrainingruntimes")["items"]
        assert len(results) == len(runtimes), results
        for r, runtime in zip(results, sorted(runtimes, key=lambda o: o["metadata"]["name"])):
            assert r["status"] == "fail" and f"ClusterTrainingRuntime {runtime['metadata']['name']}" in r["check"], r
            assert 'violates PodSecurity "restricted' in r["message"], r
        error = _error_line(proc)
        assert error.startswith("error: verify namespace: pods of ClusterTrainingRuntime ") and \
            "violates PodSecurity" in error, error
        assert _leftovers(api) == []
        # check says the same of the rendered runtimes, before an install.
        proc = tctl.run("check", *tctl.source_args("v2.3.0"), "--job-namespace", ns, "-o", "json", expect=3)
        found = [f for f in json.loads(proc.stdout)["findings"] if f["check"] == "namespace-admission"]
        assert found and all(f["status"] == "fail" and "violates PodSecurity" in f["message"] for f in found), found
    finally:
        api.request("DELETE", f"/api/v1/namespaces/{ns}")


def test_trainer_webhook_without_endpoints_is_named(tctl, api, restored):
    _scale(api, h.TRAINER_DEPLOYMENT, 0)
    h.wait_until(lambda: not h.trainer_pods(api), 60, "no trainer pod")
    h.wait_until(lambda: _probe_error(api), 60, "Trainer's webhook to fail")
    error = _error_line(_verify(tctl, "--timeout", FAULT_TIMEOUT, expect=1))
    assert "verify admission:" in error and "trainjob.trainer.kubeflow.org" in error, error
    assert f"Service {KF_NS}/{TRAINER_SERVICE}:443: no endpoints" in error, error
    assert _leftovers(api) == []


def test_jobset_stopped_fails_reconcile_naming_jobset_and_a_killed_verify_is_cleaned_up(tctl, api, restored):
    _scale(api, h.JOBSET_DEPLOYMENT, 0)
    h.wait_until(lambda: not h.pods(api, KF_NS, "app.kubernetes.io/name=jobset"), 60, "no JobSet pod")
    # A verify terminated mid-run (its TrainJob made, the JobSet waited for) deletes its own
    # objects before it exits; one killed leaves them...
    cmd = [sys.executable, "-m", "trainerctl", "verify", "-n", KF_NS, "--timeout", "120",
           "--kubeconfig", tctl.kubeconfig]
    for sig in (signal.SIGTERM, signal.SIGKILL):
        proc = subprocess.Popen(cmd, cwd=tctl.workdir, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        try:
            h.wait_until(lambda: any(x.startswith("TrainJob") for x in _leftovers(api)), 60, "verify's TrainJob")
            proc.send_signal(sig)
            _, err = proc.communicate(timeout=30)
        finally:
            proc.kill()
        if sig == signal.SIGTERM:
            assert proc.returncode == 130, err
            h.wait_until(lambda: not _leftovers(api), 60, "what the terminated verify made to go")
    assert _leftovers(api), "the killed verify left nothing to clean up"
    # ... and the next verify deletes them, and fails naming JobSet.
    proc = _verify(tctl, "--timeout", FAULT_TIMEOUT, expect=1)
    error = _error_line(proc)
    assert "verify reconcile:" in error and "was not created" in error, error
    assert "JobSet's admission failed" in error and "jobset" in error.split("admission failed", 1)[1], error
    assert "no endpoints" in error, error
    assert any("left by an earlier verify" in c for c in json.loads(proc.stdout)["cleanup"]), proc.stdout
    h.wait_until(lambda: not _leftovers(api), 60, "nothing of either verify left")
