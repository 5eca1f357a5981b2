"""The GitOps folders on the e2e cluster, applied by the real Flux controllers (and, for
Argo CD, which cannot be built here, wave by wave as its sync applies them).

Flux's source-controller and kustomize-controller (tests/testenv/flux.py) pull a repository from a
loopback git server (tests/support/git_server.py), to which the test pushes `render --gitops
flux` output as a CI job would. The real Trainer and JobSet controllers run what Flux applies.
The tests share the Flux install. Each stage they build on is a module fixture (v2.2.0 applied by
Flux, the v2.3.0 folder rendered, v2.3.0 applied), so any one test run alone finds what it needs;
the last one removes Flux and starts again for Argo CD.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
import yaml

from tests.support import e2e as h
from tests.support.e2e import KF_NS, TRAINER, cleanup_trainer, merge_patch, runtime_copy, trainer_pods
from tests.support.waiting import Not
from tests.testenv.api import ApiError

JOBS_NS = "e2e-gitops-jobs"
FOLDER = "clusters/e2e/trainer"
FLUX_NS = "flux-system"
KS = "/apis/kustomize.toolkit.fluxcd.io/v1/namespaces/flux-system/kustomizations"
KS_CRD = "kustomizations.kustomize.toolkit.fluxcd.io"
GITREPO = "/apis/source.toolkit.fluxcd.io/v1/namespaces/flux-system/gitrepositories/trainer"
CTR = f"{TRAINER}/clustertrainingruntimes"
FINISHED = "e2e-flux-finished"  # only a finished TrainJob used it
PENDING = "e2e-flux-pending"  # a suspended TrainJob references it
V22 = "testenv-binary://trainer-controller-manager@v2.2.0"
V23 = "testenv-binary://trainer-controller-manager@v2.3.0"
FLUX_TIMEOUT = 420


@pytest.fixture(scope="module")
def flux(e2e_cluster, api, tctl):
    from tests.testenv.build import BuildError, ensure_flux_binaries
    from tests.testenv.flux import FluxControllers

    try:
        bin_dir = ensure_flux_binaries()
    except BuildError as exc:
        pytest.fail(f"the Flux controllers could not be built: {exc}")
    cleanup_trainer(tctl, api, (KF_NS, JOBS_NS))
    controllers = FluxControllers(e2e_cluster, bin_dir).start()
    try:
        yield controllers
    finally:
        _remove_flux(api, controllers)
        cleanup_trainer(tctl, api, (KF_NS, JOBS_NS))


def _remove_flux(api, controllers) -> None:
    """Delete the Kustomizations while kustomize-controller runs (it prunes what it applied, except
    what is marked never to prune), then stop the controllers and remove their API. Idempotent."""
    if api.get_or_none(f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{KS_CRD}") is None:
        controllers.stop()
        return
    for item in (api.get_or_none(KS) or {}).get("items") or []:
        api.request("DELETE", f"{KS}/{item['metadata']['name']}")
    try:
        h.wait_until(lambda: not (api.get_or_none(KS) or {}).get("items"), 180, "the Kustomizations to be gone")
    finally:
        controllers.stop()
    for crd in controllers.crds():
        name = crd["metadata"]["name"]
        group_path = f"/apis/{crd['spec']['group']}/{crd['spec']['versions'][0]['name']}/{crd['spec']['names']['plural']}"
        for item in (api.get_or_none(group_path) or {}).get("items") or []:  # no controller left to finalize them
            meta = item["metadata"]
            path = f"/apis/{crd['spec']['group']}/{crd['spec']['versions'][0]['name']}/namespaces/" \
                   f"{meta['namespace']}/{crd['spec']['names']['plural']}/{meta['name']}"
            merge_patch(api, path, {"metadata": {"finalizers": None}})
        try:
            api.request("DELETE", f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{name}")
        except ApiError as exc:
            if exc.status != 404:
                raise


class Fleet:
    """The fleet repository: a work tree the test commits rendered folders in, pushed to the
    loopback git server that source-controller pulls from."""

    def __init__(self, root: Path):
        import git

        from tests.support.git_server import GitServer

        self.server = GitServer(root / "served").start()
        self.server.create("fleet")
        self.url = self.server.repo_url("fleet")
        self.tree = root / "fleet"
        self.repo = git.Repo.init(self.tree, initial_branch="main")
        with self.repo.config_writer() as cw:
            cw.set_value("user", "name", "fleet-ci")
            cw.set_value("user", "email", "ci@fleet.invalid")

    @property
    def folder(self) -> Path:
        return self.tree / FOLDER

    def commit(self, message: str) -> str:
        self.repo.git.add("-A")
        self.repo.index.commit(message)
        self.repo.git.push(str(self.server.root / "fleet.git"), "main")
        return self.repo.head.commit.hexsha


@pytest.fixture(scope="module")
def fleet(tmp_path_factory):
    repo = Fleet(tmp_path_factory.mktemp("fleet"))
    yield repo
    repo.server.stop()


def _render_args(tctl, version: str, fleet: Fleet, engine: str = "flux") -> list[str]:
    return ["render", *tctl.source_args(version), "--output-dir", str(fleet.folder), "--gitops", engine,
            "--gitops-repo", fleet.url]


def _kustomizations(api) -> list[dict]:
    items = (api.get_or_none(KS) or {}).get("items") or []
    return sorted(items, key=lambda k: k["metadata"]["name"])


def _ready_at(api, revision: str):
    """Every Kustomization Ready at `revision` (their own conditions), or None."""
    items = _kustomizations(api)
    ok = items and all(h.condition(k, "Ready") == "True" and (k.get("status") or {}).get("lastAppliedRevision", "")
                       .endswith(revision) and k["status"].get("observedGeneration") == k["metadata"]["generation"]
                       for k in items)
    return items if ok else None


def _wait_ready(api, revision: str) -> list[dict]:
    def check():
        return _ready_at(api, revision)

    try:
        return h.wait_until(check, FLUX_TIMEOUT, f"every Flux Kustomization Ready at {revision[:12]}")
    except AssertionError as exc:
        states = [(k["metadata"]["name"], [(c["type"], c["status"], c.get("message", "")[:300])
                                            for c in (k.get("status") or {}).get("conditions") or []])
                  for k in _kustomizations(api)]
        raise AssertionError(f"{exc}\n{json.dumps(states, indent=1)}") from None


def _request_reconcile(api, path: str) -> str:
    """What `flux reconcile` does: the requestedAt annotation the controllers watch."""
    token = str(time.time_ns())
    merge_patch(api, path, {"metadata": {"annotations": {"reconcile.fluxcd.io/requestedAt": token}}})
    return token


def _warnings(api) -> list[str]:
    events = api.request("GET", f"/api/v1/namespaces/{FLUX_NS}/events").get("items") or []
    return [f"{e['involvedObject'].get('kind')}/{e['involvedObject'].get('name')} {e.get('reason')}: "
            f"{(e.get('message') or '')[:400]}" for e in events if e.get("type") == "Warning"]


def _applies(controllers, revision: str) -> list[str]:
    """Kustomization names in the order kustomize-controller finished applying `revision`."""
    out = []
    for record in controllers.log_records("kustomize-controller"):
        name = (record.get("Kustomization") or {}).get("name") or record.get("name")
        if record.get("msg") == "server-side apply completed" and str(record.get("revision", "")).endswith(revision) \
                and name not in out:
            out.append(name)
    return out


def _apply_flux_objects(tctl, fleet: Fleet) -> None:
    """What a platform team does once per cluster (or lets its bootstrap Kustomization do)."""
    import subprocess

    from tests.support.kubectl import kubectl_binary

    proc = subprocess.run([kubectl_binary(), "--kubeconfig", tctl.kubeconfig, "apply", "--server-side",
                           "--field-manager=platform-team", "-k", str(fleet.folder)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


def _stage_order(api) -> list[str]:
    return [k["metadata"]["name"] for k in _kustomizations(api)]


@pytest.fixture(scope="module")
def on_v2_2_0(flux, fleet, tctl, api) -> str:
    """Flux applied v2.2.0 plus two runtimes a later render drops (written by the writer `render
    --gitops` uses); a finished TrainJob used one of them, a suspended one needs the other. The
    revision Flux applied."""
    from trainerctl.gitops.layout import settings
    from trainerctl.gitops.writer import gitops_files
    from trainerctl.render.output import write_files

    from trainerctl.render import RenderOptions, render

    result = render(RenderOptions(source_path=str(tctl.source("v2.2.0")), overlay="overlays/manager", namespace=KF_NS,
                                  remote_mirrors=list(tctl.mirrors), use_lock=False, env={}))
    objects = result.objects + [runtime_copy(tctl, "v2.2.0", FINISHED), runtime_copy(tctl, "v2.2.0", PENDING)]
    write_files(fleet.folder, gitops_files(objects, result.source, settings("flux", str(fleet.folder), repo=fleet.url),
                                           namespace=KF_NS, owner_label=result.owner_label))
    revision = fleet.commit("trainer v2.2.0")
    _apply_flux_objects(tctl, fleet)
    _wait_ready(api, revision)
    h.create_namespace(api, JOBS_NS)
    h.create_trainjob(api, h.trainjob("e2e-flux-finished", JOBS_NS, runtime=FINISHED, num_nodes=1))
    h.create_trainjob(api, h.trainjob("e2e-flux-pending", JOBS_NS, runtime=PENDING, num_nodes=1, suspend=True))
    h.wait_trainjob_complete(api, JOBS_NS, "e2e-flux-finished")
    return revision


@pytest.fixture(scope="module")
def v2_3_0_folder(on_v2_2_0, fleet, tctl) -> Path:
    """The CI job's render of v2.3.0 into the fleet folder, not yet committed."""
    tctl.run(*_render_args(tctl, "v2.3.0", fleet), kube=False)
    return fleet.folder


@pytest.fixture(scope="module")
def on_v2_3_0(v2_3_0_folder, fleet, api) -> str:
    """The v2.3.0 folder committed and reconciled at once (as `flux reconcile source git` does);
    the revision Flux applied."""
    revision = fleet.commit("trainer v2.3.0")
    _request_reconcile(api, GITREPO)
    _wait_ready(api, revision)
    return revision


def test_1_flux_installs_v2_2_0_in_stage_order_and_the_real_controllers_run_a_trainjob(flux, on_v2_2_0, api):
    revision = on_v2_2_0
    stages = _stage_order(api)
    assert stages == [f"trainer-{f}" for f in ("00-crds", "01-namespaces", "02-rbac", "03-config", "04-workloads",
                                               "05-webhooks", "06-admitted")]
    assert _applies(flux, revision) == stages
    assert not _warnings(api)

    assert h.deployment_available(api, KF_NS, h.TRAINER_DEPLOYMENT)
    assert h.deployment_available(api, KF_NS, h.JOBSET_DEPLOYMENT)
    pod = trainer_pods(api)[0]
    assert pod["status"]["containerStatuses"][0]["imageID"] == V22
    h.create_trainjob(api, h.trainjob("e2e-flux-done", JOBS_NS))
    h.wait_trainjob_complete(api, JOBS_NS, "e2e-flux-done")


def test_2_the_ci_gate_checks_the_v2_3_0_folder_against_the_cluster_before_it_is_merged(v2_3_0_folder, tctl):
    check = tctl.run("upgrade-check", "-f", str(v2_3_0_folder), "-n", KF_NS, "-o", "json")
    assert not json.loads(check.stdout)["blocking"]
    diff = tctl.run("diff", "-f", str(v2_3_0_folder), "-n", KF_NS, expect=1)
    assert "trainer-controller-manager:v2.3.0" in diff.stdout
    said = diff.stdout + diff.stderr
    # Flux keeps runtimes the render dropped; diff says which of them an unfinished TrainJob still needs.
    assert f"{PENDING}" in said and f"{JOBS_NS}/e2e-flux-pending" in said, said
    assert FINISHED in said, said


def test_3_flux_upgrades_in_stage_order_keeps_the_runtime_a_suspended_job_needs(flux, on_v2_3_0, api):
    assert _applies(flux, on_v2_3_0) == _stage_order(api)
    assert not _warnings(api)
    h.wait_until(lambda: [
        p for p in trainer_pods(api)
        if (p["status"].get("containerStatuses") or [{}])[0].get("imageID") == V23 and h.condition(p, "Ready") == "True"],
        120, "the v2.3.0 binary to run the trainer pod")
    for name in (PENDING, FINISHED):  # Flux never prunes runtimes (trainerctl reports them, test 2)
        kept = api.request("GET", f"{CTR}/{name}")
        assert not kept["metadata"].get("deletionTimestamp"), name
    merge_patch(api, f"{TRAINER}/namespaces/{JOBS_NS}/trainjobs/e2e-flux-pending", {"spec": {"suspend": False}})
    h.wait_trainjob_complete(api, JOBS_NS, "e2e-flux-pending")


def _live_versions(api, folder: Path) -> dict[str, str]:
    from trainerctl.gitops.folder import load_folder

    out = {}
    for obj in load_folder(folder).objects:
        meta = obj["metadata"]
        group, _, version = obj["apiVersion"].rpartition("/")
        base = f"/apis/{group}/{version}" if group else f"/api/{version}"
        plural = _plural(api, group, version, obj["kind"])
        path = f"{base}/namespaces/{meta['namespace']}/{plural}/{meta['name']}" if meta.get("namespace") \
            else f"{base}/{plural}/{meta['name']}"
        out[path] = api.request("GET", path)["metadata"]["resourceVersion"]
    return out


def _plural(api, group: str, version: str, kind: str) -> str:
    path = f"/apis/{group}/{version}" if group else f"/api/{version}"
    for res in api.request("GET", path)["resources"]:
        if res["kind"] == kind and "/" not in res["name"]:
            return res["name"]
    raise AssertionError(f"{kind} not served")


def test_4_a_second_reconcile_changes_nothing_and_the_rotators_fields_survive(on_v2_3_0, fleet, tctl, api):
    certs = (h.cert_state(api, KF_NS, h.TRAINER_SECRET, h.TRAINER_WEBHOOKS),
             h.cert_state(api, KF_NS, h.JOBSET_SECRET, h.JOBSET_WEBHOOKS))
    assert certs[0]["secret"].get("tls.crt") and all(certs[0][n][0] for _, n in h.TRAINER_WEBHOOKS)
    before = _live_versions(api, fleet.folder)
    events = len(api.request("GET", f"/api/v1/namespaces/{FLUX_NS}/events")["items"])
    tokens = {k["metadata"]["name"]: _request_reconcile(api, f"{KS}/{k['metadata']['name']}") for k in _kustomizations(api)}
    h.wait_until(lambda: all(
        (k.get("status") or {}).get("lastHandledReconcileAt") == tokens[k["metadata"]["name"]]
        and h.condition(k, "Ready") == "True" for k in _kustomizations(api)),
                 FLUX_TIMEOUT, "every Kustomization to handle the reconcile request")
    assert _live_versions(api, fleet.folder) == before
    assert (h.cert_state(api, KF_NS, h.TRAINER_SECRET, h.TRAINER_WEBHOOKS),
            h.cert_state(api, KF_NS, h.JOBSET_SECRET, h.JOBSET_WEBHOOKS)) == certs
    new = api.request("GET", f"/api/v1/namespaces/{FLUX_NS}/events")["items"][events:]
    assert not [e for e in new if "configured" in (e.get("message") or "") or "created" in (e.get("message") or "")]
    assert not _warnings(api)
    assert tctl.run("diff", "-f", str(fleet.folder), "-n", KF_NS).returncode == 0


# -- Argo CD ------------------------------------------------------------------------------
def _waves(objects: list[dict]) -> list[tuple[int, list[dict]]]:
    from trainerctl.gitops.argocd import SYNC_WAVE

    by_wave: dict[int, list[dict]] = {}
    for obj in objects:
        by_wave.setdefault(int(obj["metadata"]["annotations"][SYNC_WAVE]), []).append(obj)
    return sorted(by_wave.items())


def _apply_wave(tctl, objects: list[dict]):
    import subprocess

    from tests.support.kubectl import kubectl_binary

    return subprocess.run([kubectl_binary(), "--kubeconfig", tctl.kubeconfig, "apply", "--server-side",
                           "--field-manager=argocd-controller", "-f", "-"], input=yaml.safe_dump_all(objects),
                          capture_output=True, text=True)


def _healthy(api, obj: dict) -> bool:
    """Argo CD's health for the kinds in the folder: CRDs Established, Deployments rolled out, the rest at once."""
    meta = obj["metadata"]
    if obj["kind"] == "CustomResourceDefinition":
        crd = api.get_or_none(f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{meta['name']}")
        return h.condition(crd, "Established") == "True"
    if obj["kind"] == "Deployment":
        return bool(h.deployment_available(api, meta["namespace"], meta["name"], obj["spec"].get("replicas", 1)))
    return True


def test_5_the_argocd_folder_applied_wave_by_wave_converges(flux, fleet, tctl, api, tmp_path):
    from tests.support.kubectl import kustomize

    _remove_flux(api, flux)
    cleanup_trainer(tctl, api, (KF_NS, JOBS_NS))
    out = tmp_path / "argocd"
    tctl.run("render", *tctl.source_args("v2.3.0"), "--output-dir", str(out), "--gitops", "argocd", "--gitops-repo",
             fleet.url, "--gitops-path", FOLDER, kube=False)
    built = kustomize(out / "stages")
    assert built.returncode == 0, built.stderr
    objects = [d for d in yaml.safe_load_all(built.stdout) if d]
    waves = _waves(objects)
    assert [w for w, _ in waves] == list(range(7))
    for wave, members in waves:
        def applied(members=members):  # the Application's retry policy: a webhook not answering yet is tried again
            proc = _apply_wave(tctl, members)
            return proc.returncode == 0 or Not(proc.stderr)

        h.wait_until(applied, h.INSTALL_TIMEOUT, f"wave {wave} to apply", interval=5)
        for obj in members:
            h.wait_until(lambda obj=obj: _healthy(api, obj),
                         h.INSTALL_TIMEOUT, f"wave {wave}: {obj['kind']} {obj['metadata']['name']} healthy")
    h.create_namespace(api, JOBS_NS)
    h.create_trainjob(api, h.trainjob("e2e-argo-done", JOBS_NS))
    h.wait_trainjob_complete(api, JOBS_NS, "e2e-argo-done")
    certs = h.cert_state(api, KF_NS, h.TRAINER_SECRET, h.TRAINER_WEBHOOKS)
    assert certs["secret"].get("tls.crt") and all(certs[n][0] for _, n in h.TRAINER_WEBHOOKS)
    # A second sync (selfHeal does one every few minutes) changes nothing and leaves the rotator's fields.
    before = _live_versions(api, out)
    for _, members in waves:
        again = _apply_wave(tctl, members)
        assert again.returncode == 0, again.stderr
    assert _live_versions(api, out) == before
    assert h.cert_state(api, KF_NS, h.TRAINER_SECRET, h.TRAINER_WEBHOOKS) == certs
    assert tctl.run("diff", "-f", str(out), "-n", KF_NS).returncode == 0
