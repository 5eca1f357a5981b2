"""The mirroring workflow against real registries and a real API server: every image of the render
moved into the test registries (anonymous, Basic and token auth), `images --pin-digests
--write-overrides` resolves them, `check --images` names a missing one, `install --check-images`
refuses it before anything is applied, and `install --images-from` runs exactly the pinned digests."""

from __future__ import annotations

import base64
import json
import os

import pytest
import yaml

from tests.support.cluster import FakeController, ODH_NS, prepare_cluster_for_odh
from tests.support.registry import USERS
from tests.support.actions import session
from trainerctl.cli import main
from trainerctl.render import RenderOptions, render
from trainerctl.render.image_refs import image_fields


@pytest.fixture
def workdir(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for var in [v for v in os.environ if v.startswith(("RELATED_IMAGE_", "REGISTRY_AUTH_FILE", "DOCKER_CONFIG",
                                                       "XDG_", "HTTP_PROXY", "HTTPS_PROXY", "http_proxy",
                                                       "https_proxy"))]:
        monkeypatch.delenv(var)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("TRAINERCTL_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path


def _run(capsys, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_mirror_pin_check_and_install_exactly_the_digests(env, registry_stack, workdir, shared_dir, capsys):
    source = str(shared_dir / "upstream" / "opendatahub-trainer" / "odh-3.5.0")
    ca = ["--registry-ca", str(registry_stack.ca_file)]
    code, out, _ = _run(capsys, "images", "--source", source, "-o", "json")
    listed = json.loads(out)["images"]
    # Mirror every image into the test registries, a third behind each kind of auth.
    kinds = ("tls", "basic", "token")
    mirrored, pushed = {}, {}
    for n, item in enumerate(listed):
        repo = f"mirror/{item['repository'].rsplit('/', 1)[-1]}"
        tag = item.get("tag") or f"pinned{n}"
        pushed[(repo, tag)] = registry_stack.push(repo, tag)
        mirrored[item["image"]] = f"{registry_stack.hosts[kinds[n % 3]]}/{repo}:{tag}"
    images = {key: mirrored[item["image"]] for item in listed for key in item["paramsKeys"]}
    (workdir / "trainerctl.yaml").write_text(yaml.safe_dump({"images": images}))
    docker = workdir / ".docker" / "config.json"
    docker.parent.mkdir()
    docker.write_text(json.dumps({"auths": {
        registry_stack.hosts[kind]: {"auth": base64.b64encode(f"{user}:{USERS[user]}".encode()).decode()}
        for kind, user in (("basic", "alice"), ("token", "bob"))}}))

    code, out, err = _run(capsys, "images", "--source", source, "--pin-digests", "--write-overrides", "pins.yaml", *ca)
    assert code == 0, err
    pins = yaml.safe_load((workdir / "pins.yaml").read_text())["images"]
    expected = {}
    for image in mirrored.values():
        host, _, rest = image.partition("/")
        repo, _, tag = rest.rpartition(":")
        expected[image] = f"{host}/{repo}@{pushed[(repo, tag)]}"
    assert sorted(out.split()) == sorted(set(expected.values()))
    assert {key: pins[key] for key in images} == {key: expected[value] for key, value in images.items()}

    code, out, err = _run(capsys, "check", "--kubeconfig", env.kubeconfig, "-n", ODH_NS, "--source", source,
                          "--images-from", "pins.yaml", "--images", *ca, "-o", "json")
    findings = {f["check"]: f for f in json.loads(out)["findings"]}
    assert findings["images"] == {"check": "images", "status": "ok", "message": "every image exists at its registry"}

    # One image that is not in the registry: named by check, refused by install before anything.
    key = next(iter(images))
    missing = images[key].rsplit(":", 1)[0] + ":not-mirrored"
    code, out, err = _run(capsys, "check", "--kubeconfig", env.kubeconfig, "-n", ODH_NS, "--source", source,
                          "--image", f"{key}={missing}", "--images", *ca, "-o", "json")
    findings = {f["check"]: f for f in json.loads(out)["findings"]}
    assert code == 3 and findings["images"]["status"] == "fail"
    assert [d for d in findings["images"]["details"] if missing in d and d.startswith("missing: ")]
    code, out, err = _run(capsys, "install", "--kubeconfig", env.kubeconfig, "-n", ODH_NS, "--source", source,
                          "--image", f"{key}={missing}", "--check-images", *ca)
    (line,) = [line for line in err.splitlines() if line.startswith("error:")]
    assert code == 3 and out == "" and err.endswith(line + "\n")
    assert line.startswith(f"error: --check-images: 1 image(s) missing or not checkable: missing: {missing}: not found at ")
    assert session(env.cluster, ODH_NS).resources.read_inventory() is None  # nothing applied

    # Install from the overrides: every container runs exactly the pinned digest.
    prepare_cluster_for_odh(env.cluster)
    objects = render(RenderOptions(source_path=source, images=pins, env={}, use_lock=False)).objects
    with FakeController(env, objects):
        code, out, err = _run(capsys, "install", "--kubeconfig", env.kubeconfig, "-n", ODH_NS, "--source", source,
                              "--images-from", "pins.yaml", "--require-digests", "--timeout", "60")
    assert code == 0, err
    deploy = env.get(f"/apis/apps/v1/namespaces/{ODH_NS}/deployments/kubeflow-trainer-controller-manager")
    assert deploy["spec"]["template"]["spec"]["containers"][0]["image"] == pins["odh-kubeflow-trainer-controller-image"]
    runtimes = env.get("/apis/trainer.kubeflow.org/v1alpha1/clustertrainingruntimes")["items"]
    live = {f.image for r in runtimes for f in image_fields(r)}
    assert live and live <= set(expected.values())
