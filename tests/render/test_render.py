"""`trainerctl render` end to end against local git mirrors of ../shared/upstream."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path

import pytest
import yaml

from tests.support.render import all_refs
from tests.support.schema import validate_against_crd, validate_imagestream
from tests.support.kubectl import kustomize
from trainerctl.cli import main
from trainerctl.kustomize.yamlio import dump_all, load_all
from trainerctl.source import SourceCache, walk_tree

OWNER = ("platform.opendatahub.io/part-of", "trainer")
DEFAULT_OVERLAY = {"opendatahub-trainer": "rhoai", "kubeflow-trainer": "overlays/manager"}


@pytest.fixture(scope="session")
def cache(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("source-cache")


@pytest.fixture
def cli(capsys, monkeypatch, tmp_path, cache, remotes):
    """Run trainerctl in-process in an empty cwd; returns (exit code, stdout, stderr)."""
    monkeypatch.chdir(tmp_path)
    for var in [v for v in __import__("os").environ if v.startswith("RELATED_IMAGE_")]:
        monkeypatch.delenv(var)

    def run(*args: str, mirrors_on: bool = True):
        extra = ["--cache-dir", str(cache)]
        if mirrors_on and args and args[0] == "render":
            extra += [a for m in remotes.mirrors for a in ("--remote-mirror", m)]
        code = main([*args, *extra])
        captured = capsys.readouterr()
        return code, captured.out, captured.err

    return run


def source_args(mirrors, repo: str, ref: str) -> list[str]:
    return ["--source", f"file://{mirrors[repo]}", "--ref", ref]


def kubectl_kustomize(path: Path) -> str:
    out = kustomize(path)
    assert out.returncode == 0, out.stderr
    return out.stdout


def without_owner_label(objects: list[dict]) -> list[dict]:
    out = copy.deepcopy(objects)
    for obj in out:
        labels = obj["metadata"].get("labels", {})
        labels.pop(OWNER[0], None)
        if not labels:
            obj["metadata"].pop("labels", None)
    return out


def load(text: str) -> list[dict]:
    return [d for d in load_all(text) if d is not None]


def _overlay_namespace(overlay_dir: Path) -> str:
    return yaml.safe_load((overlay_dir / "kustomization.yaml").read_text())["namespace"]


# Without ../shared there are no refs: one placeholder case lets the `upstream` fixture skip (or
# fail under TRAINERCTL_REQUIRE_SHARED=1) instead of pytest silently collecting nothing.
REFS = all_refs() or [("absent", "absent")]


@pytest.mark.parametrize("repo, ref", REFS)
def test_every_ref_renders_like_kubectl(repo, ref, cli, mirrors, upstream, remotes, tmp_path):
    from tests.support.remotes import rewrite_tree

    args = ["render", *source_args(mirrors, repo, ref)]
    code, first, err = cli(*args)
    assert code == 0, err
    code, second, _ = cli(*args)
    assert code == 0 and first == second, "two renders differ"
    objects = load(first)
    assert objects
    for obj in objects:
        assert obj["metadata"]["labels"][OWNER[0]] == OWNER[1], obj["metadata"]
    # The overlay part: the same bytes as kubectl kustomize of that overlay, ownership label aside.
    overlay = DEFAULT_OVERLAY[repo]
    tree = rewrite_tree(upstream / repo / ref / "manifests", tmp_path / "manifests", remotes)
    namespace = _overlay_namespace(tree / overlay)
    # kubectl keeps upstream's bundled ImageStreams; so does render for OpenShift.
    code, manifests, err = cli(*args, "--component", "manifests", "--namespace", namespace,
                               "--platform", "openshift")
    assert code == 0, err
    assert dump_all(without_owner_label(load(manifests))) == kubectl_kustomize(tree / overlay)
    # With the install namespace changed, it equals kubectl's own namespace overlay.
    wrapper = tmp_path / "wrapper"
    wrapper.mkdir()
    (wrapper / "kustomization.yaml").write_text(yaml.safe_dump({
        "namespace": "trainer-test", "labels": [{"pairs": {OWNER[0]: OWNER[1]}}],
        "resources": [f"../manifests/{overlay}"],
    }))
    code, moved, err = cli(*args, "--component", "manifests", "--namespace", "trainer-test",
                           "--platform", "openshift")
    assert code == 0, err
    assert moved == kubectl_kustomize(wrapper)


def _images_by_value(objects: list[dict]) -> dict[str, set[tuple[str, str, str]]]:
    """Every string leaf -> {(kind, name, path)}."""
    found: dict[str, set] = {}

    def walk(node, path, where):
        if isinstance(node, dict):
            for k, v in node.items():
                walk(v, f"{path}.{k}" if path else k, where)
        elif isinstance(node, list):
            for i, v in enumerate(node):
                key = v.get("name", i) if isinstance(v, dict) else i
                walk(v, f"{path}[{key}]", where)
        elif isinstance(node, str):
            found.setdefault(node, set()).add((*where, path))

    for obj in objects:
        name = re.sub(r"-[a-z0-9]{10}$", "-HASH", obj["metadata"]["name"])  # generated ConfigMap names
        walk(obj, "", (obj["kind"], name))
    return found


NODE = "spec.template.spec.replicatedJobs[node].template.spec.template.spec.containers[node].image"
INIT = "spec.template.spec.replicatedJobs[node].template.spec.template.spec.initContainers[vllm-sidecar].image"


def test_related_images_land_exactly_where_they_should(cli, mirrors, monkeypatch, cache):
    args = ["render", *source_args(mirrors, "opendatahub-trainer", "odh-3.5.0"), "--platform", "openshift"]
    code, baseline, err = cli(*args)
    assert code == 0, err
    values = {var: f"registry.example.com/override/{var.lower().replace('_', '-')}:1" for var in (
        "RELATED_IMAGE_ODH_TRAINER_IMAGE", "RELATED_IMAGE_ODH_TH_TORCH_CUDA_PY312_IMAGE",
        "RELATED_IMAGE_ODH_TH_TORCH_ROCM_PY312_IMAGE", "RELATED_IMAGE_ODH_TH_TORCH_CPU_PY312_IMAGE",
        "RELATED_IMAGE_RHAII_MODEL_OPT_CUDA_IMAGE", "RELATED_IMAGE_RHAII_VLLM_CUDA_IMAGE")}
    for var, value in values.items():
        monkeypatch.setenv(var, value)
    code, out, err = cli(*args)
    assert code == 0, err
    found = _images_by_value(load(out))
    cm = ("ConfigMap", "rhoai-config-HASH")  # upstream's params.env as a ConfigMap: the source, not a use

    def runtimes(*names):
        return {("ClusterTrainingRuntime", name, NODE) for name in names}

    def tags(accel, key):
        return {("ImageStream", f"training-hub-universal-{accel}", "spec.tags[3.5].from.name"),
                (*cm, f"data.odh-training-universal-workbench-image-{accel}-3-5")}

    expected = {
        "RELATED_IMAGE_ODH_TRAINER_IMAGE": {
            ("Deployment", "kubeflow-trainer-controller-manager", "spec.template.spec.containers[manager].image"),
            (*cm, "data.odh-kubeflow-trainer-controller-image")},
        "RELATED_IMAGE_ODH_TH_TORCH_CUDA_PY312_IMAGE": {*runtimes("torch-distributed", "torch-distributed-cuda130-torch211-py312",
                                                                 "training-hub", "training-hub-th09-cuda130-torch211-py312"),
                                                        *tags("cuda", "cuda")},
        "RELATED_IMAGE_ODH_TH_TORCH_ROCM_PY312_IMAGE": {*runtimes("torch-distributed-rocm", "torch-distributed-rocm714-torch211-py312",
                                                                 "training-hub-rocm", "training-hub-th09-rocm714-torch211-py312"),
                                                        *tags("rocm", "rocm")},
        "RELATED_IMAGE_ODH_TH_TORCH_CPU_PY312_IMAGE": {*runtimes("torch-distributed-cpu", "torch-distributed-cpu-torch211-py312",
                                                                "training-hub-cpu", "training-hub-th09-cpu-torch211-py312"),
                                                       *tags("cpu", "cpu")},
        "RELATED_IMAGE_RHAII_MODEL_OPT_CUDA_IMAGE": {*runtimes("speculator-model-opt-cuda", "vllm-extract-cuda")},
        "RELATED_IMAGE_RHAII_VLLM_CUDA_IMAGE": {("ClusterTrainingRuntime", "vllm-extract-cuda", INIT)},
    }
    for var, value in values.items():
        assert found.get(value) == expected[var], var
    # nothing else changed: every other leaf of the baseline is still there, in the same place
    base = _images_by_value(load(baseline))
    changed = {place for places in expected.values() for place in places}
    for value, places in base.items():
        if re.fullmatch(r"rhoai-config-[a-z0-9]{10}", value):
            continue  # the generated ConfigMap's name hashes its data, which did change
        assert places - changed <= found.get(value, set()), value
    # the work copy took the edits, the cache did not
    for tree_dir in (SourceCache(cache).root / "trees").iterdir():
        meta = json.loads((tree_dir / "source.json").read_text())
        assert walk_tree(tree_dir / "manifests") == meta["digest"]
    # unset next time: reverts
    for var in values:
        monkeypatch.delenv(var)
    assert cli(*args)[1] == baseline
    # --require-registry catches what is still upstream's (pinned runtimes, 3.4 tags)
    for var, value in values.items():
        monkeypatch.setenv(var, value)
    code, _, err = cli(*args, "--require-registry", "registry.example.com")
    assert code == 1 and "point elsewhere" in err and "quay.io/opendatahub/" in err
    code, _, err = cli(*args, "--component", "runtimes", "--require-registry", "registry.example.com")
    assert code == 0, err


def test_image_flags_and_kubeflow_images_transformer(cli, mirrors, monkeypatch):
    args = ["render", *source_args(mirrors, "kubeflow-trainer", "v2.3.0"), "--component", "manifests"]
    monkeypatch.setenv("RELATED_IMAGE_ODH_TRAINER_IMAGE", "registry.example.com/trainer:9")
    code, out, err = cli(*args, "--image", "registry.k8s.io/jobset/jobset=registry.example.com/jobset@sha256:" + "1" * 64)
    assert code == 0, err
    images = {o["metadata"]["name"]: [c["image"] for c in o["spec"]["template"]["spec"]["containers"]]
              for o in load(out) if o["kind"] == "Deployment"}
    assert images["kubeflow-trainer-controller-manager"] == ["registry.example.com/trainer:9"]
    assert images["jobset-controller-manager"] == ["registry.example.com/jobset@sha256:" + "1" * 64]
    code, _, err = cli(*args, "--image", "no-such-param=registry.example.com/x:1")
    assert code == 2 and "no params.env of this render has that key" in err
    code, _, err = cli(*args, "--image", "RELATED_IMAGE_ODH_TRAINER_IMAGE=Not/Valid")
    assert code == 2 and "not a valid image reference" in err


OUR_RUNTIMES = {
    "torch-distributed", "torch-distributed-rocm", "torch-distributed-cpu", "torch-distributed-cuda130-torch211-py312",
    "torch-distributed-rocm714-torch211-py312", "torch-distributed-cpu-torch211-py312", "training-hub",
    "training-hub-rocm", "training-hub-cpu", "training-hub-th09-cuda130-torch211-py312",
    "training-hub-th09-rocm714-torch211-py312", "training-hub-th09-cpu-torch211-py312", "speculator-model-opt-cuda",
    "vllm-extract-cuda"}


@pytest.mark.parametrize("repo, ref", REFS)
def test_our_runtimes_validate_against_the_rendered_crds(repo, ref, cli, mirrors):
    code, out, err = cli("render", *source_args(mirrors, repo, ref), "--platform", "openshift")
    assert code == 0, err
    assert "left out" not in err  # every ref we ship takes every runtime
    objects = load(out)
    ours = [o for o in objects if o["kind"] == "ClusterTrainingRuntime" and o["metadata"]["name"] in OUR_RUNTIMES]
    assert {o["metadata"]["name"] for o in ours} == OUR_RUNTIMES
    for obj in ours:
        # Through the webhook like the operator's: no opt-out label.
        assert "trainer.kubeflow.org/webhook-validation" not in obj["metadata"]["labels"]
        assert validate_against_crd(obj, objects) == [], obj["metadata"]["name"]
    streams = [o for o in objects if o["kind"] == "ImageStream"]
    assert {o["metadata"]["name"] for o in streams} >= {f"training-hub-universal-{a}" for a in ("cpu", "cuda", "rocm")}
    for obj in streams:
        assert validate_imagestream(obj) == [], obj["metadata"]["name"]
        assert obj["metadata"]["namespace"] == "opendatahub"


def test_sets_platform_and_configmaps(cli, mirrors):
    args = ["render", *source_args(mirrors, "kubeflow-trainer", "v2.3.0")]
    code, out, err = cli(*args)
    assert code == 0, err
    objects = load(out)
    assert not [o for o in objects if o["kind"] == "ImageStream"]  # kubernetes: no ImageStreams
    assert not [o for o in objects if o["kind"] == "ConfigMap" and o["metadata"]["name"].startswith("trainerctl-")]
    assert [o for o in objects if o["kind"] == "ClusterTrainingRuntime"]
    code, out, err = cli(*args, "--component", "runtimes")
    assert code == 0 and {o["kind"] for o in load(out)} == {"ClusterTrainingRuntime"}
    code, _, err = cli(*args, "--component", "imagestreams")
    assert code == 2 and "--platform openshift" in err
    code, out, err = cli(*args, "--component", "imagestreams", "--platform", "openshift")
    assert code == 0 and {o["kind"] for o in load(out)} == {"ImageStream"}
    code, _, err = cli(*args, "--component", "bogus")
    assert code == 2 and "expected some of" in err


def test_owner_label_never_in_selectors(cli, mirrors):
    code, out, err = cli("render", *source_args(mirrors, "opendatahub-trainer", "odh-3.5.0"),
                         "--owner-label", "example.com/owner=me")
    assert code == 0, err
    objects = load(out)
    assert all(o["metadata"]["labels"]["example.com/owner"] == "me" for o in objects)
    assert not any(OWNER[0] in o["metadata"]["labels"] for o in objects)
    text = json.dumps([{k: v for k, v in o.items() if k != "metadata"} for o in objects])
    assert "example.com/owner" not in text  # not in selectors, pod templates or webhook selectors
    code, _, err = cli("render", *source_args(mirrors, "opendatahub-trainer", "odh-3.5.0"), "--owner-label", "bad key=x")
    assert code == 2 and "not a valid label key" in err


def test_json_and_output_dir(cli, mirrors, tmp_path):
    args = ["render", *source_args(mirrors, "opendatahub-trainer", "odh-3.5.0")]
    _, as_yaml, _ = cli(*args)
    code, as_json, err = cli(*args, "-o", "json")
    assert code == 0, err
    assert json.loads(as_json)["items"] == load(as_yaml)
    out = tmp_path / "gitops"
    code, stdout, err = cli(*args, "--output-dir", str(out))
    assert code == 0 and stdout == "", err
    index = yaml.safe_load((out / "kustomization.yaml").read_text())
    assert len(index["resources"]) == len(load(as_yaml))
    assert [load((out / f).read_text())[0] for f in index["resources"]] == load(as_yaml)
    assert kubectl_kustomize(out).count("\nkind: ") + 1 >= len(index["resources"])
    code, _, err = cli(*args, "--output-dir", str(out), "--component", "runtimes")
    assert code == 0, err
    assert sorted(p.name for p in out.iterdir()) == sorted(
        [*yaml.safe_load((out / "kustomization.yaml").read_text())["resources"], "kustomization.yaml"])
    assert not list(out.glob("deployment_*"))  # dropped objects' files are gone
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("mine")
    code, _, err = cli(*args, "--output-dir", str(foreign))
    assert code == 2 and "not written by trainerctl" in err


def test_local_checkout_renders_the_same(cli, mirrors, upstream):
    code, from_git, err = cli("render", *source_args(mirrors, "opendatahub-trainer", "odh-3.5.0"))
    assert code == 0, err
    code, from_path, err = cli("render", "--source", str(upstream / "opendatahub-trainer" / "odh-3.5.0"))
    assert code == 0, err
    assert from_git == from_path
    code, _, err = cli("render", "--source", str(upstream / "opendatahub-trainer" / "odh-3.5.0"), "--ref", "x")
    assert code == 2


def test_overlay_choice(cli, mirrors):
    args = ["render", *source_args(mirrors, "kubeflow-trainer", "v2.3.0"), "--component", "runtimes"]
    code, _, err = cli(*args[:-2], "--overlay", "overlays/runtimes", "--component", "manifests")
    assert code == 0, err
    for bad in ("../escape", "/etc", "no/such/dir"):
        code, _, err = cli(*args[:-2], "--overlay", bad)
        assert code == 2, bad


def test_library_api(mirrors, cache, remotes, monkeypatch, tmp_path):
    from trainerctl.render import RenderOptions, render
    from trainerctl.render.output import write_stream

    monkeypatch.chdir(tmp_path)
    result = render(RenderOptions(source_url=f"file://{mirrors['opendatahub-trainer']}", ref="odh-3.5.0",
                                  cache_dir=cache, env={}, platform="openshift"))
    assert result.source.overlay == "rhoai" and result.source.trainer_version == "2.1.0"
    assert len(result.source.commit) == 40 and result.source.digest.startswith("sha256:")
    assert result.namespace == "opendatahub" and result.owner_label == OWNER
    assert result.objects == [o for name in ("manifests", "runtimes", "imagestreams") for o in result.components[name]]
    assert write_stream(result.objects, "yaml") == write_stream(copy.deepcopy(result.objects), "yaml")


def test_manager_patches_are_part_of_the_manifests_set(mirrors, cache, monkeypatch, tmp_path):
    from trainerctl.render.controller import resolve
    from trainerctl.render import RenderOptions, render

    monkeypatch.chdir(tmp_path)
    result = render(RenderOptions(source_url=f"file://{mirrors['opendatahub-trainer']}", ref="odh-3.5.0",
                                  cache_dir=cache, env={}, manager=resolve(ha=True)))
    pdbs = [o for o in result.components["manifests"] if o["kind"] == "PodDisruptionBudget"]
    assert len(pdbs) == 1 and pdbs[0]["metadata"]["labels"][OWNER[0]] == OWNER[1]
    assert result.objects == [o for name in ("manifests", "runtimes") for o in result.components[name]]


def test_kubernetes_render_leaves_out_openshift_objects(mirrors, cache, monkeypatch, tmp_path):
    """Upstream rhoai bundles ImageStreams; a plain Kubernetes API server would refuse them."""
    from trainerctl.render import RenderOptions, render

    monkeypatch.chdir(tmp_path)
    result = render(RenderOptions(source_url=f"file://{mirrors['opendatahub-trainer']}", ref="odh-3.5.0",
                                  cache_dir=cache, env={}, platform="kubernetes"))
    assert not [o for o in result.objects if o["apiVersion"].startswith("image.openshift.io/")]
    assert result.objects == [o for name in ("manifests", "runtimes") for o in result.components[name]]


def test_a_render_that_fails_leaves_the_engine_cache_as_it_found_it(upstream, monkeypatch, tmp_path):
    """The engine keeps parses between renders, but only a render that succeeds writes them: one
    that fails after its builds (here: an image outside --require-registry) writes nothing."""
    from trainerctl.errors import TrainerctlError
    from trainerctl.render import RenderOptions, render

    monkeypatch.chdir(tmp_path)
    cache = tmp_path / "cache"
    source = upstream / "opendatahub-trainer" / "odh-3.5.0"
    with pytest.raises(TrainerctlError, match="require-registry"):
        render(RenderOptions(source_path=source, cache_dir=cache, env={}, require_registry="nowhere.example"))
    assert not (cache / "kustomize").exists() or not list((cache / "kustomize").iterdir())
    first = render(RenderOptions(source_path=source, cache_dir=cache, env={}))
    assert list((cache / "kustomize").iterdir())
    assert render(RenderOptions(source_path=source, cache_dir=cache, env={})).objects == first.objects
