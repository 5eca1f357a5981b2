"""Taking over a Trainer that the real Helm installed, under the real controllers.

The real `helm` (v4.3.2, built from the module proxy into the e2e cache) installs the upstream
chart from ../shared/charts onto the e2e cluster, whose controllers run what it installs: the
Trainer controller at the chart's tag, JobSet from its subchart (the subchart's image tag is
`main`, so the tests pin it to the release the subchart comes from). trainerctl then takes the
release over with kubeflow/trainer v2.3.0 `overlays/manager` and our runtimes.

Chart 2.3.0's runtime-installer hook Job runs `apk add kubectl` on alpine, which cannot work
without internet; here it is a kwok pod that succeeds without doing anything, so the test does
its work (server-side apply of the runtimes in its ConfigMap, then the label) the way it would.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.support import e2e as h
from tests.support.e2e import JOBS_NS, KF_NS, TRAINER
from tests.support.kubectl import kubectl_binary
from tests.testenv.api import ApiError

RELEASE = "kubeflow-trainer"
CTR = f"{TRAINER}/clustertrainingruntimes"
CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
V23 = "testenv-binary://trainer-controller-manager@v2.3.0"
# The JobSet release each chart's subchart is (../shared/README.md), for its image tag.
SUBCHART_JOBSET = {"2.2.0": "v0.11.0", "2.3.0": "v0.12.0"}
HELM_MARKS = ("meta.helm.sh/release-name", "meta.helm.sh/release-namespace")


class Helm:
    """The real helm binary against the e2e cluster, with its own config, cache and data dirs."""

    def __init__(self, binary: Path, kubeconfig: str, home: Path, charts: Path, api):
        self.binary, self.kubeconfig, self.home, self.charts, self.api = binary, kubeconfig, home, charts, api

    def run(self, *args: str, check: bool = True) -> subprocess.CompletedProcess:
        env = {**os.environ, "KUBECONFIG": self.kubeconfig, "HELM_CONFIG_HOME": str(self.home / "config"),
               "HELM_CACHE_HOME": str(self.home / "cache"), "HELM_DATA_HOME": str(self.home / "data")}
        proc = subprocess.run([str(self.binary), *args], env=env, capture_output=True, text=True, timeout=600)
        if check:
            _check(args, proc)
        return proc

    def _chart_args(self, chart: str, values: tuple[str, ...]) -> list[str]:
        version = chart.rsplit("-", 1)[1]
        return [RELEASE, str(self.charts / chart), "-n", KF_NS, "--set", f"jobset.image.tag={SUBCHART_JOBSET[version]}",
                *(a for v in values for a in ("--set", v))]

    def install(self, chart: str, *values: str, upgrade: bool = False, server_side: bool = True) -> int:
        """Install or upgrade; returns the release's revision once the chart's cert rotation settled.

        Every install and client-side upgrade writes the chart's webhook Secrets with the empty
        data the chart declares, blanking the certificates the controllers wrote; their rotators
        then issue new CAs, while the pods serve the old certificates until the kubelet refreshes
        the volumes. Whatever the webhooks judge in that window is refused (x509), so this returns
        only once both webhooks answer under the CA their Secret holds (`rotation_settled`)."""
        self.run("upgrade" if upgrade else "install", *self._chart_args(chart, values),
                 *(() if upgrade else ("--create-namespace",)), f"--server-side={str(server_side).lower()}",
                 "--wait", "--timeout", f"{h.INSTALL_TIMEOUT}s")
        h.wait_until(lambda: rotation_settled(self.api), h.INSTALL_TIMEOUT,
                     "both webhooks to answer under the CA in their Secret after the chart's rotation")
        return int(next(r["revision"] for r in self.releases() if r["name"] == RELEASE))

    def upgrade_with_runtimes(self, chart: str, *values: str) -> int:
        """A client-side `helm upgrade` that adds the chart's ClusterTrainingRuntimes.

        Left to itself, the upgrade creates them right after it blanks the webhook Secret (see
        `install`), racing the rotation it set off. So the runtimes are created first, as the
        upgrade would create them (its own render, a create with Helm's field manager and the
        release's ownership marks), while the webhook is settled; the upgrade then adopts them,
        its patch for each is empty and it sends none, and the revision records them as the
        chart's. Nothing the webhook judges is written during the rotation."""
        rendered = self.run("template", *self._chart_args(chart, values)).stdout
        created = {}
        for runtime in (d for d in yaml.safe_load_all(rendered) if d and d["kind"] == "ClusterTrainingRuntime"):
            meta = runtime["metadata"]
            meta.setdefault("labels", {})["app.kubernetes.io/managed-by"] = "Helm"
            meta.setdefault("annotations", {}).update(dict(zip(HELM_MARKS, (RELEASE, KF_NS))))
            out = self.api.request("POST", CTR, runtime, query={"fieldManager": "helm"})
            created[meta["name"]] = out["metadata"]["resourceVersion"]
        revision = self.install(chart, *values, upgrade=True, server_side=False)
        rewritten = sorted(n for n, rv in created.items()
                           if self.api.request("GET", f"{CTR}/{n}")["metadata"]["resourceVersion"] != rv)
        assert not rewritten, f"helm upgrade wrote runtimes it should have adopted as they were: {rewritten}"
        return revision

    def releases(self) -> list[dict]:
        return json.loads(self.run("list", "-A", "-o", "json").stdout)


def _check(args: tuple[str, ...], proc: subprocess.CompletedProcess) -> None:
    if proc.returncode != 0:
        raise AssertionError(f"helm {' '.join(args)} exited {proc.returncode}:\n{proc.stdout}\n{proc.stderr}")


def _answers(api, path: str, probe: dict) -> bool:
    """Whether the webhook judging `probe` answers a dry-run create (a refusal is an answer; a
    failed call is not)."""
    try:
        h.dry_run_create(api, path, probe)
    except ApiError as exc:
        return "failed calling webhook" not in str(exc)
    return True


def rotation_settled(api) -> bool:
    """Both charts' webhooks carry the CA their Secret holds, and both answer under it."""
    for secret, webhooks in ((h.TRAINER_SECRET, h.TRAINER_WEBHOOKS), (h.JOBSET_SECRET, h.JOBSET_WEBHOOKS)):
        state = h.cert_state(api, KF_NS, secret, webhooks)
        ca = state["secret"].get("ca.crt")
        if not ca or not all(bundle == ca for _, name in webhooks for bundle in state[name]):
            return False
    runtime = {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "ClusterTrainingRuntime",
               "metadata": {"name": "e2e-webhook-probe"}, "spec": {"template": {"spec": {}}}}
    jobset = {"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet",
              "metadata": {"name": "e2e-webhook-probe", "namespace": KF_NS}, "spec": {}}
    return _answers(api, CTR, runtime) and _answers(api, f"{h.JOBSET}/namespaces/{KF_NS}/jobsets", jobset)


@pytest.fixture(scope="module")
def helm(e2e_cluster, shared_dir, tmp_path_factory, api):
    return Helm(e2e_cluster.e2e_bin_dir / "helm", str(e2e_cluster.admin_kubeconfig), tmp_path_factory.mktemp("helm"),
                shared_dir / "charts", api)


def _delete(api, path: str) -> None:
    try:
        api.request("DELETE", path)
    except ApiError as exc:
        if exc.status != 404:
            raise


def remove_all(helm: Helm, tctl, api) -> None:
    """Whatever an earlier test (or failure) left: the release, our install, the chart's
    cluster-scoped objects and CRDs (Helm leaves crds/ behind on uninstall), the namespaces."""
    helm.run("uninstall", RELEASE, "-n", KF_NS, "--ignore-not-found", "--wait", check=False)
    h.cleanup_trainer(tctl, api)
    for kind in ("clusterroles", "clusterrolebindings"):
        items = api.request("GET", f"/apis/rbac.authorization.k8s.io/v1/{kind}",
                            query={"labelSelector": f"app.kubernetes.io/instance={RELEASE}"})["items"]
        for item in items:
            _delete(api, f"/apis/rbac.authorization.k8s.io/v1/{kind}/{item['metadata']['name']}")
    for crd in api.request("GET", CRDS)["items"]:
        if crd["spec"]["group"] in ("trainer.kubeflow.org", "jobset.x-k8s.io"):
            _delete(api, f"{CRDS}/{crd['metadata']['name']}")
    for crd in ("trainjobs.trainer.kubeflow.org", "jobsets.jobset.x-k8s.io"):
        h.wait_until(lambda crd=crd: api.get_or_none(f"{CRDS}/{crd}") is None, 120, f"CRD {crd} to go")
    for ns in (KF_NS, JOBS_NS):
        _delete(api, f"/api/v1/namespaces/{ns}")
        h.wait_until(lambda ns=ns: api.get_or_none(f"/api/v1/namespaces/{ns}") is None, 120, f"namespace {ns} to go")


@pytest.fixture
def slate(helm, tctl, api):
    remove_all(helm, tctl, api)
    yield
    remove_all(helm, tctl, api)


def release_records(api) -> list[str]:
    items = api.request("GET", f"/api/v1/namespaces/{KF_NS}/secrets", query={"labelSelector": "owner=helm"})["items"]
    return sorted(s["metadata"]["name"] for s in items)


_RENDERS: dict[str, list[dict]] = {}


def live(api, tctl, version: str) -> dict[tuple[str, str], dict]:
    """The live twin of every object the `version` render has: (kind, name) -> object."""
    if version not in _RENDERS:
        _RENDERS[version] = tctl.render(version)
    out = {}
    for obj in _RENDERS[version]:
        path = _path(api, obj)
        found = api.get_or_none(path) if path else None
        if found is not None:
            out[(obj["kind"], obj["metadata"]["name"])] = found
    return out


_RESOURCES: dict[tuple[str, str], tuple[str, bool]] = {}


def _path(api, obj: dict) -> str | None:
    api_version, kind = obj["apiVersion"], obj["kind"]
    if (api_version, kind) not in _RESOURCES:
        base = f"/apis/{api_version}" if "/" in api_version else f"/api/{api_version}"
        found = api.get_or_none(base)
        for res in (found or {}).get("resources") or []:
            if "/" not in res["name"]:
                _RESOURCES[(api_version, res["kind"])] = (f"{base}/{{ns}}{res['name']}", res["namespaced"])
    if (api_version, kind) not in _RESOURCES:
        return None
    pattern, namespaced = _RESOURCES[(api_version, kind)]
    ns = f"namespaces/{obj['metadata'].get('namespace') or KF_NS}/" if namespaced else ""
    return f"{pattern.format(ns=ns)}/{obj['metadata']['name']}"


def marks(obj: dict) -> list[str]:
    meta = obj["metadata"]
    found = [k for k in (meta.get("annotations") or {}) if k.startswith("meta.helm.sh/")]
    if (meta.get("labels") or {}).get("app.kubernetes.io/managed-by") == "Helm":
        found.append("app.kubernetes.io/managed-by=Helm")
    return found


def by_name(report: dict) -> dict[tuple[str, str], dict]:
    return {(o["kind"], o["name"]): o for o in report["objects"]}


def test_helm_release_of_chart_2_2_0_is_handed_over_in_place_and_forgotten(slate, helm, tctl, api):
    # Helm installs the chart: the controllers, then the runtimes (the webhook judges them, so they
    # can only go once it runs: a second revision), and TrainJobs run on it. Client-side, as Helm 3
    # applies: Helm 4's server-side upgrade of this chart conflicts with the controller's cert
    # rotator over the webhook Secret's data, which the chart declares empty.
    helm.install("kubeflow-trainer-2.2.0", server_side=False)
    revision = helm.upgrade_with_runtimes("kubeflow-trainer-2.2.0", "runtimes.defaultEnabled=true")
    assert revision == 2
    assert [(r["name"], r["namespace"], r["revision"], r["status"]) for r in helm.releases()] == \
        [(RELEASE, KF_NS, str(revision), "deployed")]
    h.create_namespace(api, JOBS_NS)
    h.create_trainjob(api, h.trainjob("e2e-helm-before", JOBS_NS))
    h.wait_trainjob_complete(api, JOBS_NS, "e2e-helm-before")
    # A runtime the render does not have, still in use: the hand-over must keep it.
    h.create_trainjob(api, h.trainjob("e2e-helm-pending", JOBS_NS, runtime="deepspeed-distributed", num_nodes=1,
                                      suspend=True))
    records = release_records(api)
    assert records == [f"sh.helm.release.v1.{RELEASE}.v{n}" for n in range(1, revision + 1)]

    # Without the flag: refused in one line naming the release, its namespace and the flag.
    install = ["install", *tctl.source_args("v2.3.0"), "--timeout", str(h.INSTALL_TIMEOUT)]
    refused = tctl.run(*install, expect=3)
    assert refused.stderr.count("\n") == 1, refused.stderr
    assert f"release {RELEASE} in namespace {KF_NS} (chart kubeflow-trainer-2.2.0, revision {revision}, deployed)" \
        in refused.stderr and "--take-over-helm" in refused.stderr, refused.stderr
    before = live(api, tctl, "v2.3.0")

    # --dry-run with the flag: the plan (adopted, pruned, kept, the records), and nothing changes.
    dry = json.loads(tctl.run(*install, "--take-over-helm", "--dry-run", "-o", "json").stdout)
    plan = by_name(dry)
    assert "adopted from Helm release kubeflow-trainer" in plan[("ConfigMap", "kubeflow-trainer-config")]["message"]
    assert "adopted from Helm release kubeflow-trainer" in plan[("ClusterTrainingRuntime", "torch-distributed")]["message"]
    assert plan[("Deployment", "jobset-controller")]["action"] == "pruned"  # the subchart's name for it
    assert plan[("ClusterTrainingRuntime", "mlx-distributed")]["action"] == "pruned"
    kept = plan[("ClusterTrainingRuntime", "deepspeed-distributed")]
    assert kept["action"] == "skipped" and f"{JOBS_NS}/e2e-helm-pending" in kept["message"], kept
    assert plan[("CustomResourceDefinition", "trainjobs.trainer.kubeflow.org")]["action"] in ("configured", "unchanged")
    assert {(o["kind"], o["name"], o["action"]) for o in dry["objects"] if o["kind"] == "Secret"
            and o["name"].startswith("sh.helm.release")} == {("Secret", r, "deleted") for r in records}
    assert release_records(api) == records
    assert {k: o["metadata"]["resourceVersion"] for k, o in live(api, tctl, "v2.3.0").items()} == \
        {k: o["metadata"]["resourceVersion"] for k, o in before.items()}

    # The hand-over, while a TrainJob runs.
    h.create_trainjob(api, h.trainjob("e2e-helm-during", JOBS_NS, num_nodes=1, cpu=None))
    report = json.loads(tctl.run(*install, "--take-over-helm", "-o", "json").stdout)
    done = by_name(report)
    assert report["summary"].get("failed", 0) == 0, report["summary"]
    h.wait_trainjob_complete(api, JOBS_NS, "e2e-helm-during")
    after = live(api, tctl, "v2.3.0")
    recreated = {k for k, o in done.items() if o["action"] == "recreated"}
    # Kubernetes forbids changing a Deployment's selector, and the chart's differs from the
    # overlay's: that Deployment alone is replaced (and the report says why); every other shared
    # object keeps its uid.
    assert recreated == {("Deployment", h.TRAINER_DEPLOYMENT)}, recreated
    assert "immutable" in done[("Deployment", h.TRAINER_DEPLOYMENT)]["message"]
    changed = {k for k in before if k in after and after[k]["metadata"]["uid"] != before[k]["metadata"]["uid"]}
    assert changed == recreated, changed
    assert len(before) >= 20, sorted(before)  # the CRDs, RBAC, config, webhooks, runtimes the two share
    for key, obj in after.items():
        assert not marks(obj), (key, marks(obj))
        managers = {e["manager"] for e in obj["metadata"].get("managedFields") or [] if not e.get("subresource")}
        assert "helm" not in managers, (key, managers)
    assert helm.releases() == [] and release_records(api) == []
    assert api.get_or_none(f"/apis/apps/v1/namespaces/{KF_NS}/deployments/jobset-controller") is None
    assert api.get_or_none(f"{CTR}/mlx-distributed") is None
    pending = api.request("GET", f"{CTR}/deepspeed-distributed")["metadata"]
    assert not marks({"metadata": pending}) and pending["labels"]["platform.opendatahub.io/part-of"] == "trainer"

    # The v2.3.0 controller runs what the hand-over installed; a new TrainJob completes.
    h.wait_until(lambda: [
        p for p in h.trainer_pods(api)
        if (p["status"].get("containerStatuses") or [{}])[0].get("imageID") == V23 and h.condition(p, "Ready") == "True"],
        h.INSTALL_TIMEOUT, "the v2.3.0 binary to run the trainer pod")
    h.create_trainjob(api, h.trainjob("e2e-helm-after", JOBS_NS))
    h.wait_trainjob_complete(api, JOBS_NS, "e2e-helm-after")
    tctl.run("status", "-n", KF_NS)

    # A re-run is a no-op; with the pending job gone, the kept runtime goes; then no-op again.
    again = json.loads(tctl.run(*install, "-o", "json").stdout)
    assert again["summary"]["changed"] == 0, [o for o in again["objects"] if o["action"] != "unchanged"]
    _delete(api, f"{TRAINER}/namespaces/{JOBS_NS}/trainjobs/e2e-helm-pending")
    third = json.loads(tctl.run(*install, "-o", "json").stdout)
    assert [(o["name"], o["action"]) for o in third["objects"] if o["action"] != "unchanged"] == \
        [("deepspeed-distributed", "pruned")]
    fourth = json.loads(tctl.run(*install, "-o", "json").stdout)
    assert fourth["summary"]["changed"] == 0


def _act_as_the_runtime_installer(api, kubeconfig: str, tmp_path: Path) -> list[str]:
    """What the chart's installer Job does (templates/runtimes/installer-job.yaml), with the real
    kubectl: server-side apply of its ConfigMap's runtimes, then its label on them."""
    cm = api.request("GET", f"/api/v1/namespaces/{KF_NS}/configmaps/{RELEASE}-runtimes-installer")
    manifest = tmp_path / "runtimes.yaml"
    manifest.write_text(cm["data"]["runtimes.yaml"])
    kubectl = kubectl_binary()
    env = {**os.environ, "KUBECONFIG": kubeconfig}
    for cmd in (["apply", "--server-side", "--force-conflicts", "-f", str(manifest)],
                ["label", "--overwrite", "-f", str(manifest), "trainer.kubeflow.org/managed-by=runtimes-installer"]):
        subprocess.run([kubectl, *cmd], env=env, check=True, capture_output=True, text=True)
    return [d["metadata"]["name"] for d in yaml.safe_load_all(manifest.read_text()) if d]


def test_an_interrupted_hand_over_of_chart_2_3_0_is_finished_by_the_next_run(slate, helm, tctl, api, tmp_path,
                                                                           e2e_cluster):
    helm.install("kubeflow-trainer-2.3.0", "runtimes.torchDistributed.enabled=true",
                 "runtimes.mlxDistributed.enabled=true")
    # The installer hook ran (a kwok pod: it succeeded and Helm deleted it); do what it would have.
    installed = _act_as_the_runtime_installer(api, str(e2e_cluster.admin_kubeconfig), tmp_path)
    assert sorted(installed) == ["mlx-distributed", "torch-distributed"]
    hooks = [f"/api/v1/namespaces/{KF_NS}/configmaps/{RELEASE}-runtimes-installer",
             f"/api/v1/namespaces/{KF_NS}/serviceaccounts/{RELEASE}-runtimes-installer",
             f"/apis/rbac.authorization.k8s.io/v1/clusterroles/{RELEASE}-runtimes-installer",
             f"/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/{RELEASE}-runtimes-installer"]
    assert all(api.get_or_none(p) for p in hooks)
    before = live(api, tctl, "v2.3.0")

    # Interrupt the hand-over once it has started writing (SIGTERM: a cancelled CI job).
    cmd = [sys.executable, "-m", "trainerctl", "install", *tctl.source_args("v2.3.0"), "--take-over-helm",
           "--timeout", str(h.INSTALL_TIMEOUT), "--kubeconfig", tctl.kubeconfig]
    env = {k: v for k, v in os.environ.items() if k != "KUBECONFIG"}
    proc = subprocess.Popen(cmd, cwd=tctl.workdir, env={**env, "NO_COLOR": "1"}, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    h.wait_until(lambda: api.get_or_none(
        f"/api/v1/namespaces/{KF_NS}/configmaps/trainerctl-inventory"),
                 h.INSTALL_TIMEOUT, "the hand-over to start writing", interval=0.05)
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert "re-run to converge" in err
    assert [r["name"] for r in helm.releases()] == [RELEASE]  # not forgotten before the end

    # Without the flag the next run still refuses; with it, it finishes the hand-over.
    tctl.run("install", *tctl.source_args("v2.3.0"), expect=3)
    report = json.loads(tctl.run("install", *tctl.source_args("v2.3.0"), "--take-over-helm", "--timeout",
                                 str(h.INSTALL_TIMEOUT), "-o", "json").stdout)
    done = by_name(report)
    assert report["summary"].get("failed", 0) == 0, report["summary"]
    for kind, name in (("ConfigMap", f"{RELEASE}-runtimes-installer"), ("ServiceAccount", f"{RELEASE}-runtimes-installer"),
                       ("ClusterRole", f"{RELEASE}-runtimes-installer"),
                       ("ClusterRoleBinding", f"{RELEASE}-runtimes-installer")):
        assert done[(kind, name)]["action"] == "pruned", done.get((kind, name))
    assert done[("ClusterTrainingRuntime", "mlx-distributed")]["action"] == "pruned"
    assert "runtime installer" in done[("ClusterTrainingRuntime", "mlx-distributed")]["message"]
    assert not any(api.get_or_none(p) for p in hooks)
    assert helm.releases() == [] and release_records(api) == []
    after = live(api, tctl, "v2.3.0")
    for key in before:
        if key in after and key != ("Deployment", h.TRAINER_DEPLOYMENT):
            assert after[key]["metadata"]["uid"] == before[key]["metadata"]["uid"], f"{key} was recreated"
        if key in after:
            assert not marks(after[key]), key
    h.create_namespace(api, JOBS_NS)
    h.create_trainjob(api, h.trainjob("e2e-helm23-after", JOBS_NS, num_nodes=1, cpu=None))
    h.wait_trainjob_complete(api, JOBS_NS, "e2e-helm23-after")
    again = json.loads(tctl.run("install", *tctl.source_args("v2.3.0"), "-o", "json").stdout)
    assert again["summary"]["changed"] == 0, [o for o in again["objects"] if o["action"] != "unchanged"]
