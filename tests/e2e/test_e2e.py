"""After `trainerctl install`, the real Trainer and JobSet controllers run TrainJobs.

Every test here runs on one e2e cluster per session (tests/testenv/e2e.py): kube-apiserver,
kube-controller-manager, kube-scheduler, three kwok nodes, and the real controllers, built from the
module proxy at the version each render names, run by the process kubelet from the rendered
Deployments, ConfigMaps, Secrets and ServiceAccounts. The tests run in file order: 1-3 and 5 build
on the fresh v2.3.0 install, 6 uninstalls it, then 4 and 7 start again from v2.2.0. Each test
also passes alone: what it builds on is a fixture, never an earlier test.
"""

from __future__ import annotations

import copy
import json
import os
import secrets
import signal
from pathlib import Path

import pytest

from tests.support import e2e as h
from tests.support.e2e import JOBS_NS, KF_NS, TRAINER
from tests.testenv.api import ApiError

@pytest.fixture(scope="module")
def fresh_install(tctl, api):
    """`trainerctl install` of kubeflow/trainer v2.3.0 overlays/manager plus our runtimes, with
    the default --wait; what the webhooks say right after it exits."""
    h.cleanup_trainer(tctl, api)  # fresh: whatever another module left goes first
    report = tctl.install("v2.3.0")
    h.create_namespace(api, JOBS_NS)
    # Right after exit, with no retry: both controllers' webhooks must answer.
    probes = {}
    for name, path, body in (
        ("trainjob", f"{TRAINER}/namespaces/{JOBS_NS}/trainjobs", h.trainjob("probe", JOBS_NS)),
        ("jobset", f"{h.JOBSET}/namespaces/{JOBS_NS}/jobsets", _jobset("probe", JOBS_NS)),
    ):
        try:
            probes[name] = h.dry_run_create(api, path, body)
        except ApiError as exc:
            probes[name] = exc
    return report, probes


def _jobset(name: str, namespace: str) -> dict:
    return {"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet", "metadata": {"name": name, "namespace": namespace},
            "spec": {"replicatedJobs": [{"name": "w", "replicas": 1, "template": {"spec": {"template": {"spec": {
                "restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]}}}}}]}}


def test_1_fresh_install_waits_for_the_real_webhooks_and_they_admit_our_runtimes(fresh_install, tctl, api):
    report, probes = fresh_install
    assert report["summary"].get("failed", 0) == 0, report["summary"]
    for name, result in probes.items():
        assert not isinstance(result, Exception), f"{name} webhook did not answer right after install: {result}"
    assert h.deployment_available(api, KF_NS, h.TRAINER_DEPLOYMENT)
    assert h.deployment_available(api, KF_NS, h.JOBSET_DEPLOYMENT)
    tctl.run("status", "-n", KF_NS)  # exit 0: every object present, the controllers available

    runtimes = [o for o in tctl.render("v2.3.0", "--component", "runtimes") if o["kind"] == "ClusterTrainingRuntime"]
    assert runtimes, "trainerctl renders no ClusterTrainingRuntime"
    for rendered in runtimes:
        name = rendered["metadata"]["name"]
        live = api.request("GET", f"{TRAINER}/clustertrainingruntimes/{name}")
        assert _subset(rendered["spec"], live["spec"]), name
        h.dry_run_create(api, f"{TRAINER}/clustertrainingruntimes", _judged(rendered, f"{name}-e2e-probe"))
    # The webhook really is in the path: a runtime it must refuse is refused, by it.
    bad = _judged(next(r for r in runtimes if r["metadata"]["name"] == "torch-distributed"), "e2e-invalid")
    bad["spec"]["template"]["spec"]["replicatedJobs"][0]["replicas"] = 2
    with pytest.raises(ApiError) as refused:
        h.dry_run_create(api, f"{TRAINER}/clustertrainingruntimes", bad)
    message = json.loads(refused.value.body)["message"]
    assert message.startswith('admission webhook "validator.clustertrainingruntime.trainer.kubeflow.org" denied'), message


# The Trainer validating webhook's objectSelector skips objects with this label (upstream puts it on
# its own built-in runtimes). The probes drop it, so the webhook judges every runtime's content
# whether or not the render opts out; whether install itself goes through the webhook is then
# only a question of the label, which runtimes/kustomization.yaml decides.
WEBHOOK_OPT_OUT = "trainer.kubeflow.org/webhook-validation"


def _judged(runtime: dict, name: str) -> dict:
    probe = copy.deepcopy(runtime)
    probe["metadata"]["name"] = name
    (probe["metadata"].get("labels") or {}).pop(WEBHOOK_OPT_OUT, None)
    return probe


def _subset(rendered, live) -> bool:
    """Everything rendered is live (the API server may have added defaults)."""
    if isinstance(rendered, dict):
        return isinstance(live, dict) and all(k in live and _subset(v, live[k]) for k, v in rendered.items())
    if isinstance(rendered, list):
        return isinstance(live, list) and len(rendered) == len(live) and all(map(_subset, rendered, live))
    return rendered == live


def test_2_trainjob_completes_through_the_real_controllers(fresh_install, api, e2e_cluster):
    name = "e2e-complete"
    h.create_trainjob(api, h.trainjob(name, JOBS_NS))
    jobset = h.wait_until(lambda: api.get_or_none(f"{h.JOBSET}/namespaces/{JOBS_NS}/jobsets/{name}"),
                          120, "the Trainer controller to create the JobSet")
    assert any(o.get("kind") == "TrainJob" and o.get("name") == name
               for o in jobset["metadata"].get("ownerReferences") or [])
    jobs = h.wait_until(lambda: api.request(
        "GET", f"/apis/batch/v1/namespaces/{JOBS_NS}/jobs",
        query={"labelSelector": f"jobset.sigs.k8s.io/jobset-name={name}"}).get("items"),
                        120, "the JobSet controller to create Jobs")
    assert jobs
    job = h.wait_trainjob_complete(api, JOBS_NS, name)
    assert h.condition(job, "Complete") == "True"
    done = h.pods(api, JOBS_NS, f"jobset.sigs.k8s.io/jobset-name={name}")
    assert len(done) == 2, [p["metadata"]["name"] for p in done]
    assert all(p["status"]["phase"] == "Succeeded" for p in done)
    nodes = {p["spec"]["nodeName"] for p in done}
    assert len(nodes) == 2 and nodes <= set(e2e_cluster.node_names), nodes


def test_3_noop_reinstall_keeps_what_the_cert_rotators_wrote(fresh_install, tctl, api):
    before = (h.cert_state(api, KF_NS, h.TRAINER_SECRET, h.TRAINER_WEBHOOKS),
              h.cert_state(api, KF_NS, h.JOBSET_SECRET, h.JOBSET_WEBHOOKS))
    assert before[0]["secret"].get("tls.crt") and all(before[0][n][0] for _, n in h.TRAINER_WEBHOOKS)
    report = tctl.install("v2.3.0")
    assert report["summary"]["changed"] == 0, report["summary"]
    after = (h.cert_state(api, KF_NS, h.TRAINER_SECRET, h.TRAINER_WEBHOOKS),
             h.cert_state(api, KF_NS, h.JOBSET_SECRET, h.JOBSET_WEBHOOKS))
    assert after == before
    name = f"e2e-after-noop-{secrets.token_hex(3)}"
    h.create_trainjob(api, h.trainjob(name, JOBS_NS, cpu=None, num_nodes=1))


def _evict(api, namespace: str, pod: str):
    return api.request("POST", f"/api/v1/namespaces/{namespace}/pods/{pod}/eviction",
                       {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": pod, "namespace": namespace}})


def test_5_ha_spreads_replicas_respects_the_pdb_and_survives_losing_the_leader(fresh_install, tctl, api, e2e_cluster):
    report = tctl.install("v2.3.0", "--ha")
    assert report["summary"].get("failed", 0) == 0
    h.wait_until(lambda: h.deployment_available(api, KF_NS, h.TRAINER_DEPLOYMENT, 2),
                 120, "2 available trainer replicas")
    running = h.trainer_pods(api)
    assert len(running) == 2 and len({p["spec"]["nodeName"] for p in running}) == 2, \
        [(p["metadata"]["name"], p["spec"].get("nodeName")) for p in running]

    # The disruption budget (minAvailable 1): one eviction goes through, the second is refused.
    pdb_path = f"/apis/policy/v1/namespaces/{KF_NS}/poddisruptionbudgets"
    h.wait_until(lambda: any(
        (p.get("status") or {}).get("disruptionsAllowed") == 1 for p in api.request("GET", pdb_path)["items"]),
                 120, "the PDB to allow one disruption")
    _evict(api, KF_NS, running[0]["metadata"]["name"])
    with pytest.raises(ApiError) as refused:
        _evict(api, KF_NS, running[1]["metadata"]["name"])
    assert refused.value.status == 429 and "disruption budget" in refused.value.body
    h.wait_until(lambda: h.deployment_available(api, KF_NS, h.TRAINER_DEPLOYMENT, 2) and len(h.trainer_pods(api)) == 2,
                 120, "2 available trainer replicas again")

    # Two real controller processes, one leader: kill the leader's process.
    lease_path = f"/apis/coordination.k8s.io/v1/namespaces/{KF_NS}/leases/trainer.kubeflow.org"

    def current_leader():  # controller-runtime's identity: "<hostname>_<uuid>", the hostname the pod's name
        holder = (api.get_or_none(lease_path) or {}).get("spec", {}).get("holderIdentity") or ""
        return next((p["metadata"]["name"] for p in h.trainer_pods(api) if holder.startswith(p["metadata"]["name"] + "_")),
                    None)

    leader_pod = h.wait_until(current_leader, 60, "one of the two running replicas to hold the lease")
    leader = api.get_or_none(lease_path)["spec"]["holderIdentity"]
    certs = h.cert_state(api, KF_NS, h.TRAINER_SECRET, h.TRAINER_WEBHOOKS)
    pid = e2e_cluster.pod_processes()[f"{KF_NS}/{leader_pod}"]
    os.kill(pid, signal.SIGKILL)
    # A request already on the API server's kept-alive connection to the killed process fails
    # (EOF), as on any cluster. The kernel closes that connection when the process is gone, the
    # service proxy then closes its side, and the API server drops it from its pool: wait until
    # the process is gone and a create is admitted through the webhook again.
    h.wait_until(lambda: _gone(pid), 30, f"the killed leader (pid {pid}) to be gone")
    probe = h.trainjob("e2e-ha-probe", JOBS_NS, suspend=True)
    h.wait_until(lambda: _admitted(api, f"{TRAINER}/namespaces/{JOBS_NS}/trainjobs", probe), 30,
                 "the API server to reach the webhook of the surviving replica")
    # Until a new leader holds the lease (the other replica, or the killed one restarted by its
    # kubelet: both race once the lease expires), every create must still be admitted.
    created = []

    def new_leader() -> str | None:
        h.create_trainjob(api, h.trainjob(f"e2e-ha-{len(created)}", JOBS_NS, suspend=True))
        created.append(1)
        holder = (api.get_or_none(lease_path) or {}).get("spec", {}).get("holderIdentity") or leader
        return holder if holder != leader else None

    holder = h.wait_until(new_leader, 90, f"a new leader after killing {leader}", interval=0.5)
    assert current_leader(), f"the lease went to {holder}, not a running replica"
    for i in range(5):
        h.create_trainjob(api, h.trainjob(f"e2e-ha-after-{i}", JOBS_NS, suspend=True))
    state = h.cert_state(api, KF_NS, h.TRAINER_SECRET, h.TRAINER_WEBHOOKS)
    assert state == certs, "the new leader replaced the webhook certificate or caBundle"
    ca = state["secret"]["ca.crt"]
    for _, name in h.TRAINER_WEBHOOKS:
        assert state[name] and all(bundle == ca for bundle in state[name]), name


def _gone(pid: int) -> bool:
    """The process has exited (reaped, or a zombie whose sockets the kernel has closed)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except (FileNotFoundError, ProcessLookupError):
        return True


def _admitted(api, path: str, body: dict) -> bool:
    try:
        h.dry_run_create(api, path, body)
    except ApiError as exc:
        if "failed calling webhook" not in str(exc):
            raise
        return False
    return True


def _trainjobs(api, namespace: str) -> list[dict] | None:
    try:
        return api.request("GET", f"{TRAINER}/namespaces/{namespace}/trainjobs").get("items")
    except ApiError as exc:
        if exc.status == 404:
            return None
        raise


def test_6_uninstall_keeps_trainjobs_then_deletes_them_with_the_crds_and_namespaces_go(fresh_install, tctl, api):
    for _ in range(2):  # TrainJobs of its own to keep, beside whatever earlier tests left
        h.create_trainjob(api, h.trainjob(f"e2e-kept-{secrets.token_hex(3)}", JOBS_NS, suspend=True))
    jobs = _trainjobs(api, JOBS_NS)
    assert jobs, "no TrainJobs to keep"
    tctl.run("uninstall", "-n", KF_NS)
    assert api.get_or_none("/apis/apiextensions.k8s.io/v1/customresourcedefinitions/trainjobs.trainer.kubeflow.org")
    assert len(_trainjobs(api, JOBS_NS)) == len(jobs)
    assert api.get_or_none(f"/apis/apps/v1/namespaces/{KF_NS}/deployments/{h.TRAINER_DEPLOYMENT}") is None

    done = tctl.run("uninstall", "-n", KF_NS, "--delete-crds", "--yes")
    assert f"{len(jobs)} TrainJobs" in done.stdout + done.stderr, done.stderr
    assert api.get_or_none("/apis/apiextensions.k8s.io/v1/customresourcedefinitions/trainjobs.trainer.kubeflow.org") is None
    assert _trainjobs(api, JOBS_NS) is None
    for ns in (KF_NS, JOBS_NS):
        api.request("DELETE", f"/api/v1/namespaces/{ns}")
    for ns in (KF_NS, JOBS_NS):
        h.wait_until(lambda ns=ns: api.get_or_none(f"/api/v1/namespaces/{ns}") is None,
                     120, f"namespace {ns} to be deleted")


# An update that each immutability rule v2.3.0 adds must refuse, keyed by the path upgrade-check
# reports: (the TrainJob spec fields that set it, the same fields changed).
_TGPS = ("spec.runtimePatches[*].trainingRuntimeSpec.template.spec.replicatedJobs[*].template.spec.template.spec."
         "terminationGracePeriodSeconds")


def _runtime_patch(seconds: int) -> dict:
    return {"runtimePatches": [{"manager": "e2e.trainerctl.io/test", "trainingRuntimeSpec": {"template": {"spec": {
        "replicatedJobs": [{"name": "node", "template": {"spec": {"template": {"spec": {
            "terminationGracePeriodSeconds": seconds}}}}}]}}}}]}


IMMUTABLE_UPDATES = {_TGPS: (_runtime_patch(30), _runtime_patch(31))}


def test_4_upgrade_from_v2_2_0_keeps_trainjobs_and_enforces_new_immutability_rules(clean_slate, tctl, api):
    tctl.install("v2.2.0")
    pod = h.trainer_pods(api)[0]
    assert pod["status"]["containerStatuses"][0]["imageID"] == "testenv-binary://trainer-controller-manager@v2.2.0"
    h.create_namespace(api, JOBS_NS)
    h.create_trainjob(api, h.trainjob("e2e-v22-done", JOBS_NS))
    h.wait_trainjob_complete(api, JOBS_NS, "e2e-v22-done")
    h.create_trainjob(api, h.trainjob("e2e-v22-suspended", JOBS_NS, suspend=True))
    job_path = f"{TRAINER}/namespaces/{JOBS_NS}/trainjobs/e2e-v22-suspended"

    check = tctl.run("upgrade-check", *tctl.source_args("v2.3.0"), "-o", "json")
    findings = json.loads(check.stdout)["findings"]
    immutable = {f["path"]: f for f in findings if f.get("immutable")}
    assert set(immutable) == set(IMMUTABLE_UPDATES), "a new immutability rule needs an update to try here"

    report = tctl.install("v2.3.0")
    assert report["summary"].get("failed", 0) == 0
    h.wait_until(lambda: [
        p for p in h.trainer_pods(api)
        if (p["status"].get("containerStatuses") or [{}])[0].get("imageID") == "testenv-binary://trainer-controller-manager@v2.3.0"
        and h.condition(p, "Ready") == "True"], 120, "the v2.3.0 binary to run the trainer pod")
    assert {j["metadata"]["name"] for j in _trainjobs(api, JOBS_NS)} >= {"e2e-v22-done", "e2e-v22-suspended"}
    for i, (path, finding) in enumerate(sorted(immutable.items())):
        # On a TrainJob created under v2.3.0: v2.2.0's schema may not have had the field at all
        # (then it was pruned, and a first value is not a change).
        before, changed = IMMUTABLE_UPDATES[path]
        body = h.trainjob(f"e2e-immutable-{i}", JOBS_NS, suspend=True)
        body["spec"].update(before)
        h.create_trainjob(api, body)
        with pytest.raises(ApiError) as refused:
            h.merge_patch(api, f"{TRAINER}/namespaces/{JOBS_NS}/trainjobs/e2e-immutable-{i}", {"spec": changed})
        assert refused.value.status == 422 and finding["message"] in refused.value.body, refused.value.body
    h.merge_patch(api, job_path, {"spec": {"suspend": False}})
    h.wait_trainjob_complete(api, JOBS_NS, "e2e-v22-suspended")


# The real v2.2.0 controller's finalizer judges prune: a runtime a suspended TrainJob still
# references must survive the upgrade (trainerctl/cluster/trainer/in_use.py).
def test_7_upgrade_prunes_a_runtime_only_finished_jobs_used_and_keeps_one_a_suspended_job_needs(clean_slate, tctl, api,
                                                                                               tmp_path):
    import yaml

    rendered = tctl.render("v2.2.0")
    extra = [h.runtime_copy(tctl, "v2.2.0", "e2e-old-finished"), h.runtime_copy(tctl, "v2.2.0", "e2e-old-pending")]
    manifest = tmp_path / "v2.2.0-plus.yaml"
    manifest.write_text(yaml.safe_dump_all(rendered + extra))
    tctl.run("install", "-f", str(manifest), "-n", KF_NS, "--timeout", str(h.INSTALL_TIMEOUT))
    h.create_namespace(api, JOBS_NS)
    h.create_trainjob(api, h.trainjob("e2e-finished", JOBS_NS, runtime="e2e-old-finished"))
    h.create_trainjob(api, h.trainjob("e2e-pending", JOBS_NS, runtime="e2e-old-pending", suspend=True))
    h.wait_trainjob_complete(api, JOBS_NS, "e2e-finished")
    legacy = "trainer.kubeflow.org/resource-in-use"
    for name in ("e2e-old-finished", "e2e-old-pending"):
        h.wait_until(lambda name=name: legacy in (
            api.request("GET", f"{TRAINER}/clustertrainingruntimes/{name}")["metadata"].get("finalizers") or []),
                     120, f"the v2.2.0 controller to add {legacy} to {name}")

    dry = tctl.run("install", *tctl.source_args("v2.3.0"), "--dry-run")
    said = dry.stdout + dry.stderr
    assert "e2e-old-finished would be pruned" in said, said
    assert "e2e-old-pending" in said and f"{JOBS_NS}/e2e-pending" in said, said

    done = tctl.run("install", *tctl.source_args("v2.3.0"), "--timeout", str(h.INSTALL_TIMEOUT))
    said = done.stdout + done.stderr
    assert f"{JOBS_NS}/e2e-pending" in said, said
    h.wait_until(lambda: api.get_or_none(f"{TRAINER}/clustertrainingruntimes/e2e-old-finished") is None,
                 120, "e2e-old-finished to be gone")
    kept = api.request("GET", f"{TRAINER}/clustertrainingruntimes/e2e-old-pending")
    assert not kept["metadata"].get("deletionTimestamp")
    # Stripped once no v2.2.0 controller runs any more (it would put the finalizer back).
    assert legacy not in (kept["metadata"].get("finalizers") or []), kept["metadata"]
    h.merge_patch(api, f"{TRAINER}/namespaces/{JOBS_NS}/trainjobs/e2e-pending", {"spec": {"suspend": False}})
    h.wait_trainjob_complete(api, JOBS_NS, "e2e-pending")
