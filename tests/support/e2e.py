"""Helpers for the e2e tests: run trainerctl as a user does, read and wait on the e2e cluster.

trainerctl runs as a separate process (`python -m trainerctl`), with the upstream checkout from
../shared and the JobSet release file served from ../shared/remote, exactly as a user's CI step
would run it. The cluster is read through tests/testenv/api.py, not through trainerctl's client.
"""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from tests.support.waiting import wait_until
from tests.testenv.api import Api, ApiError

__all__ = ["wait_until"]  # the e2e modules call it as h.wait_until

KF_NS = "kubeflow-system"
TRAINER = "/apis/trainer.kubeflow.org/v1alpha1"
JOBSET = "/apis/jobset.x-k8s.io/v1alpha2"
TRAINER_DEPLOYMENT = "kubeflow-trainer-controller-manager"
JOBSET_DEPLOYMENT = "jobset-controller-manager"
TRAINER_SECRET = "kubeflow-trainer-webhook-cert"
TRAINER_WEBHOOKS = (("validatingwebhookconfigurations", "validator.trainer.kubeflow.org"),
                    ("mutatingwebhookconfigurations", "defaulter.trainer.kubeflow.org"))
JOBSET_SECRET = "jobset-webhook-server-cert"
JOBSET_WEBHOOKS = (("validatingwebhookconfigurations", "jobset-validating-webhook-configuration"),
                   ("mutatingwebhookconfigurations", "jobset-mutating-webhook-configuration"))
INSTALL_TIMEOUT = 240


@dataclass
class Trainerctl:
    """`python -m trainerctl ARGS --kubeconfig K`, from a clean working directory."""

    kubeconfig: str
    shared: Path
    mirrors: list[str]
    workdir: Path

    def source(self, version: str) -> Path:
        return self.shared / "upstream" / "kubeflow-trainer" / version

    def run(self, *args: str, expect: int | None = 0, kube: bool = True) -> subprocess.CompletedProcess:
        cmd = [sys.executable, "-m", "trainerctl", *args]
        if kube:
            cmd += ["--kubeconfig", self.kubeconfig]
        env = {k: v for k, v in os.environ.items() if k != "KUBECONFIG"}
        env["NO_COLOR"] = "1"
        proc = subprocess.run(cmd, cwd=self.workdir, env=env, capture_output=True, text=True, stdin=subprocess.DEVNULL)
        if expect is not None and proc.returncode != expect:
            raise AssertionError(f"`trainerctl {' '.join(args)}` exited {proc.returncode}, expected {expect}\n"
                                 f"--- stdout\n{proc.stdout[-4000:]}\n--- stderr\n{proc.stderr[-6000:]}")
        return proc

    def source_args(self, version: str) -> list[str]:
        args = ["--source", str(self.source(version)), "--overlay", "overlays/manager", "-n", KF_NS]
        for mirror in self.mirrors:
            args += ["--remote-mirror", mirror]
        return args

    def install(self, version: str, *extra: str) -> dict:
        """`install` with the default --wait; its JSON report."""
        proc = self.run("install", *self.source_args(version), "--timeout", str(INSTALL_TIMEOUT), "-o", "json", *extra)
        return json.loads(proc.stdout)

    def render(self, version: str, *extra: str) -> list[dict]:
        proc = self.run("render", *self.source_args(version), *extra, kube=False)
        return [d for d in yaml.safe_load_all(proc.stdout) if d]


def condition(obj: dict | None, type_: str) -> str | None:
    for c in ((obj or {}).get("status") or {}).get("conditions") or []:
        if c.get("type") == type_:
            return c.get("status")
    return None


def trainjob(name: str, namespace: str, runtime: str = "torch-distributed", num_nodes: int = 2,
             cpu: str | None = "3", suspend: bool = False) -> dict:
    """A TrainJob on a ClusterTrainingRuntime. cpu per node: with 4-CPU kwok nodes, 3 CPUs each
    means the scheduler must put every node of the job on a different kwok node."""
    trainer: dict = {"numNodes": num_nodes}
    if cpu:
        trainer["resourcesPerNode"] = {"requests": {"cpu": cpu}}
    spec = {"runtimeRef": {"name": runtime, "apiGroup": "trainer.kubeflow.org", "kind": "ClusterTrainingRuntime"},
            "trainer": trainer}
    if suspend:
        spec["suspend"] = True
    return {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob",
            "metadata": {"name": name, "namespace": namespace}, "spec": spec}


def create_namespace(api: Api, name: str) -> None:
    try:
        api.request("POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    except ApiError as exc:
        if exc.status != 409:
            raise
    # kube-controller-manager's service account controller makes `default`; pods need it.
    wait_until(lambda: api.get_or_none(f"/api/v1/namespaces/{name}/serviceaccounts/default"), 120,
               f"ServiceAccount {name}/default")


def create_trainjob(api: Api, body: dict) -> dict:
    ns = body["metadata"]["namespace"]
    return api.request("POST", f"{TRAINER}/namespaces/{ns}/trainjobs", body)


def wait_trainjob_complete(api: Api, namespace: str, name: str, timeout: float = 180.0) -> dict:
    path = f"{TRAINER}/namespaces/{namespace}/trainjobs/{name}"

    def check():
        job = api.get_or_none(path)
        if condition(job, "Failed") == "True":
            raise AssertionError(f"TrainJob {namespace}/{name} failed: {job['status']}\n{describe(api, namespace, name)}")
        return job if condition(job, "Complete") == "True" else None

    try:
        return wait_until(check, timeout, f"TrainJob {namespace}/{name} Complete")
    except AssertionError as exc:
        raise AssertionError(f"{exc}\n{describe(api, namespace, name)}") from None


def describe(api: Api, namespace: str, name: str) -> str:
    """Where a TrainJob got to: its status, its JobSet's, its Jobs' and its pods' (for failure messages)."""
    def brief(obj: dict | None, *keys: str) -> str:
        status = (obj or {}).get("status") or {}
        conds = ", ".join(f"{c.get('type')}={c.get('status')}({c.get('reason', '')})" for c in status.get("conditions") or [])
        extra = ", ".join(f"{k}={status.get(k)}" for k in keys if k in status)
        return f"[{conds}] {extra}".strip()

    lines = [f"TrainJob: {brief(api.get_or_none(f'{TRAINER}/namespaces/{namespace}/trainjobs/{name}'))}"]
    jobset = api.get_or_none(f"{JOBSET}/namespaces/{namespace}/jobsets/{name}")
    if jobset is None:
        lines.append("JobSet: absent")
    else:
        lines.append(f"JobSet: suspend={jobset['spec'].get('suspend')} {brief(jobset)}")
    selector = {"labelSelector": f"jobset.sigs.k8s.io/jobset-name={name}"}
    for job in api.request("GET", f"/apis/batch/v1/namespaces/{namespace}/jobs", query=selector).get("items") or []:
        lines.append(f"Job {job['metadata']['name']}: suspend={job['spec'].get('suspend')} "
                     f"{brief(job, 'active', 'succeeded', 'failed')}")
    for pod in api.request("GET", f"/api/v1/namespaces/{namespace}/pods", query=selector).get("items") or []:
        lines.append(f"Pod {pod['metadata']['name']}: {pod.get('status', {}).get('phase')} on {pod['spec'].get('nodeName')}")
    for event in api.request("GET", f"/api/v1/namespaces/{namespace}/events").get("items") or []:
        if event.get("type") == "Warning" and (event.get("involvedObject") or {}).get("name", "").startswith(name):
            lines.append(f"Warning {event.get('reason')} ({event.get('count') or 1}x): {(event.get('message') or '')[:300]}")
    return "\n".join(lines)


def deployment_available(api: Api, namespace: str, name: str, replicas: int = 1):
    dep = api.get_or_none(f"/apis/apps/v1/namespaces/{namespace}/deployments/{name}")
    status = (dep or {}).get("status") or {}
    ok = (condition(dep, "Available") == "True" and status.get("availableReplicas", 0) >= replicas
          and status.get("updatedReplicas", 0) >= replicas
          and status.get("observedGeneration", 0) >= dep["metadata"]["generation"]
          and status.get("replicas", 0) == replicas)
    return dep if ok else None


def cert_state(api: Api, namespace: str, secret: str, webhooks) -> dict:
    """What a cert rotator writes: the Secret's data and every webhook's caBundle (bytes as text)."""
    state = {"secret": (api.request("GET", f"/api/v1/namespaces/{namespace}/secrets/{secret}").get("data") or {})}
    for resource, name in webhooks:
        obj = api.request("GET", f"/apis/admissionregistration.k8s.io/v1/{resource}/{name}")
        state[name] = [h.get("clientConfig", {}).get("caBundle") for h in obj.get("webhooks") or []]
    return state


def pods(api: Api, namespace: str, selector: str) -> list[dict]:
    return api.request("GET", f"/api/v1/namespaces/{namespace}/pods", query={"labelSelector": selector}).get("items") or []


def dry_run_create(api: Api, path: str, body: dict) -> dict:
    return api.request("POST", path, body, query={"dryRun": "All"})


# -- what the e2e test modules share: trainerctl against the session's e2e cluster ------------
JOBS_NS = "e2e-jobs"


@pytest.fixture(scope="module")
def tctl(e2e_cluster, shared_dir, tmp_path_factory):
    from tests.support import remotes

    work = tmp_path_factory.mktemp("e2e")
    served = remotes.start(shared_dir, work)
    try:
        yield Trainerctl(str(e2e_cluster.admin_kubeconfig), shared_dir, served.mirrors[:1], work)
    finally:
        served.stop()


@pytest.fixture(scope="module")
def api(e2e_cluster):
    return e2e_cluster.api()


TRAINER_PODS = "app.kubernetes.io/name=trainer,app.kubernetes.io/component=manager"


def trainer_pods(api) -> list[dict]:
    return [p for p in pods(api, KF_NS, TRAINER_PODS) if not p["metadata"].get("deletionTimestamp")]


def cleanup_trainer(tctl, api, namespaces=(KF_NS, JOBS_NS)) -> None:
    """What test 6 proves works: uninstall with CRDs, then the namespaces go."""
    if api.get_or_none("/apis/apiextensions.k8s.io/v1/customresourcedefinitions/trainjobs.trainer.kubeflow.org") is None \
            and all(api.get_or_none(f"/api/v1/namespaces/{ns}") is None for ns in namespaces):
        return
    tctl.run("uninstall", "-n", KF_NS, "--delete-crds", "--yes")
    for ns in namespaces:
        try:
            api.request("DELETE", f"/api/v1/namespaces/{ns}")
        except ApiError as exc:
            if exc.status != 404:
                raise
    for ns in namespaces:
        wait_until(lambda ns=ns: api.get_or_none(f"/api/v1/namespaces/{ns}") is None,
                   120, f"namespace {ns} to be deleted")


def merge_patch(api, path: str, body: dict) -> dict:
    return api.request("PATCH", path, body, content_type="application/merge-patch+json")


def runtime_copy(tctl, version: str, name: str) -> dict:
    base = next(o for o in tctl.render(version, "--component", "runtimes") if o["metadata"]["name"] == "torch-distributed")
    out = copy.deepcopy(base)
    out["metadata"]["name"] = name
    return out


CONTROLLER_BINARY = "testenv-binary://trainer-controller-manager@{}"  # the testenv image of a Trainer release


def controller_runs(api, version: str) -> bool:
    """A Ready Trainer controller pod runs the testenv binary of `version`."""
    return any((p["status"].get("containerStatuses") or [{}])[0].get("imageID") == CONTROLLER_BINARY.format(version)
               and condition(p, "Ready") == "True" for p in trainer_pods(api))
