"""`trainerctl verify` on the real controllers: a healthy install passes, and each way users'
installs break is named in the one error line.

One install of v2.3.0 for the module; each test breaks one link of it the way it breaks on users'
clusters, runs verify, and restores the link before the next test (fixture `restored`). The
breaks are real: the Trainer Deployment scaled to 0 (its webhook has no endpoints), its webhook
Service pointed at a port nobody serves (the service proxy then refuses, as kube-proxy does), a
caBundle that does not sign the webhook's certificate with Trainer's own rotator turned off, the
JobSet controller scaled to 0 (the Trainer controller's JobSet create fails at JobSet's webhook),
a namespace enforcing the restricted Pod Security level.
"""

from __future__ import annotations

import base64
import dataclasses
import json
import re
import signal
import subprocess
import sys

import pytest
import yaml

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


def _restart_trainer(api) -> None:
    """A new Trainer controller pod, ready and the only endpoint of its Service. (The Deployment's
    status may still count the old pod as available; the EndpointSlice is what the proxy and the
    API server go by.)"""
    old = {p["metadata"]["name"] for p in h.trainer_pods(api)}
    for name in old:
        api.request("DELETE", f"/api/v1/namespaces/{KF_NS}/pods/{name}")

    def serving() -> bool:
        pods = h.trainer_pods(api)
        if not pods or old & {p["metadata"]["name"] for p in pods} or \
                not all(h.condition(p, "Ready") == "True" for p in pods):
            return False
        slices = api.request("GET", f"/apis/discovery.k8s.io/v1/namespaces/{KF_NS}/endpointslices",
                             query={"labelSelector": f"kubernetes.io/service-name={TRAINER_SERVICE}"})["items"]
        ready = {a for sl in slices for ep in sl.get("endpoints") or []
                 if (ep.get("conditions") or {}).get("ready") for a in ep.get("addresses") or []}
        return ready == {p["status"].get("podIP") for p in pods}

    h.wait_until(serving, 120, "a new trainer pod, ready and the Service's endpoint")


def test_webhook_service_on_an_unserved_port_is_connection_refused(tctl, api, restored):
    _patch_target_port(api, 9999)
    # The API server's kept-alive connection to the pod outlives the Service change, as conntrack
    # keeps an established connection on any cluster; a new pod ends it, and every new dial of
    # the Service reaches a port nobody listens on: refused.
    _restart_trainer(api)
    h.wait_until(lambda: "connection refused" in _probe_error(api), 60, "the webhook Service to refuse")
    error = _error_line(_verify(tctl, "--timeout", FAULT_TIMEOUT, expect=1))
    assert "verify admission:" in error and "trainjob.trainer.kubeflow.org" in error, error
    assert f"Service {KF_NS}/{TRAINER_SERVICE}:443: connection refused" in error, error
    assert "targetPort" in error, error
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


def _cert_rotation(api, enable: bool) -> None:
    """Trainer's own certificate rotator on or off (its config's certManagement.enable), then a
    new controller pod that reads it. Off, the controller serves the certificate it finds in its
    Secret and no longer writes any webhook configuration's caBundle."""
    path = f"/api/v1/namespaces/{KF_NS}/configmaps/kubeflow-trainer-config"
    [(key, text)] = [(k, v) for k, v in api.request("GET", path)["data"].items() if "certManagement:" in v]
    head, _, tail = text.partition("certManagement:")
    tail = re.sub(r"enable: (true|false)", f"enable: {str(enable).lower()}", tail, count=1)
    h.merge_patch(api, path, {"data": {key: f"{head}certManagement:{tail}"}})
    _restart_trainer(api)


def _set_ca_bundles(api, bundle: str) -> None:
    for resource, name in h.TRAINER_WEBHOOKS:
        path = f"/apis/admissionregistration.k8s.io/v1/{resource}/{name}"
        hooks = api.request("GET", path)["webhooks"]
        api.request("PATCH", path, [{"op": "replace", "path": f"/webhooks/{i}/clientConfig/caBundle", "value": bundle}
                                    for i in range(len(hooks))], content_type="application/json-patch+json")


def test_a_ca_bundle_that_does_not_sign_the_webhook_certificate_is_named(tctl, api, restored):
    _cert_rotation(api, False)
    try:
        h.wait_until(lambda: not _probe_error(api), 60, "Trainer's webhook to admit with the rotator stopped")
        from tests.support.hostile_api import self_signed

        _set_ca_bundles(api, base64.b64encode(self_signed()[0]).decode())  # a CA nobody signed it with
        h.wait_until(lambda: "x509" in _probe_error(api), 30, "the API server to distrust the webhook")
        error = _error_line(_verify(tctl, "--timeout", FAULT_TIMEOUT, expect=1))
        assert "verify admission:" in error and "trainjob.trainer.kubeflow.org" in error, error
        assert f"Service {KF_NS}/{TRAINER_SERVICE}:443: x509: certificate signed by unknown authority" in error, error
        assert "caBundle" in error and "no endpoints" not in error, error
        assert _leftovers(api) == []
    finally:
        _cert_rotation(api, True)  # the rotator puts its CA back into every webhook configuration


# What the default tiers need and nothing more (docs/verify.md, Permissions): the rest only
# explains a failure, reports consumers or sweeps what a killed verify left, and goes on without.
LEAST = [
    {"apiGroups": ["trainer.kubeflow.org"], "resources": ["clustertrainingruntimes"], "verbs": ["list"]},
    {"apiGroups": ["trainer.kubeflow.org"], "resources": ["trainjobs"], "verbs": ["create"]},
    {"apiGroups": [""], "resources": ["namespaces"], "verbs": ["create", "delete"]},
    {"apiGroups": ["jobset.x-k8s.io"], "resources": ["jobsets"], "verbs": ["get"]},
]


def _as_service_account(api, tctl, rules: list[dict]) -> h.Trainerctl:
    """trainerctl as a ServiceAccount granted `rules` cluster-wide, and nothing else."""
    name, ns = "e2e-verify-least", "e2e-verify-rbac"
    if api.get_or_none(f"/api/v1/namespaces/{ns}") is None:
        api.request("POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
    if api.get_or_none(f"/api/v1/namespaces/{ns}/serviceaccounts/{name}") is None:
        api.request("POST", f"/api/v1/namespaces/{ns}/serviceaccounts",
                    {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": name}})
    rbac = "/apis/rbac.authorization.k8s.io/v1"
    role = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": name},
            "rules": rules}
    binding = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding", "metadata": {"name": name},
               "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": name},
               "subjects": [{"kind": "ServiceAccount", "name": name, "namespace": ns}]}
    for path, body in ((f"{rbac}/clusterroles", role), (f"{rbac}/clusterrolebindings", binding)):
        if api.get_or_none(f"{path}/{name}") is None:
            api.request("POST", path, body)
        else:
            api.request("PUT", f"{path}/{name}", body)
    token = api.request("POST", f"/api/v1/namespaces/{ns}/serviceaccounts/{name}/token", {
        "apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {"expirationSeconds": 600}})
    config = yaml.safe_load(open(tctl.kubeconfig).read())
    config["users"][0]["user"] = {"token": token["status"]["token"]}
    path = tctl.workdir / f"{name}.kubeconfig"
    path.write_text(yaml.safe_dump(config))
    return dataclasses.replace(tctl, kubeconfig=str(path))


@pytest.fixture
def least_privileged_cleanup(api):
    yield
    rbac = "/apis/rbac.authorization.k8s.io/v1"
    for path in (f"{rbac}/clusterrolebindings/e2e-verify-least", f"{rbac}/clusterroles/e2e-verify-least",
                 "/api/v1/namespaces/e2e-verify-rbac"):
        if api.get_or_none(path) is not None:
            api.request("DELETE", path)


def test_least_permission_passes_and_a_missing_one_is_named_before_anything_is_made(tctl, api,
                                                                                  least_privileged_cleanup):
    least = _as_service_account(api, tctl, LEAST)
    report = json.loads(_verify(least, expect=0).stdout)
    assert {r["status"] for r in report["results"] if r["tier"] != "consumers"} == {"ok"}, report
    # Deleted, though verify may not get them to wait until they are gone.
    assert all(f"deleted {x}" in report["cleanup"] for x in _leftovers(api) if x.startswith("Namespace")), report
    h.wait_until(lambda: not _leftovers(api), 60, "what the least-privileged verify deleted to be gone")
    # Without `get jobsets`: one line naming it and the tier that needs it, exit 3, nothing made.
    least = _as_service_account(api, tctl, [r for r in LEAST if r["resources"] != ["jobsets"]])
    proc = _verify(least, expect=3)
    error = _error_line(proc)
    assert error.startswith("error: verify permissions: ") and "system:serviceaccount:e2e-verify-rbac:e2e-verify-least" \
        in error, error
    assert "may not get jobsets.jobset.x-k8s.io in namespace trainerctl-verify-ns-" in error, error
    assert "reconcile tier" in error, error
    assert [r["tier"] for r in json.loads(proc.stdout)["results"] if r["status"] != "ok"][0] == "permissions"
    assert _leftovers(api) == []
