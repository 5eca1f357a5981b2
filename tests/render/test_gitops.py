"""`render --gitops flux|argocd` folders, judged without a cluster.

The layout follows trainerctl's stage policy, every stage folder builds with trainerctl's kustomize
byte for byte as with `kubectl kustomize`, the engine objects order and wait as install does, no
controller-written field is in the folder, and the same inputs give the same bytes. The real Flux
controllers judge the Flux folder in tests/e2e/test_e2e_gitops.py, which also applies the Argo CD
folder wave by wave.
"""

from __future__ import annotations

import copy
import json
import os
from pathlib import Path

import pytest
import yaml

from tests.support.kubectl import kustomize
from trainerctl.cluster.trainer.policy import NEVER_PRUNE, RECREATE_KINDS, STAGES
from trainerctl.gitops import argocd, flux
from trainerctl.gitops.folder import load_folder
from trainerctl.gitops.layout import GitopsSettings, guess_resource, prepare, repo_path
from trainerctl.gitops.writer import gitops_files
from trainerctl.kustomize import build_yaml
from trainerctl.render import RenderOptions, render
from trainerctl.render.output import write_dir, write_files

KF_NS = "kubeflow-system"
REPO = "https://git.example.com/fleet.git"
RUNTIME_KINDS = ("ClusterTrainingRuntime", "TrainingRuntime")


@pytest.fixture(scope="module")
def renders(mirrors, remotes, tmp_path_factory):
    """kubeflow v2.2.0 and v2.3.0 overlays/manager and odh-3.5.0 rhoai, rendered from the git mirrors."""
    cache = tmp_path_factory.mktemp("gitops-cache")
    out = {}
    for repo, ref, overlay, ns in (("kubeflow-trainer", "v2.2.0", "overlays/manager", KF_NS),
                                   ("kubeflow-trainer", "v2.3.0", "overlays/manager", KF_NS),
                                   ("opendatahub-trainer", "odh-3.5.0", "rhoai", "opendatahub")):
        out[ref] = render(RenderOptions(source_url=f"file://{mirrors[repo]}", ref=ref, overlay=overlay, namespace=ns,
                                        cache_dir=cache, remote_mirrors=list(remotes.mirrors), use_lock=False,
                                        env={}))
    return out


def files_for(result, engine: str, path: str = "clusters/prod/trainer") -> dict[str, str]:
    return gitops_files(result.objects, result.source, GitopsSettings(engine, path, REPO),
                        namespace=result.namespace, owner_label=result.owner_label)


def docs(text: str) -> list[dict]:
    return [d for d in yaml.safe_load_all(text) if d]


def stage_objects(files: dict[str, str]) -> list[tuple[str, dict]]:
    """(stage folder, object) for every object file of every stage, in folder order."""
    out = []
    for rel in sorted(files):
        parts = rel.split("/")
        if parts[0] == "stages" and len(parts) == 3 and parts[2] != "kustomization.yaml":
            out.extend((parts[1], d) for d in docs(files[rel]))
    return out


def expected_stage(obj: dict, crd_plurals: dict, hooked: set[tuple[str, str]]) -> str:
    """The stage install would give `obj`, worked out here from the rule README states, not
    from trainerctl's policy table."""
    group = obj["apiVersion"].rpartition("/")[0]
    kind = obj["kind"]
    by_kind = {"CustomResourceDefinition": "crds", "Namespace": "namespaces", "ClusterRole": "rbac",
               "ClusterRoleBinding": "rbac", "Role": "rbac", "RoleBinding": "rbac", "Deployment": "workloads",
               "StatefulSet": "workloads", "DaemonSet": "workloads", "ValidatingWebhookConfiguration": "webhooks",
               "MutatingWebhookConfiguration": "webhooks"}
    if kind in by_kind:
        return by_kind[kind]
    if (group, crd_plurals.get((group, kind), "")) in hooked or (group == "trainer.kubeflow.org" and kind in RUNTIME_KINDS):
        return "admitted"
    return "config"


def hooked_resources(objects: list[dict]) -> set[tuple[str, str]]:
    return {(g, r.split("/")[0]) for o in objects if o["kind"].endswith("WebhookConfiguration")
            for h in o.get("webhooks") or [] for rule in h.get("rules") or []
            for g in rule.get("apiGroups") or [] for r in rule.get("resources") or []}


@pytest.mark.parametrize("ref", ["v2.2.0", "v2.3.0", "odh-3.5.0"])
@pytest.mark.parametrize("engine", ["flux", "argocd"])
def test_stage_folders_hold_every_object_once_in_install_order(renders, ref, engine):
    result = renders[ref]
    files = files_for(result, engine)
    placed = stage_objects(files)
    crd_plurals = {(o["spec"]["group"], o["spec"]["names"]["kind"]): o["spec"]["names"]["plural"]
                   for o in result.objects if o["kind"] == "CustomResourceDefinition"}
    hooked = hooked_resources(result.objects)
    for folder, obj in placed:
        index, _, stage = folder.partition("-")
        assert stage == expected_stage(obj, crd_plurals, hooked), (folder, obj["kind"], obj["metadata"]["name"])
        assert int(index) == STAGES.index(stage)
    scoped = {(o["spec"]["group"], o["spec"]["names"]["kind"]) for o in result.objects
              if o["kind"] == "CustomResourceDefinition" and o["spec"]["scope"] == "Cluster"}

    def identity(o: dict) -> tuple:  # kustomize stamps a namespace on cluster-scoped custom kinds too
        cluster_scoped = (o["apiVersion"].rpartition("/")[0], o["kind"]) in scoped
        return o["apiVersion"], o["kind"], None if cluster_scoped else o["metadata"].get("namespace"), o["metadata"]["name"]

    rendered = {identity(o) for o in result.objects}
    in_folder = [identity(o) for _, o in placed]
    assert len(in_folder) == len(set(in_folder))
    assert set(in_folder) - rendered <= {("v1", "Namespace", None, result.namespace)}
    assert rendered <= set(in_folder) and ("v1", "Namespace", None, result.namespace) in set(in_folder)
    assert not [o for _, o in placed if (o["apiVersion"].rpartition("/")[0], o["kind"]) in scoped
                and o["metadata"].get("namespace")]
    for _, obj in placed:  # the folder holds the render's objects, only annotated for the engine
        assert obj["metadata"]["labels"][result.owner_label[0]] == result.owner_label[1]


@pytest.mark.parametrize("ref", ["v2.3.0", "odh-3.5.0"])
def test_no_controller_written_field_is_in_the_folder(renders, ref):
    for engine in ("flux", "argocd"):
        files = files_for(renders[ref], engine)
        assert not any("caBundle" in text for rel, text in files.items() if rel.startswith("stages/"))
        secrets = [o for _, o in stage_objects(files) if o["kind"] == "Secret"]
        assert secrets and all("data" not in s and "stringData" not in s for s in secrets)


def test_flux_kustomizations_apply_in_stage_order_and_wait_where_install_waits(renders):
    result = renders["v2.3.0"]
    files = files_for(result, "flux")
    root = docs(files["kustomization.yaml"])[0]
    engine = [d for name in root["resources"] for d in docs(files[name])]
    source, kustomizations = engine[0], engine[1:]
    assert source["kind"] == "GitRepository" and source["spec"]["url"] == REPO
    assert source["spec"]["ref"] == {"branch": "main"}
    assert source["spec"]["ignore"] == "/*\n!/clusters/prod/trainer/\n"
    folders = sorted({f for f, _ in stage_objects(files)})
    assert [k["spec"]["path"] for k in kustomizations] == [f"./clusters/prod/trainer/stages/{f}" for f in folders]
    previous = None
    objects = [o for _, o in stage_objects(files)]
    for k, folder in zip(kustomizations, folders):
        spec = k["spec"]
        assert k["apiVersion"] == "kustomize.toolkit.fluxcd.io/v1" and k["metadata"]["namespace"] == "flux-system"
        assert spec["sourceRef"] == {"kind": "GitRepository", "name": "trainer", "namespace": "flux-system"}
        assert spec.get("dependsOn") == ([{"name": previous}] if previous else None)
        assert spec["prune"] is True and spec["commonMetadata"] == {"labels": dict([result.owner_label])}
        assert spec["interval"] == "10m" and spec["timeout"] == "5m" and spec["retryInterval"] == "1m"
        mine = [o for f, o in stage_objects(files) if f == folder]
        assert spec.get("force", False) == any((o["apiVersion"].rpartition("/")[0], o["kind"]) in RECREATE_KINDS
                                               for o in mine)
        checks = {(c["kind"], c.get("namespace"), c["name"]) for c in spec.get("healthChecks", [])}
        stage = folder.partition("-")[2]
        if stage == "crds":
            assert checks == {("CustomResourceDefinition", None, o["metadata"]["name"]) for o in mine}
        elif stage == "webhooks":
            deployments = {("Deployment", o["metadata"]["namespace"], o["metadata"]["name"]) for o in objects
                           if o["kind"] == "Deployment"}
            services = {("Endpoints", h["clientConfig"]["service"]["namespace"], h["clientConfig"]["service"]["name"])
                        for o in objects if o["kind"].endswith("WebhookConfiguration") for h in o["webhooks"]}
            assert len(deployments) == 2 and len(services) == 2
            assert checks == deployments | services
            assert spec["healthCheckExprs"] == [{"apiVersion": "v1", "kind": "Endpoints",
                                                 "current": flux.ENDPOINTS_READY}]
        else:
            assert not checks
        previous = k["metadata"]["name"]
        assert k["metadata"]["annotations"]["trainerctl.io/commit"] == result.source.commit
    for obj in objects:
        group = obj["apiVersion"].rpartition("/")[0]
        kept = (group, obj["kind"]) in NEVER_PRUNE or obj["kind"] in RUNTIME_KINDS
        assert (obj["metadata"].get("annotations") or {}).get(flux.PRUNE) == ("disabled" if kept else None)


def test_flux_without_a_repo_uses_the_bootstrap_source(renders):
    result = renders["v2.3.0"]
    files = gitops_files(result.objects, result.source, GitopsSettings("flux", ""), namespace=result.namespace,
                         owner_label=result.owner_label)
    engine = [d for name in docs(files["kustomization.yaml"])[0]["resources"] for d in docs(files[name])]
    assert {d["kind"] for d in engine} == {"Kustomization"}
    assert {d["spec"]["sourceRef"]["name"] for d in engine} == {"flux-system"}
    assert engine[0]["spec"]["path"] == "./stages/00-crds"


def test_argocd_waves_follow_the_stage_order(renders):
    result = renders["v2.3.0"]
    files = files_for(result, "argocd")
    placed = stage_objects(files)
    assert placed
    for folder, obj in placed:
        annotations = obj["metadata"]["annotations"]
        assert annotations[argocd.SYNC_WAVE] == str(STAGES.index(folder.partition("-")[2])), folder
        group = obj["apiVersion"].rpartition("/")[0]
        expected = {True: "Prune=false,Delete=false"}.get((group, obj["kind"]) in NEVER_PRUNE,
                                                            "Prune=false" if obj["kind"] in RUNTIME_KINDS else None)
        assert annotations.get(argocd.SYNC_OPTIONS) == expected
    waves = [int(o["metadata"]["annotations"][argocd.SYNC_WAVE]) for _, o in placed]
    assert waves == sorted(waves) and len(set(waves)) == len({f for f, _ in placed})
    everything = docs(build_yaml(str(_written(files) / "stages")))
    assert len(everything) == len(placed)  # the Application's path builds every stage


def _written(files: dict[str, str]) -> Path:
    import tempfile

    out = Path(tempfile.mkdtemp(prefix="gitops-")) / "out"
    write_files(out, files)
    return out


@pytest.mark.parametrize("fleet", [False, True])
def test_argocd_application_applies_server_side_and_leaves_the_rotators_fields(renders, fleet):
    result = renders["v2.3.0"]
    files = files_for(result, "argocd")
    root = docs(files["fleet/kustomization.yaml" if fleet else "kustomization.yaml"])[0]
    prefix = "fleet/" if fleet else ""
    [app] = [d for name in root["resources"] for d in docs(files[prefix + name])]
    assert app["kind"] == ("ApplicationSet" if fleet else "Application")
    spec = app["spec"]["template"]["spec"] if fleet else app["spec"]
    assert spec["source"] == {"repoURL": REPO, "targetRevision": "main", "path": "clusters/prod/trainer/stages"}
    assert spec["destination"]["namespace"] == KF_NS
    assert spec["destination"]["server"] == ("{{.server}}" if fleet else "https://kubernetes.default.svc")
    options = spec["syncPolicy"]["syncOptions"]
    assert "ServerSideApply=true" in options and "RespectIgnoreDifferences=true" in options
    assert spec["syncPolicy"]["automated"] == {"prune": True, "selfHeal": True}
    ignored = {(d["kind"], d.get("name")): d for d in spec["ignoreDifferences"]}
    objects = [o for _, o in stage_objects(files)]
    for kind in ("ValidatingWebhookConfiguration", "MutatingWebhookConfiguration"):
        assert ignored[(kind, None)]["jqPathExpressions"] == [".webhooks[]?.clientConfig.caBundle"]
    assert ignored[("CustomResourceDefinition", None)]["jsonPointers"] == ["/spec/conversion/webhook/clientConfig/caBundle"]
    secrets = {o["metadata"]["name"] for o in objects if o["kind"] == "Secret"}
    assert secrets == {n for k, n in ignored if k == "Secret"} and secrets
    annotations = app["metadata"]["annotations"]
    for key, value in (("source", result.source.url), ("ref", "v2.3.0"), ("commit", result.source.commit)):
        assert annotations[f"trainerctl.io/{key}"] == value
    assert "ghcr.io/kubeflow/trainer/trainer-controller-manager:v2.3.0" in annotations["trainerctl.io/images"].split()


@pytest.mark.parametrize("engine", ["flux", "argocd"])
def test_every_kustomization_in_the_folder_builds_like_kubectl(renders, engine, tmp_path):
    out = tmp_path / "out"
    write_files(out, files_for(renders["odh-3.5.0"], engine))
    folders = sorted(p.parent for p in out.rglob("kustomization.yaml"))
    assert len(folders) >= 8
    for folder in folders:
        theirs = kustomize(folder)
        assert theirs.returncode == 0, theirs.stderr
        assert build_yaml(str(folder)) == theirs.stdout, folder


@pytest.mark.parametrize("engine", ["flux", "argocd"])
def test_same_inputs_give_the_same_bytes(renders, mirrors, remotes, engine, tmp_path):
    first = files_for(renders["v2.3.0"], engine)
    again = render(RenderOptions(source_url=f"file://{mirrors['kubeflow-trainer']}", ref="v2.3.0",
                                 overlay="overlays/manager", namespace=KF_NS, cache_dir=tmp_path / "cache",
                                 remote_mirrors=list(remotes.mirrors), use_lock=False, env={}))
    assert files_for(again, engine) == first
    a, b = tmp_path / "a", tmp_path / "b"
    write_files(a, first)
    write_files(b, files_for(again, engine))
    write_files(b, files_for(again, engine))  # rewriting in place changes nothing either
    read = lambda root: {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}  # noqa: E731
    assert read(a) == read(b) and set(read(a)) == set(first)


def test_rewriting_removes_what_the_render_no_longer_has(renders, tmp_path):
    out = tmp_path / "out"
    write_files(out, files_for(renders["odh-3.5.0"], "flux"))
    v23 = files_for(renders["v2.3.0"], "argocd")
    write_files(out, v23)
    on_disk = {p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()}
    assert on_disk == set(v23)
    assert {p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_dir()} == \
        {str(Path(rel).parent) for rel in v23 if "/" in rel} | {"stages"}
    (out / "stages" / "NOTES.md").write_text("ours, not trainerctl's")
    write_dir(renders["v2.2.0"].objects, out)  # back to a plain folder: the stages go, our notes stay
    assert sorted(p.name for p in (out / "stages").iterdir()) == ["NOTES.md"]
    assert load_folder(out).engine is None


@pytest.mark.parametrize("engine", ["flux", "argocd"])
def test_a_folder_reads_back_as_the_objects_it_holds(renders, engine, tmp_path):
    result = renders["v2.3.0"]
    write_files(tmp_path / "out", files_for(result, engine))
    folder = load_folder(tmp_path / "out")
    assert folder.engine == engine
    assert folder.provenance["commit"] == result.source.commit and folder.provenance["ref"] == "v2.3.0"
    prepared = [o for s in prepare(result.objects, result.namespace, result.owner_label) for o in s.objects]
    strip = lambda o: json.dumps({**o, "metadata": {k: v for k, v in o["metadata"].items() if k != "annotations"}},  # noqa: E731
                                 sort_keys=True)
    assert sorted(map(strip, folder.objects)) == sorted(map(strip, prepared))


def test_repo_path_comes_from_the_work_tree_or_the_flag(tmp_path):
    from trainerctl.errors import InputError

    (tmp_path / "repo" / ".git").mkdir(parents=True)
    assert repo_path(tmp_path / "repo" / "clusters" / "prod", None) == "clusters/prod"
    assert repo_path(tmp_path / "repo", None) == ""
    assert repo_path("whatever", "./a//b/") == "a/b"
    for bad in ("/abs", "../up", "a/../../b", "https://x/y"):
        with pytest.raises(InputError, match="--gitops-path"):
            repo_path("x", bad)
    with pytest.raises(InputError, match="--gitops-path"):
        repo_path(tmp_path / "elsewhere", None)


def test_a_wait_stage_with_nothing_to_apply_hands_its_checks_to_the_stage_before(renders):
    objects = [o for o in copy.deepcopy(renders["v2.3.0"].objects) if not o["kind"].endswith("WebhookConfiguration")]
    stages = prepare(objects, KF_NS, renders["v2.3.0"].owner_label)
    assert "webhooks" not in {s.name for s in stages}
    checks = flux.health_checks(stages)
    workloads = next(s for s in stages if s.name == "workloads")
    assert {c["kind"] for c in checks[workloads.folder]} == {"Deployment"}
    assert [s.spec for s in stages] == [s for s in STAGES if s.name in {x.name for x in stages}]


def test_kind_to_resource_rule_matches_every_built_in_kind(test_cluster):
    """The offline stage split names resources the way the API server does, for every kind it serves."""
    from trainerctl.cluster.client.client import connect

    cluster = connect(kubeconfig=str(test_cluster.admin_kubeconfig))
    from trainerctl.cluster.client.discovery import Discovery

    resources = Discovery(cluster).all_resources()
    assert len(resources) > 40
    wrong = [(r.kind, r.resource) for r in resources if guess_resource(r.kind) != r.resource]
    assert not wrong


def test_diff_of_a_folder_names_the_runtimes_an_engine_left_and_who_still_uses_them(env, renders, tmp_path, capsys):
    """A GitOps engine never prunes runtimes; `diff -f DIR` says which ones the folder dropped
    and whether an unfinished TrainJob still needs each. (No controllers run here, so the webhook
    configurations stay out: nothing would answer them.)"""
    from tests.support.cluster import apply_raw, wait_served
    from trainerctl.cli import main

    result = renders["v2.3.0"]
    objects = [o for o in result.objects if not o["kind"].endswith("WebhookConfiguration")]
    extra = []
    for name in ("gitops-dropped-used", "gitops-dropped-unused"):
        runtime = copy.deepcopy(next(o for o in objects if o["metadata"]["name"] == "torch-distributed"))
        runtime["metadata"]["name"] = name
        extra.append(runtime)
    first, second = tmp_path / "first", tmp_path / "second"
    for folder, members in ((first, objects + extra), (second, objects)):
        write_files(folder, gitops_files(members, result.source, GitopsSettings("flux", "trainer"),
                                         namespace=KF_NS, owner_label=result.owner_label))
    crds = [obj for obj in load_folder(first).objects if obj["kind"] == "CustomResourceDefinition"]
    for obj in crds:  # what kustomize-controller applies, stage by stage
        apply_raw(env.cluster, obj, "kustomize-controller")
    for obj in crds:  # kustomize-controller's health check before the next stage
        wait_served(env.cluster, obj)
    for obj in load_folder(first).objects:
        if obj["kind"] != "CustomResourceDefinition":
            apply_raw(env.cluster, obj, "kustomize-controller")
    env.cluster.request("POST", f"/apis/trainer.kubeflow.org/v1alpha1/namespaces/{KF_NS}/trainjobs", body={
        "apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob",
        "metadata": {"name": "still-running", "namespace": KF_NS},
        "spec": {"runtimeRef": {"name": "gitops-dropped-used"}}})
    args = ["-f", str(second), "-n", KF_NS, "--kubeconfig", env.kubeconfig]
    assert main(["diff", *args]) == 0  # nothing else differs: kept runtimes are not drift
    err = capsys.readouterr().err
    assert f"gitops-dropped-used: no longer rendered, left on the cluster; still used by unfinished TrainJob " \
           f"{KF_NS}/still-running" in err, err
    assert "gitops-dropped-unused: no longer rendered, left on the cluster; no unfinished TrainJob uses it: " \
           "delete it (kubectl delete clustertrainingruntime gitops-dropped-unused)" in err, err
    assert main(["upgrade-check", *args]) == 0
    assert "nothing blocks the upgrade" in capsys.readouterr().out


def test_render_command_writes_the_same_folder(renders, mirrors, remotes, tmp_path, monkeypatch, capsys):
    """`trainerctl render --output-dir --gitops` in a git work tree: the path comes from it, and the
    files are the writer's, byte for byte."""
    from trainerctl.cli import main

    monkeypatch.chdir(tmp_path)
    for var in [v for v in os.environ if v.startswith("RELATED_IMAGE_")]:
        monkeypatch.delenv(var)  # the fixture renders with no image overrides
    (tmp_path / "fleet" / ".git").mkdir(parents=True)
    out = tmp_path / "fleet" / "clusters" / "prod" / "trainer"
    args = ["render", "--source", f"file://{mirrors['kubeflow-trainer']}", "--ref", "v2.3.0", "--overlay",
            "overlays/manager", "-n", KF_NS, "--cache-dir", str(tmp_path / "cache"), "--no-lock",
            *[a for m in remotes.mirrors for a in ("--remote-mirror", m)]]
    for engine in ("flux", "argocd"):
        assert main([*args, "--output-dir", str(out), "--gitops", engine, "--gitops-repo", REPO]) == 0
        captured = capsys.readouterr()
        assert captured.out == "" and f"wrote a {engine} folder to {out}" in captured.err
        on_disk = {p.relative_to(out).as_posix(): p.read_text() for p in out.rglob("*") if p.is_file()}
        assert on_disk == files_for(renders["v2.3.0"], engine)
