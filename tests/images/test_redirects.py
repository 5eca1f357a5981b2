"""One rule for every redirect trainerctl follows (trainerctl/net/redirects.py): to https, or to
plain http on a host the user named for it, never elsewhere. Checked as a property of the rule,
then through each client that follows redirects: the registry client (a redirect from the
registry named with --plain-http to plain http on another host) and a kustomization's remote
file (a redirect from its http:// host to another); neither reaches the other host."""

from __future__ import annotations

import http.server
import threading
from urllib.parse import urlsplit

import pytest
from hypothesis import given
from hypothesis import strategies as st

from trainerctl.net.redirects import RedirectRefused, follow, host_port
from trainerctl.registry.client import Registries, RegistryError, RegistrySettings
from trainerctl.registry.names import locate
from tests.support.kustomize_cases import write_tree
from tests.support.properties import PROPERTY

HOSTS = ["reg.example", "127.0.0.1:5000", "127.0.0.2:5000", "[::1]:5000", "REG.example:80", "other.example"]
hosts = st.sampled_from(HOSTS)
locations = st.one_of(
    st.builds(lambda scheme, host, user, path: f"{scheme}://{user}{host}/{path}",
              st.sampled_from(["http", "https", "ftp", "file", "HTTP", "git+ssh", ""]), hosts,
              st.sampled_from(["", "u@", "u:p@"]), st.text(max_size=20)),
    st.text(max_size=40),  # relative, or nothing like a URL
)


@PROPERTY
@given(scheme=st.sampled_from(["http", "https"]), current=hosts, location=locations,
       named=st.lists(hosts, max_size=3))
def test_a_redirect_goes_to_https_or_to_a_named_plain_http_host(scheme, current, location, named):
    try:
        target = follow(f"{scheme}://{current}/v2/x", location, named)
    except RedirectRefused as exc:
        assert str(exc).startswith("redirects to ") and "\n" not in str(exc)
        return
    parts = urlsplit(target)
    assert "@" not in parts.netloc
    assert parts.scheme == "https" or (
        parts.scheme == "http" and host_port(parts.netloc) in {host_port(h) for h in named}), (target, named)


@pytest.mark.parametrize("current, location, named, followed", [
    ("https://a.example/x", "http://a.example/y", [], False),  # down to http on the same host: not named
    ("http://a.example/x", "http://a.example:80/y", ["a.example"], True),  # the same host, its port spelled
    ("http://a.example/x", "http://b.example/y", ["a.example"], False),
    ("http://a.example/x", "/y", ["a.example"], True),
    ("http://a.example/x", "https://b.example/y", [], True),
    ("https://a.example/x", "https://user:pw@b.example/y", [], False),
    ("https://a.example/x", "file:///etc/passwd", [], False),
])
def test_the_rule_in_examples(current, location, named, followed):
    if followed:
        assert follow(current, location, named).startswith(("http://", "https://"))
    else:
        with pytest.raises(RedirectRefused):
            follow(current, location, named)


@pytest.fixture
def two_registries():
    from tests.support.registry import HostileRegistry

    named, other = HostileRegistry(), HostileRegistry(bind="127.0.0.2")
    named.elsewhere = other.host
    yield named, other
    named.stop()
    other.stop()


def test_the_registry_client_follows_plain_http_only_to_named_hosts(two_registries, monkeypatch, tmp_path):
    monkeypatch.setenv("HOME", str(tmp_path))
    named, other = two_registries
    image = locate(f"{named.host}/redirect-elsewhere/image:1")
    one = Registries(RegistrySettings(plain_http=frozenset({named.host}), certs_dirs=()))
    with pytest.raises(RegistryError, match=rf"^{named.host}/redirect-elsewhere/image:1: {named.host} redirects to "
                                            rf"http://{other.host}/v2/landed/image/manifests/1, which is not https"):
        one.digest(image)
    assert other.seen == {}  # not one request reached the host the user did not name
    both = Registries(RegistrySettings(plain_http=frozenset({named.host, other.host}), certs_dirs=()))
    assert both.digest(image).startswith("sha256:") and other.seen.get("landed")


class _Recorder(http.server.BaseHTTPRequestHandler):
    """Answers a ConfigMap at /cm.yaml; anything else redirects to `to` (class attribute)."""

    to = ""
    seen: list[str] = []

    def log_message(self, *args):
        pass

    def do_GET(self):
        type(self).seen.append(self.path)
        if self.path == "/cm.yaml":
            body = b"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: landed}\n"
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        self.send_response(302)
        self.send_header("Location", self.to)
        self.send_header("Content-Length", "0")
        self.end_headers()


def _server(bind: str, to: str = "") -> http.server.ThreadingHTTPServer:
    handler = type("Handler", (_Recorder,), {"to": to, "seen": []})
    server = http.server.ThreadingHTTPServer((bind, 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def test_a_remote_file_follows_plain_http_only_on_the_host_its_url_names(tmp_path, monkeypatch):
    from trainerctl.kustomize import KustomizeError, build_yaml

    monkeypatch.setenv("TRAINERCTL_CACHE_DIR", str(tmp_path / "cache"))
    other = _server("127.0.0.2")
    named = _server("127.0.0.1", f"http://127.0.0.2:{other.server_address[1]}/cm.yaml")
    same = _server("127.0.0.1")
    same.RequestHandlerClass.to = f"http://127.0.0.1:{same.server_address[1]}/cm.yaml"
    try:
        write_tree(tmp_path / "away", {"kustomization.yaml": f"resources:\n- http://127.0.0.1:{named.server_address[1]}/x.yaml\n"})
        with pytest.raises(KustomizeError, match=rf"redirects to http://127.0.0.2:{other.server_address[1]}/cm.yaml, "
                                                 "which is not https") as refused:
            build_yaml(str(tmp_path / "away"))
        assert "\n" not in str(refused.value) and other.RequestHandlerClass.seen == []
        write_tree(tmp_path / "home", {"kustomization.yaml": f"resources:\n- http://127.0.0.1:{same.server_address[1]}/x.yaml\n"})
        assert "name: landed" in build_yaml(str(tmp_path / "home"))  # on the host the URL names: followed
    finally:
        for server in (other, named, same):
            server.shutdown()
            server.server_close()


@pytest.mark.parametrize("where", ["source", "remote base"])
def test_git_follows_no_redirect_from_a_plain_http_url(tmp_path, monkeypatch, where):
    """git's own client follows a source's or a remote git base's redirects: from plain http it is
    told to follow none (the rule, as git settings: net/redirects.git_env)."""
    from trainerctl.kustomize import KustomizeError, build_yaml
    from trainerctl.source.cache import SourceCache
    from trainerctl.source.gitrepo import FetchError

    monkeypatch.setenv("TRAINERCTL_CACHE_DIR", str(tmp_path / "cache"))
    other = _server("127.0.0.2")
    named = _server("127.0.0.1", f"http://127.0.0.2:{other.server_address[1]}/repo.git/info/refs")
    url = f"http://127.0.0.1:{named.server_address[1]}/repo.git"
    try:
        if where == "source":
            with pytest.raises(FetchError, match=r"^cannot reach http://127\.0\.0\.1:\d+/repo\.git: "):
                SourceCache(tmp_path / "cache").fetch(url, "v1", None)
        else:
            write_tree(tmp_path / "k", {"kustomization.yaml": f"resources:\n- {url}//base?ref=v1\n"})
            with pytest.raises(KustomizeError, match="cannot fetch"):
                build_yaml(str(tmp_path / "k"))
        assert named.RequestHandlerClass.seen and other.RequestHandlerClass.seen == []
    finally:
        for server in (other, named):
            server.shutdown()
            server.server_close()
