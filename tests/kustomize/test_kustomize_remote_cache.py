"""Remote resources are cached as kubectl does it, or more safely: kubectl fetches every remote
each build; trainerctl keeps only what cannot change (a versioned release download, a commit),
only once it was read as YAML objects, bounded in size, 0600 in 0700 folders; a password in a
URL is shown masked and never written."""

from __future__ import annotations

import http.server
import os
import stat
import subprocess
import threading
from pathlib import Path

import pytest

from tests.support.kustomize_cases import write_tree
from trainerctl.kustomize import KustomizeError, build_yaml
from trainerctl.kustomize.remote import immutable_file, redact

CM = "apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: {}}}\n"
RELEASE = "/org/proj/releases/download/v1.2.3/manifests.yaml"
BRANCH = "/org/proj/raw/main/manifests.yaml"


class Server:
    """Loopback HTTP server whose answers the test sets per path; it counts GETs."""

    def __init__(self) -> None:
        self.bodies: dict[str, tuple[int, bytes]] = {}
        self.gets: list[str] = []
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                outer.gets.append(self.path)
                code, body = outer.bodies.get(self.path, (404, b"not found"))
                self.send_response(code)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.base = f"http://127.0.0.1:{self.server.server_address[1]}"

    def stop(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()
            self.server = None


@pytest.fixture
def server():
    s = Server()
    yield s
    s.stop()


@pytest.fixture
def cache(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("TRAINERCTL_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


def _overlay(root: Path, url: str) -> str:
    write_tree(root, {"kustomization.yaml": f"resources:\n- {url}\n"})
    return str(root)


def _files(cache: Path) -> list[Path]:
    return [p for p in cache.rglob("*") if p.is_file()] if cache.exists() else []


def test_which_urls_cannot_change():
    assert immutable_file("https://github.com/kubernetes-sigs/jobset/releases/download/v0.12.0/manifests.yaml")
    assert immutable_file("https://raw.githubusercontent.com/o/r/" + "a" * 40 + "/x.yaml")
    for url in ("https://github.com/o/r/releases/latest/download/x.yaml",
                "https://raw.githubusercontent.com/o/r/main/x.yaml",
                "https://example.com/releases/download/nightly/x.yaml",
                "https://example.com/x.yaml?ref=" + "a" * 40):
        assert not immutable_file(url), url


def test_a_branch_url_is_fetched_every_build(tmp_path, server, cache):
    server.bodies[BRANCH] = (200, CM.format("first").encode())
    top = _overlay(tmp_path / "k", server.base + BRANCH)
    assert "name: first" in build_yaml(top)
    server.bodies[BRANCH] = (200, CM.format("second").encode())
    assert "name: second" in build_yaml(top)
    assert _files(cache) == []


def test_a_release_file_is_kept_privately_and_serves_offline(tmp_path, server, cache):
    server.bodies[RELEASE] = (200, CM.format("released").encode())
    # the URL as written decides; the mirror only says where to fetch it
    url = "https://github.com" + RELEASE
    top = _overlay(tmp_path / "k", url)
    mirror = [f"https://github.com={server.base}"]
    first = build_yaml(top, remote_mirrors=mirror)
    (kept,) = _files(cache)
    assert stat.S_IMODE(kept.stat().st_mode) == 0o600
    for folder in (kept.parent, cache / "remote"):
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700, folder
    assert [p.name for p in kept.parent.iterdir()] == [kept.name]  # no temporary file left
    server.stop()
    assert build_yaml(top, remote_mirrors=mirror) == first


def test_an_error_page_is_never_kept(tmp_path, server, cache):
    server.bodies[RELEASE] = (200, b"<html><body>rate limited: try again</body></html>\n")
    top = _overlay(tmp_path / "k", server.base + RELEASE)
    with pytest.raises(KustomizeError, match="missing `kind`"):  # it read as YAML, not as objects
        build_yaml(top)
    assert _files(cache) == []
    server.bodies[RELEASE] = (200, CM.format("fixed").encode())
    assert "name: fixed" in build_yaml(top)
    assert len(_files(cache)) == 1


def test_a_body_is_bounded(tmp_path, server, cache, monkeypatch):
    server.bodies[BRANCH] = (200, CM.format("x" * 500).encode())
    top = _overlay(tmp_path / "k", server.base + BRANCH)
    monkeypatch.setenv("TRAINERCTL_MAX_FILE", "100")
    with pytest.raises(KustomizeError, match="body larger than 100 bytes"):
        build_yaml(top)


def test_a_password_in_a_url_is_masked_and_never_written(tmp_path, server, cache):
    url = server.base.replace("http://", "http://alice:hunter2-secret@") + RELEASE
    assert redact(f"see {url}") == f"see {url.replace('hunter2-secret', 'xxxxx')}"
    top = _overlay(tmp_path / "k", url)
    with pytest.raises(KustomizeError) as error:
        build_yaml(top)  # 404
    assert "hunter2-secret" not in str(error.value) and "alice:xxxxx@" in str(error.value)
    server.bodies[RELEASE] = (200, CM.format("ok").encode())
    assert "name: ok" in build_yaml(top)
    for path in _files(cache):
        assert b"hunter2-secret" not in path.read_bytes() and "hunter2" not in str(path)


# ------------------------------------------------------------------ git bases


def _git(repo: Path, *args: str) -> str:
    env = dict(os.environ, GIT_AUTHOR_NAME="x", GIT_AUTHOR_EMAIL="x@example.invalid",
               GIT_COMMITTER_NAME="x", GIT_COMMITTER_EMAIL="x@example.invalid")
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True,
                          text=True, env=env).stdout.strip()


def _base_repo(root: Path, name: str) -> tuple[Path, str]:
    write_tree(root, {"base/kustomization.yaml": "resources: [cm.yaml]\n",
                      "base/cm.yaml": CM.format(name)})
    if not (root / ".git").exists():
        _git(root, "init", "-q", "-b", "main")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", name)
    _git(root, "tag", "-f", "v1")
    return root, _git(root, "rev-parse", "HEAD")


def test_a_tag_is_cloned_every_build_and_not_kept(tmp_path, cache):
    repo, _ = _base_repo(tmp_path / "repo", "one")
    top = _overlay(tmp_path / "k", f"file://{repo}//base?ref=v1")
    assert "name: one" in build_yaml(top)
    assert not (cache / "remote" / "git").exists()
    assert [p for p in (cache / "remote").iterdir()] == []  # the build's clone is gone
    _base_repo(repo, "two")  # the tag moved: kubectl would see it, so does trainerctl
    assert "name: two" in build_yaml(top)


def test_a_commit_is_kept_without_its_git_folder(tmp_path, cache):
    repo, commit = _base_repo(tmp_path / "repo", "pinned")
    top = _overlay(tmp_path / "k", f"file://{repo}//base?ref={commit}")
    first = build_yaml(top)
    (kept,) = (cache / "remote" / "git").iterdir()
    assert stat.S_IMODE(kept.parent.stat().st_mode) == 0o700
    assert not (kept / ".git").exists()
    import shutil

    shutil.rmtree(repo)
    assert build_yaml(top) == first  # served from the cache


def test_a_password_never_reaches_a_kept_clone(tmp_path, cache):
    """git over (dumb) HTTP with user:password in the URL: the clone keeps no config or
    FETCH_HEAD naming it, and messages mask it."""
    repo, commit = _base_repo(tmp_path / "src", "served")
    bare = tmp_path / "served" / "repo.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(repo), str(bare)], check=True)
    _git(bare, "update-server-info")
    handler = lambda *a: _Quiet(*a, directory=str(tmp_path / "served"))  # noqa: E731
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        url = f"http://bob:hunter2-secret@127.0.0.1:{httpd.server_address[1]}/repo.git"
        top = _overlay(tmp_path / "k", f"{url}//base?ref={commit}")
        assert "name: served" in build_yaml(top)
        for path in _files(cache):
            assert b"hunter2-secret" not in path.read_bytes(), path
        bad = _overlay(tmp_path / "bad", f"{url}//base?ref={'0' * 40}")
        with pytest.raises(KustomizeError) as error:
            build_yaml(bad)
        assert "hunter2-secret" not in str(error.value) and "bob:xxxxx@" in str(error.value)
    finally:
        httpd.shutdown()
        httpd.server_close()


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


# -- every field that names a file takes an http(s) URL, as kustomize's loader reads it --------------
_WIDGET = "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\nspec: {size: 1}\n"
_URL_FIELDS = {
    # field: (what the server holds at /f, the kustomization's lines naming URL)
    "configurations": ("namePrefix:\n- path: metadata/name\n  kind: Widget\n", "configurations:\n- URL\n"),
    "patches": ("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm}\ndata: {b: '2'}\n",
                "patches:\n- path: URL\n"),
    "configMapGenerator files": ("payload\n", "configMapGenerator:\n- name: gen\n  files:\n  - URL\n"),
    "configMapGenerator envs": ("k1=v1\n", "configMapGenerator:\n- name: gen\n  envs:\n  - URL\n"),
    "crds": ('{"definitions": {"com.example.v1.Widget": {"properties": {"spec": {"properties": {"ref": '
             '{"x-kubernetes-object-ref-kind": "ConfigMap", "x-kubernetes-object-ref-api-version": "v1"}}}}}}}\n',
             "crds:\n- URL\n"),
}


@pytest.mark.kubectl
@pytest.mark.parametrize("field", sorted(_URL_FIELDS))
def test_a_url_in_a_field_that_names_a_file_is_fetched_as_kubectl_fetches_it(tmp_path, server, cache, field):
    from tests.support.kubectl import kustomize as kubectl_kustomize

    body, lines = _URL_FIELDS[field]
    server.bodies["/f"] = (200, body.encode())
    root = tmp_path / "k"
    write_tree(root, {"kustomization.yaml": "namePrefix: p-\nresources:\n- r.yaml\n" + lines.replace("URL", f"{server.base}/f"),
                      "r.yaml": CM.format("cm") + "data: {a: '1'}\n---\n" + _WIDGET})
    theirs = kubectl_kustomize(root)
    assert theirs.returncode == 0, theirs.stderr
    assert build_yaml(str(root)) == theirs.stdout
    server.bodies["/f"] = (404, b"gone")  # not kept: the URL can change (no version, no commit)
    with pytest.raises(KustomizeError, match=rf"^{root}: fetching {server.base}/f: HTTP 404$"):
        build_yaml(str(root))
