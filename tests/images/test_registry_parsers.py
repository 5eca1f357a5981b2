"""Property tests of what the registry client parses from outside: WWW-Authenticate challenges,
credential files, image references, and registry answers. Each returns a value or one
TrainerctlError line, never another exception (fixed seed: tests/support/properties.py)."""

from __future__ import annotations

import json
import string

from hypothesis import given
from hypothesis import strategies as st

from tests.support.properties import PROPERTY
from trainerctl.errors import TrainerctlError
from trainerctl.net.transport import Response
from trainerctl.registry.auth import CredentialStore, _key
from trainerctl.registry.client import Registries, RegistryError, _registry_message, parse_challenge
from trainerctl.registry.names import DOCKER_HUB, locate

tokens = st.sampled_from(["Bearer", "Basic", "Digest", "bearer", "realm", "service", "scope", "=", ",", '"', "\\",
                          " ", "https://auth.example.com/token", "repository:a/b:pull", "error=\"insufficient_scope\""])
headers = st.lists(tokens, max_size=20).map("".join) | st.text(max_size=200)


@PROPERTY
@given(header=headers)
def test_any_challenge_parses_or_is_none(header):
    found = parse_challenge(header)
    assert found is None or (found[0] in ("bearer", "basic") and isinstance(found[1], dict))


def test_challenges_docker_hub_and_quay_send():
    assert parse_challenge('Bearer realm="https://auth.docker.io/token",service="registry.docker.io",'
                           'scope="repository:library/busybox:pull"') == \
        ("bearer", {"realm": "https://auth.docker.io/token", "service": "registry.docker.io",
                    "scope": "repository:library/busybox:pull"})
    assert parse_challenge('Basic realm="Registry Realm"') == ("basic", {"realm": "Registry Realm"})
    assert parse_challenge('Basic realm="x", Bearer realm="https://t/x",service=s')[0] == "bearer"
    assert parse_challenge('Bearer realm="a \\"quoted\\" realm"')[1]["realm"] == 'a "quoted" realm'


json_values = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=20),
                           lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner,
                                                                                       max_size=3), max_leaves=10)
configs = st.fixed_dictionaries({}, optional={
    "auths": st.dictionaries(st.sampled_from(["quay.io", "https://index.docker.io/v1/", "127.0.0.1:5000/ns", "x"]),
                             st.dictionaries(st.sampled_from(["auth", "username", "password", "identitytoken",
                                                              "registrytoken"]),
                                             st.text(alphabet=string.printable, max_size=20) | json_values),
                             max_size=3) | json_values,
    "credsStore": st.sampled_from(["", "../x", "pass"]) | json_values,
    "credHelpers": st.dictionaries(st.text(max_size=10), st.text(max_size=10)) | json_values,
})


@PROPERTY
@given(config=configs | json_values, registry=st.sampled_from(["quay.io", "docker.io", "127.0.0.1:5000"]))
def test_any_credential_file_gives_a_credential_nothing_or_one_line(tmp_path_factory, config, registry):
    path = tmp_path_factory.mktemp("cfg") / "config.json"
    path.write_text(json.dumps(config))
    store = CredentialStore(str(path), env={"PATH": ""})
    try:
        found = store.lookup(registry, "ns/repo")
    except TrainerctlError as exc:
        assert "\n" not in str(exc)
    else:
        assert found is None or found.where


def test_auth_keys_as_docker_and_podman_write_them():
    assert _key("https://index.docker.io/v1/") == _key("docker.io") == _key("registry-1.docker.io") == DOCKER_HUB
    assert _key("https://quay.io") == _key("quay.io/") == "quay.io"
    assert _key("Quay.IO/ns/repo") == "quay.io/ns/repo"


@PROPERTY
@given(image=st.text(alphabet=string.ascii_lowercase + string.digits + "./:@-_", max_size=80))
def test_any_image_reference_is_located_or_one_line(image):
    try:
        loc = locate(image)
    except TrainerctlError as exc:
        assert "\n" not in str(exc)
    else:
        assert loc.registry and loc.repository and loc.reference


def test_docker_hub_names():
    loc = locate("busybox")
    assert (loc.registry, loc.api_host, loc.repository, loc.reference) == \
        ("docker.io", "registry-1.docker.io", "library/busybox", "latest")
    assert locate("docker.io/library/busybox:1").repository == "library/busybox"
    assert locate("index.docker.io/user/x@sha256:" + "a" * 64).reference == "sha256:" + "a" * 64
    assert locate("localhost:5000/x:1").registry == "localhost:5000"
    assert locate("quay.io/a/b:t@sha256:" + "b" * 64).pinned("sha256:" + "c" * 64) == "quay.io/a/b@sha256:" + "c" * 64


@PROPERTY
@given(body=st.binary(max_size=300) | json_values.map(lambda v: json.dumps(v).encode()),
       content_type=st.sampled_from(["application/json", "text/html", ""]))
def test_any_registry_body_is_a_manifest_digest_a_message_or_one_line(body, content_type):
    resp = Response(200, "OK", {"content-type": content_type}, body)
    assert "\n" not in _registry_message(resp)
    try:
        digest = Registries._checked_body_digest(locate("quay.io/a/b:1"), resp)
    except RegistryError as exc:
        assert "\n" not in str(exc)
    else:
        assert digest.startswith("sha256:")


@PROPERTY
@given(doc=st.fixed_dictionaries({}, optional={"images": st.dictionaries(
    st.sampled_from(["odh-vllm-cuda-image", "quay.io/a/b", "", "x"]) | st.text(max_size=10),
    st.sampled_from(["quay.io/a/b@sha256:" + "c" * 64, "quay.io/a/b:1", "Not/Valid", ""]) | json_values,
    max_size=4) | json_values, "extra": json_values}) | json_values)
def test_any_overrides_file_is_a_mapping_of_valid_images_or_one_line(tmp_path_factory, doc):
    from trainerctl.render.image_refs import parse_image
    from trainerctl.render.overrides_file import read_overrides

    path = tmp_path_factory.mktemp("pins") / "pins.yaml"
    path.write_text(json.dumps(doc))
    try:
        found = read_overrides(str(path))
    except TrainerctlError as exc:
        assert "\n" not in str(exc) and str(exc).startswith(f"--images-from {path}")
    else:
        assert all(isinstance(k, str) and k and parse_image(v) for k, v in found.items())
