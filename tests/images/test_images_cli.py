"""`trainerctl images` on the command line: outputs, bad input (one line, exit 2, nothing written)."""

from __future__ import annotations

import json
import os

import pytest
import yaml

from trainerctl.cli import main


@pytest.fixture
def run(capsys, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    for var in [v for v in os.environ if v.startswith("RELATED_IMAGE_")]:
        monkeypatch.delenv(var)

    def _run(*args):
        code = main(list(args))
        out = capsys.readouterr()
        return code, out.out, out.err

    return _run


@pytest.fixture
def odh(shared_dir):
    return str(shared_dir / "upstream" / "opendatahub-trainer" / "odh-3.5.0")


def test_plain_json_and_oc_mirror(run, odh):
    code, out, _ = run("images", "--source", odh, "--platform", "openshift")
    assert code == 0 and len(out.splitlines()) == 14 and out.splitlines() == sorted(out.splitlines())
    code, out, _ = run("images", "--source", odh, "--platform", "openshift", "-o", "json")
    doc = json.loads(out)
    assert code == 0 and doc["source"]["overlay"] == "rhoai" and "images" not in doc["source"]
    assert {i["image"] for i in doc["images"]} == set(run("images", "--source", odh, "--platform", "openshift")[1].split())
    code, out, _ = run("images", "--source", odh, "-c", "manifests", "-o", "oc-mirror")
    assert code == 0 and yaml.safe_load(out)["apiVersion"] == "mirror.openshift.io/v2alpha1"


def test_a_rendered_file_lists_its_images(run, odh, tmp_path):
    code, out, _ = run("render", "--source", odh)
    (tmp_path / "trainer.yaml").write_text(out)
    code, listed, _ = run("images", "-f", "trainer.yaml")
    assert code == 0 and listed == run("images", "--source", odh)[1]
    code, out, _ = run("images", "-f", "trainer.yaml", "-o", "json")
    assert {i["origin"] for i in json.loads(out)["images"]} == {"the rendered objects"}


@pytest.mark.parametrize("args, message", [
    (["-o", "yaml"], "-o 'yaml': expected one of plain, json, oc-mirror"),
    (["--write-overrides", "x.yaml"], "--write-overrides: needs --pin-digests"),
    (["--pin-digests", "--write-overrides", ""], "--write-overrides '': expected a file name"),
    (["--registry-ca", ""], "--registry-ca '': expected a file"),
    (["--registry-config", ""], "--registry-config '': expected a file"),
    (["--plain-http", "http://registry.example.com"], "--plain-http 'http://registry.example.com': give host"),
    (["--plain-http", "registry.example.com/path"], "--plain-http 'registry.example.com/path': expected a registry"),
    (["-f", "trainer.yaml", "--overlay", "rhoai"], "-f trainer.yaml and --overlay"),
    (["-f", "trainer.yaml", "-c", "runtimes"], "-f trainer.yaml and --component"),
    (["-f", "trainer.yaml", "--pin-digests", "--write-overrides", "x.yaml"], "--write-overrides and -f"),
    (["--pin-digests", "--registry-config", "absent.json"], "--registry-config absent.json: cannot read: file not found"),
    (["--pin-digests", "--registry-config", "trainer.yaml"], "--registry-config trainer.yaml: not JSON"),
    (["--pin-digests", "--registry-ca", "absent.pem"], "--registry-ca absent.pem: cannot read: file not found"),
    (["--pin-digests", "--registry-ca", "trainer.yaml"], "--registry-ca trainer.yaml: expected PEM certificates"),
])
def test_bad_input_is_one_line_and_writes_nothing(run, odh, tmp_path, args, message):
    (tmp_path / "trainer.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n")
    code, out, err = run("images", *(["--source", odh] if "-f" not in args else []), *args)
    assert code == 2 and out == "" and err.count("\n") == 1 and message in err, err
    assert not (tmp_path / "x.yaml").exists()


def test_images_from_overrides_render_and_image_wins(run, odh, tmp_path):
    digest = "sha256:" + "a" * 64
    (tmp_path / "pins.yaml").write_text(f"images:\n  odh-kubeflow-trainer-controller-image: quay.io/opendatahub/trainer@{digest}\n"
                                        f"  odh-vllm-cuda-image: quay.io/opendatahub/vllm@{digest}\n")
    code, out, _ = run("images", "--source", odh, "--images-from", "pins.yaml", "-o", "json")
    images = {i["image"]: i for i in json.loads(out)["images"]}
    assert code == 0 and f"quay.io/opendatahub/trainer@{digest}" in images
    assert images[f"quay.io/opendatahub/vllm@{digest}"]["origin"] == "--images-from pins.yaml: images: odh-vllm-cuda-image"
    code, out, _ = run("images", "--source", odh, "--images-from", "pins.yaml",
                       "--image", "odh-vllm-cuda-image=quay.io/opendatahub/vllm:flag")
    assert "quay.io/opendatahub/vllm:flag" in out.split() and f"quay.io/opendatahub/trainer@{digest}" in out.split()


@pytest.mark.parametrize("text, message", [
    ("images: {no-such-key: quay.io/a/b:1}\n", "--images-from pins.yaml: images: no-such-key: no params.env of this render"),
    ("images: {odh-vllm-cuda-image: 'Bad Ref'}\n", "--images-from pins.yaml: images: odh-vllm-cuda-image: 'Bad Ref' is not"),
    ("images: []\n", "--images-from pins.yaml: expected YAML with an `images:` mapping"),
])
def test_a_bad_overrides_file_is_one_line(run, odh, tmp_path, text, message):
    (tmp_path / "pins.yaml").write_text(text)
    code, out, err = run("render", "--source", odh, "--images-from", "pins.yaml")
    assert code == 2 and out == "" and err.count("\n") == 1 and message in err, err


def test_images_from_is_refused_next_to_a_rendered_file(run, tmp_path):
    (tmp_path / "trainer.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n")
    code, _, err = run("images", "-f", "trainer.yaml", "--images-from", "pins.yaml")
    assert code == 2 and "-f trainer.yaml and --images-from" in err


def test_an_unknown_key_is_named_where_it_was_written(run, odh, tmp_path):
    """Every image setting names its own origin when no params.env has its key: the flag, the
    overrides file, or trainerctl.yaml."""
    (tmp_path / "trainerctl.yaml").write_text("images:\n  no-such-key: quay.io/a/b:1\n")
    code, _, err = run("render", "--source", odh)
    assert code == 2 and err.startswith("error: trainerctl.yaml: images: no-such-key: no params.env of this render")
    (tmp_path / "trainerctl.yaml").unlink()
    code, _, err = run("render", "--source", odh, "--image", "other-key=quay.io/a/b:1")
    assert code == 2 and err.startswith("error: --image other-key: no params.env of this render")


def test_require_digests(run, odh, tmp_path, shared_dir):
    code, out, err = run("render", "--source", odh, "--require-digests")
    (line,) = [line for line in err.splitlines() if line.startswith("error:")]
    assert code == 1 and out == "" and err.endswith(line + "\n")
    assert line.startswith("error: --require-digests: 9 image(s) are given by tag alone: quay.io/opendatahub/trainer:")
    assert "docs/images.md#pinning-digests" in err
    # every image pinned (the digests are made up: nothing asks a registry here)
    code, out, _ = run("images", "--source", odh, "-o", "json")
    keys = {k: i["image"] for i in json.loads(out)["images"] for k in i["paramsKeys"]}
    pins = {k: image.split(":")[0].split("@")[0] + "@sha256:" + "e" * 64 for k, image in keys.items()}
    (tmp_path / "pins.yaml").write_text(yaml.safe_dump({"images": pins}))
    code, out, err = run("render", "--source", odh, "--images-from", "pins.yaml", "--require-digests")
    assert code == 0, err
    (tmp_path / "trainerctl.yaml").write_text("requireDigests: true\n")
    code, _, err = run("render", "--source", odh)
    assert code == 1 and "error: trainerctl.yaml: requireDigests: 9 image(s) are given by tag alone" in err
    assert run("render", "--source", odh, "--images-from", "pins.yaml")[0] == 0
    (tmp_path / "trainerctl.yaml").write_text("requireDigests: sometimes\n")
    code, _, err = run("render", "--source", odh)
    assert code == 2 and "trainerctl.yaml: requireDigests: expected true or false" in err


@pytest.fixture(scope="module")
def hostile_registry():
    from tests.support.registry import HostileRegistry

    server = HostileRegistry()
    yield server
    server.stop()


@pytest.mark.parametrize("case", ["missing tag", "bad credentials", "unreachable", "garbage", "huge"])
def test_a_failing_registry_is_one_line_and_nothing_is_written(run, odh, tmp_path, monkeypatch, registry_stack,
                                                                hostile_registry, case):
    import base64
    import socket

    monkeypatch.setenv("HOME", str(tmp_path))
    for name in ("REGISTRY_AUTH_FILE", "DOCKER_CONFIG", "XDG_RUNTIME_DIR", "XDG_CONFIG_HOME"):
        monkeypatch.delenv(name, raising=False)
    wrong = "wrong-password-for-alice"
    (tmp_path / "auth.json").write_text(json.dumps({"auths": {registry_stack.hosts["basic"]: {
        "auth": base64.b64encode(f"alice:{wrong}".encode()).decode()}}}))
    registry_stack.push("cli/vllm", "1")
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        closed = f"127.0.0.1:{sock.getsockname()[1]}"
    image, expected = {
        "missing tag": (f"{registry_stack.hosts['tls']}/cli/vllm:absent", "not found at"),
        "bad credentials": (f"{registry_stack.hosts['basic']}/cli/vllm:1", "refused the credentials from"),
        "unreachable": (f"{closed}/cli/vllm:1", f"cannot reach the registry {closed}: connection refused"),
        "garbage": (f"{hostile_registry.host}/garbage/vllm:1", "answered with something that is not a manifest"),
        "huge": (f"{hostile_registry.host}/huge/vllm:1", "larger than the 4 MiB limit"),
    }[case]
    keys = ("odh-th-torch-cuda-py312-image", "odh-th-torch-rocm-py312-image", "odh-th-torch-cpu-py312-image",
            "odh-speculator-model-opt-cuda-image", "odh-vllm-cuda-image")  # every image of the runtimes: this one
    code, out, err = run("images", "--source", odh, "-c", "runtimes", *[a for k in keys for a in ("--image", f"{k}={image}")],
                         "--pin-digests", "--write-overrides", "pins.yaml", "--registry-ca", str(registry_stack.ca_file),
                         "--registry-config", "auth.json", "--plain-http", closed, "--plain-http", hostile_registry.host)
    errors = [line for line in err.splitlines() if line.startswith("error:")]
    assert code == 1 and out == "" and len(errors) == 1 and err.endswith(errors[0] + "\n"), err
    assert errors[0].startswith(f"error: --pin-digests: {image}: ") and expected in errors[0] and wrong not in err
    assert "more image(s) failed" not in errors[0]
    assert not (tmp_path / "pins.yaml").exists()
