"""The registry client against real registries (tests/support/registry.py): crane's registry
holds the images; distribution registries in front of it serve them over TLS with no auth, Basic
auth (htpasswd) and Docker token auth. Digests are compared with what crane itself reports."""

from __future__ import annotations

import base64
import json
import os
import stat
from pathlib import Path

import pytest

from trainerctl.errors import TrainerctlError
from trainerctl.registry.auth import CredentialStore, HelperFailed
from trainerctl.registry.client import NotFound, Registries, RegistryError, RegistrySettings
from trainerctl.registry.names import locate
from trainerctl.trust import redact
from tests.support.registry import IDENTITY_TOKENS, USERS


@pytest.fixture(scope="module")
def pushed(registry_stack) -> dict[str, str]:
    """image (repository:tag) -> digest, pushed into crane's registry."""
    one = registry_stack.push("odh/trainer", "3.5")
    two = registry_stack.push("odh/trainer", "arm64")
    return {"odh/trainer:3.5": one, "odh/trainer:arm64": two,
            "odh/multi:1": registry_stack.push_index("odh/multi", "1", f"odh/trainer@{one}", f"odh/trainer@{two}"),
            "private/secret:1": registry_stack.push("private/secret", "1")}


@pytest.fixture
def home(tmp_path, monkeypatch) -> Path:
    """An empty HOME: no docker or podman credentials, no certs.d of the machine."""
    for name in ("REGISTRY_AUTH_FILE", "DOCKER_CONFIG", "XDG_RUNTIME_DIR", "XDG_CONFIG_HOME", "HTTPS_PROXY",
                 "https_proxy", "HTTP_PROXY", "http_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    return tmp_path


def _docker_config(home: Path, config: dict) -> Path:
    path = home / ".docker" / "config.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(config))
    return path


def _auth(user: str) -> str:
    return base64.b64encode(f"{user}:{USERS[user]}".encode()).decode()


def _settings(stack, **kw) -> RegistrySettings:
    return RegistrySettings(ca_file=str(stack.ca_file), certs_dirs=(), **kw)


def test_anonymous_over_plain_http_and_tls(registry_stack, pushed, home):
    plain = Registries(RegistrySettings(plain_http=frozenset({registry_stack.backend}), certs_dirs=()), env=os.environ)
    assert plain.digest(locate(f"{registry_stack.backend}/odh/trainer:3.5")) == pushed["odh/trainer:3.5"]
    tls = Registries(_settings(registry_stack))
    for image, digest in pushed.items():
        assert tls.digest(locate(f"{registry_stack.hosts['tls']}/{image}")) == digest


def test_an_index_resolves_to_the_index_digest(registry_stack, pushed, home):
    """A multi-arch tag is what a runtime pulls: the index, not one platform's manifest."""
    tls = Registries(_settings(registry_stack))
    digest = tls.digest(locate(f"{registry_stack.hosts['tls']}/odh/multi:1"))
    assert digest == pushed["odh/multi:1"] == registry_stack.crane("digest", f"{registry_stack.backend}/odh/multi:1").strip()


def test_basic_auth_from_the_docker_config(registry_stack, pushed, home):
    host = registry_stack.hosts["basic"]
    image = locate(f"{host}/odh/trainer:3.5")
    with pytest.raises(RegistryError, match=f"{host} needs credentials .Basic auth.: log in with `docker login"):
        Registries(_settings(registry_stack)).digest(image)
    _docker_config(home, {"auths": {f"https://{host}": {"auth": _auth("alice")}}})
    assert Registries(_settings(registry_stack)).digest(image) == pushed["odh/trainer:3.5"]
    _docker_config(home, {"auths": {host: {"username": "alice", "password": "wrong-password"}}})
    with pytest.raises(RegistryError) as err:
        Registries(_settings(registry_stack)).digest(image)
    assert "refused the credentials from" in str(err.value) and "wrong-password" not in str(err.value)


def test_token_auth_anonymous_user_and_identity_token(registry_stack, pushed, home):
    host = registry_stack.hosts["token"]
    public, private = locate(f"{host}/odh/trainer:3.5"), locate(f"{host}/private/secret:1")
    anonymous = Registries(_settings(registry_stack))
    assert anonymous.digest(public) == pushed["odh/trainer:3.5"]
    with pytest.raises(RegistryError, match="refused anonymous access"):
        anonymous.digest(private)
    config = _docker_config(home, {"auths": {host: {"auth": _auth("bob")}}})
    assert Registries(_settings(registry_stack)).digest(private) == pushed["private/secret:1"]
    token = next(iter(IDENTITY_TOKENS))
    config.write_text(json.dumps({"auths": {host: {"identitytoken": token}}}))
    assert Registries(_settings(registry_stack)).digest(private) == pushed["private/secret:1"]
    config.write_text(json.dumps({"auths": {host: {"username": "bob", "password": "not-bobs-password"}}}))
    with pytest.raises(RegistryError, match=r"the token server 127\.0\.0\.1:\d+ refused the credentials from"):
        Registries(_settings(registry_stack)).digest(private)


def test_a_missing_tag_repository_or_digest_is_not_found(registry_stack, pushed, home):
    tls = Registries(_settings(registry_stack))
    plain = Registries(RegistrySettings(plain_http=frozenset({registry_stack.backend}), certs_dirs=()))
    missing_digest = f"odh/trainer@sha256:{'0' * 64}"
    for client, host, image in ((tls, registry_stack.hosts["tls"], "odh/trainer:no-such-tag"),
                                (tls, registry_stack.hosts["tls"], "odh/nothing:1"),
                                (plain, registry_stack.backend, "odh/trainer:no-such-tag"),
                                (plain, registry_stack.backend, missing_digest)):
        loc = locate(f"{host}/{image}")
        with pytest.raises(NotFound, match=f"{host}/{image}: not found at {host}"):
            client.digest(loc)
        assert not client.exists(loc)
    assert tls.exists(locate(f"{registry_stack.hosts['tls']}/odh/trainer@{pushed['odh/trainer:3.5']}"))
    # distribution's pull-through proxy answers a digest its upstream lacks with a 500 that names
    # no manifest: not "missing", but an answer that says nothing, in the registry's own words.
    with pytest.raises(RegistryError, match="answered 500 Internal Server Error: UNKNOWN: unknown error") as err:
        tls.exists(locate(f"{registry_stack.hosts['tls']}/{missing_digest}"))
    assert not isinstance(err.value, NotFound)


def test_tls_needs_the_ca(registry_stack, pushed, home):
    image = locate(f"{registry_stack.hosts['tls']}/odh/trainer:3.5")
    with pytest.raises(RegistryError, match="certificate is not trusted"):
        Registries(RegistrySettings(certs_dirs=())).digest(image)
    # containers' certs.d: ~/.config/containers/certs.d/HOST:PORT/ca.crt
    folder = home / ".config" / "containers" / "certs.d" / registry_stack.hosts["tls"]
    folder.mkdir(parents=True)
    (folder / "ca.crt").write_bytes(registry_stack.ca_file.read_bytes())
    assert Registries(env=os.environ).digest(image) == pushed["odh/trainer:3.5"]


def test_a_client_certificate_from_certs_d(registry_stack, pushed, home):
    """certs.d/HOST:PORT/NAME.cert and NAME.key, as podman, CRI-O and docker read them, for a
    registry that requires a client certificate."""
    host = registry_stack.hosts["mtls"]
    image = locate(f"{host}/odh/trainer:3.5")
    with pytest.raises(RegistryError, match=f"cannot reach the registry {host}: TLS failed"):
        Registries(_settings(registry_stack)).digest(image)
    folder = home / ".config" / "containers" / "certs.d" / host
    folder.mkdir(parents=True)
    (folder / "ca.crt").write_bytes(registry_stack.ca_file.read_bytes())
    (folder / "client.cert").write_bytes(registry_stack.pki.client_cert_pem)
    with pytest.raises(TrainerctlError, match="a client certificate needs its key beside it .client.key."):
        Registries(env=os.environ).digest(image)
    (folder / "client.key").write_bytes(registry_stack.pki.client_key_pem)
    assert Registries(env=os.environ).digest(image) == pushed["odh/trainer:3.5"]


def _helper(bin_dir: Path, name: str, script: str) -> None:
    path = bin_dir / f"docker-credential-{name}"
    path.write_text("#!/bin/sh\n" + script)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)


def test_credential_helpers(registry_stack, pushed, home, monkeypatch):
    """credHelpers for one registry and credsStore for all, run as docker runs them."""
    bins = home / "bin"
    bins.mkdir()
    monkeypatch.setenv("PATH", f"{bins}:{os.environ['PATH']}")
    host = registry_stack.hosts["basic"]
    _helper(bins, "test", f'read server\n[ "$1" = get ] && [ "$server" = "{host}" ] || exit 3\n'
                          f'printf \'{{"ServerURL":"%s","Username":"alice","Secret":"{USERS["alice"]}"}}\' "$server"\n')
    _helper(bins, "empty", 'echo "credentials not found in native keychain"; exit 1\n')
    _helper(bins, "broken", 'echo "the keyring is locked" >&2; exit 4\n')
    _helper(bins, "garbage", 'echo "<html>"\n')
    image = locate(f"{host}/odh/trainer:3.5")
    _docker_config(home, {"credHelpers": {host: "test"}})
    assert Registries(_settings(registry_stack)).digest(image) == pushed["odh/trainer:3.5"]
    _docker_config(home, {"credsStore": "test"})
    assert Registries(_settings(registry_stack)).digest(image) == pushed["odh/trainer:3.5"]
    # a store without the registry's credentials leaves it to `auths`
    _docker_config(home, {"credsStore": "empty", "auths": {host: {"auth": _auth("alice")}}})
    assert Registries(_settings(registry_stack)).digest(image) == pushed["odh/trainer:3.5"]
    _docker_config(home, {"credsStore": "broken"})
    with pytest.raises(HelperFailed, match="docker-credential-broken failed with exit code 4: the keyring is locked"):
        Registries(_settings(registry_stack)).digest(image)
    _docker_config(home, {"credsStore": "garbage"})
    with pytest.raises(HelperFailed, match="its answer is not JSON"):
        Registries(_settings(registry_stack)).digest(image)
    _docker_config(home, {"credsStore": "absent"})
    with pytest.raises(TrainerctlError, match="docker-credential-absent: not found on PATH"):
        Registries(_settings(registry_stack)).digest(image)
    assert redact.redact(f"a {USERS['alice']} b") == f"a {redact.MASK} b"  # the helper's secret never prints


def test_explicit_config_file_and_bad_files(registry_stack, home, tmp_path):
    with pytest.raises(TrainerctlError, match="--registry-config .*: cannot read: file not found"):
        CredentialStore(str(tmp_path / "nope.json")).lookup("quay.io", "x")
    bad = tmp_path / "bad.json"
    for text, problem in (("{", "not JSON"), ("[]", "expected a JSON object"),
                          ('{"auths": {"quay.io": "x"}}', "auths: expected a mapping"),
                          ('{"credsStore": "../../bin/sh"}', "not a path"),
                          ('{"auths": {"quay.io": {"auth": "not base64!"}}}', "auth: expected base64")):
        bad.write_text(text)
        with pytest.raises(TrainerctlError, match=problem):
            CredentialStore(str(bad)).lookup("quay.io", "x")


@pytest.fixture(scope="module")
def hostile():
    from tests.support.registry import HostileRegistry

    server = HostileRegistry()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def hostile_tls(registry_stack, tmp_path_factory):
    from tests.support.registry import HostileRegistry

    server = HostileRegistry(registry_stack.pki, tmp_path_factory.mktemp("hostile"))
    yield server
    server.stop()


@pytest.mark.parametrize("mode, problem", [
    ("garbage", "answered with something that is not a manifest"),
    ("bad-digest", "says the manifest is sha256:1111"),
    ("huge", "larger than the 4 MiB limit for one container registry response body .a manifest, a token. .raise it with TRAINERCTL_MAX_REGISTRY_RESPONSE=SIZE."),
    ("no-challenge", "answered 401 without a Basic or Bearer challenge"),
    ("token-garbage", "did not answer with a token"),
    ("token-typed", "did not answer with a token .expected JSON with `token` or `access_token`, a string."),
    ("manifest-typed", "answered with something that is not a manifest"),
    ("token-huge", "larger than the 4 MiB limit"),
    ("http-realm", "which is not https"),
    ("redirect-loop", "more than 5 redirects"),
    ("escapes", "answered 500 Internal Server Error: UNKNOWN: U"),
])
def test_a_hostile_registry_is_one_line(hostile, home, mode, problem):
    client = Registries(RegistrySettings(plain_http=frozenset({hostile.host}), certs_dirs=()))
    with pytest.raises(RegistryError, match=problem) as err:
        client.digest(locate(f"{hostile.host}/{mode}/image:1"))
    message = str(err.value)
    assert "\n" not in message and "\x1b" not in message and message.startswith(f"{hostile.host}/{mode}/image:1: ")


def test_redirects_never_go_from_https_to_http(registry_stack, hostile_tls, home):
    client = Registries(_settings(registry_stack))
    with pytest.raises(RegistryError, match="redirects to http://.*, which is not https"):
        client.digest(locate(f"{hostile_tls.host}/redirect-http/image:1"))


def test_throttling_is_waited_out(hostile, home):
    client = Registries(RegistrySettings(plain_http=frozenset({hostile.host}), certs_dirs=()))
    assert client.digest(locate(f"{hostile.host}/throttled/image:1")).startswith("sha256:")
    assert hostile.seen["throttled"] == 3


def test_an_unreachable_registry_is_one_line(home):
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # closed when the block ends: nothing listens there
    client = Registries(RegistrySettings(certs_dirs=()))
    with pytest.raises(RegistryError, match=f"127.0.0.1:{port}/x/y:1: cannot reach the registry 127.0.0.1:{port}: "
                                            "connection refused"):
        client.digest(locate(f"127.0.0.1:{port}/x/y:1"))
