"""Every folder under the cache home is trainerctl's own, made or opened through one function
(trainerctl/cachedir.py), and nothing under it follows a symlink out of the cache: a symlink (to
a folder, a file, nowhere), a file or a FIFO planted where a cache folder goes is replaced, never
written through nor chmod-ed through, and a folder of another user is refused. Checked on the
function for any planted component of any cache path, then through each cache: the sample (the
home's remote/ a symlink to a folder outside), a planted cache entry, a source tree and a bare
repository, and a layout rule that no other module makes or chmods folders."""

from __future__ import annotations

import ast
import errno
import http.server
import os
import stat
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.support.kustomize_cases import write_tree
from tests.support.properties import PROPERTY
from trainerctl.cachedir import cache_folder, cached_folder

KINDS = ("link-outside", "link-file", "dangling", "link-loop", "file", "fifo", "foreign")
NAMES = ("remote", "http", "git", "trees", "manifests", "kustomize", "parsed", "x.git")
OUTSIDE_MODE = 0o755


def _plant(path: Path, kind: str, outside: Path) -> None:
    if kind == "link-outside":
        os.symlink(outside, path)
    elif kind == "link-file":
        os.symlink(outside / "keep.txt", path)
    elif kind == "dangling":
        os.symlink(outside / "nowhere", path)
    elif kind == "link-loop":
        os.symlink(path.name, path)
    elif kind == "file":
        path.write_text("x")
    elif kind == "fifo":
        os.mkfifo(path)
    else:
        path.mkdir()
        os.chown(path, 4242, 4242)  # the tests run as root, who may give it away


def _outside(root: Path) -> Path:
    outside = root / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("keep")
    outside.chmod(OUTSIDE_MODE)
    return outside


def _snapshot(folder: Path) -> tuple:
    return stat.S_IMODE(folder.stat().st_mode), sorted(p.name for p in folder.iterdir()), \
        (folder / "keep.txt").read_text()


@PROPERTY
@given(parts=st.lists(st.sampled_from(NAMES), min_size=1, max_size=4), at=st.integers(0, 3),
       kind=st.sampled_from(KINDS))
def test_a_planted_component_is_replaced_or_refused_never_followed(parts, at, kind):
    at = min(at, len(parts) - 1)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        outside, home = _outside(root), root / "home"
        planted = home.joinpath(*parts[:at + 1])
        planted.parent.mkdir(parents=True, exist_ok=True)
        _plant(planted, kind, outside)
        before = _snapshot(outside)
        assert cached_folder(home, *parts) is None  # only looking: not there as a folder of ours
        if kind == "foreign":
            with pytest.raises(OSError) as refused:
                cache_folder(home, *parts)
            assert refused.value.errno == errno.EPERM and "another user" in str(refused.value)
        else:
            made = cache_folder(home, *parts)
            assert made == home.joinpath(*parts)
            for depth in range(1, len(parts) + 1):
                info = os.lstat(home.joinpath(*parts[:depth]))
                assert stat.S_ISDIR(info.st_mode) and stat.S_IMODE(info.st_mode) == 0o700
            assert cached_folder(home, *parts) == made
        assert _snapshot(outside) == before  # not written, not chmod-ed, not removed


def test_a_loose_folder_of_ours_is_tightened(tmp_path):
    (tmp_path / "remote").mkdir(mode=0o777)
    os.chmod(tmp_path / "remote", 0o777)
    cache_folder(tmp_path, "remote")
    assert stat.S_IMODE((tmp_path / "remote").stat().st_mode) == 0o700


class _Files(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_GET(self):
        body = b"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: served}\n"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture
def files_server():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Files)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def _kustomize(tmp_path: Path, cache: Path, url: str) -> subprocess.CompletedProcess:
    write_tree(tmp_path / "k", {"kustomization.yaml": f"resources:\n- {url}\n"})
    env = {**os.environ, "TRAINERCTL_CACHE_DIR": str(cache)}
    return subprocess.run([sys.executable, "-m", "trainerctl", "kustomize", str(tmp_path / "k")], env=env,
                          capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)


@pytest.mark.parametrize("planted", ["remote", "remote/http", "kustomize", "entry"])
def test_a_build_never_writes_or_reads_through_a_planted_link(tmp_path, files_server, planted):
    """The sample: the cache home's remote/ a symlink to a folder outside (a release download is
    kept there once read); the same for its http/ folder, the engine's parse cache and one entry."""
    from trainerctl.kustomize.remote import Fetcher

    url = f"{files_server}/org/proj/releases/download/v1.2.3/manifests.yaml"  # immutable: kept in remote/http
    outside, cache = _outside(tmp_path), tmp_path / "cache"
    (outside / "keep.txt").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: planted}\n")
    if planted == "entry":
        entry = Fetcher(cache_home=cache)._http_cache(url)
        entry.parent.mkdir(parents=True)
        os.symlink(outside / "keep.txt", entry)
    else:
        (cache / planted).parent.mkdir(parents=True, exist_ok=True)
        os.symlink(outside, cache / planted)
    before = _snapshot(outside)
    built = _kustomize(tmp_path, cache, url)
    assert built.returncode == 0 and "name: served" in built.stdout and "planted" not in built.stdout, built.stderr
    assert _snapshot(outside) == before
    for folder in ("remote", "remote/http", "kustomize"):
        assert not (cache / folder).is_symlink() and (cache / folder).is_dir()
    kept = [p for p in (cache / "remote" / "http").iterdir() if not p.is_symlink()]
    assert kept and all(stat.S_IMODE(p.stat().st_mode) == 0o600 for p in kept)


def test_a_source_tree_folder_that_is_a_link_is_not_cached(tmp_path):
    from trainerctl.source.cache import SourceCache
    from trainerctl.source.tree import walk_tree

    commit = "a" * 40
    outside = _outside(tmp_path)
    write_tree(outside / "manifests", {"kustomization.yaml": "resources: []\n"})
    (outside / "source.json").write_text(f'{{"commit": "{commit}", "digest": "{walk_tree(outside / "manifests")}"}}')
    before = _snapshot(outside)
    cache = SourceCache(tmp_path / "cache")
    (cache.root / "trees").mkdir(parents=True)
    os.symlink(outside, cache.tree_dir(commit))
    assert cache.tree_digest(commit) is None  # the tree outside is never rendered from the cache
    assert not os.path.lexists(cache.tree_dir(commit)) and _snapshot(outside) == before


def test_a_bare_repository_holding_a_link_is_made_anew(tmp_path):
    import git

    from trainerctl.source.cache import SourceCache

    upstream = tmp_path / "upstream"
    write_tree(upstream / "manifests", {"kustomization.yaml": "resources: []\n"})
    repo = git.Repo.init(upstream)
    repo.git.add(".")
    repo.git.commit("-m", "init", env={"GIT_AUTHOR_NAME": "a", "GIT_AUTHOR_EMAIL": "a@b", "GIT_COMMITTER_NAME": "a",
                                       "GIT_COMMITTER_EMAIL": "a@b"})
    repo.git.tag("v1")
    url = f"file://{upstream}"
    outside, cache = _outside(tmp_path), SourceCache(tmp_path / "cache")
    bare = cache.repo_dir(url)
    bare.mkdir(parents=True)
    os.symlink(outside, bare / "objects")  # git would write every object it fetches outside
    before = _snapshot(outside)
    commit = cache.fetch(url, "v1", None)
    assert commit == repo.head.commit.hexsha and cache.tree_digest(commit)
    assert not (bare / "objects").is_symlink() and _snapshot(outside) == before


# Who may make or chmod a folder: the cache's one function, and folders that are not the cache's.
MAY_MAKE_FOLDERS = {
    "cachedir.py": "the one function every cache folder is made and opened through",
    "trust/safe_write.py": "fchmod of the temporary file it has just created; the folders of a user's output "
                           "(--output-dir, --write-migrated) under it, never through a symlink (write_tree)",
    "source/tree.py": "a render's own work copy of a tree",
    "source/gitrepo.py": "the files of a commit, into a staging folder made inside a cache folder",
    "source/cache.py": "a staging folder (mkdtemp) inside the trees/ cache folder",
    "kustomize/remote.py": "a clone's folder (mkdtemp) inside the remote/ cache folder",
    "source/embedding.py": "the wheel build's scratch folder",
}


def test_no_other_module_makes_or_chmods_a_folder():
    import trainerctl

    package = Path(trainerctl.__file__).resolve().parent
    found = []
    for path in package.rglob("*.py"):
        name = path.relative_to(package).as_posix()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in (
                    "mkdir", "makedirs", "mkdtemp", "chmod", "fchmod", "lchmod") and name not in MAY_MAKE_FOLDERS:
                found.append(f"{name}:{node.lineno}: {node.func.attr}")
    assert not found, "make cache folders with trainerctl.cachedir.cache_folder: " + "; ".join(found)
