"""A fetched source is untrusted: its kustomizations may not reach this machine's files.

For a git source the loader's root is the repository's top, as kubectl holds cloned
repositories: a base that climbs out with `..`, through a chain of symlinks that each look
local, or through a `file://` URL is refused — for render (and so install, diff and
upgrade-check, which render through the same pipeline) and for `trainerctl kustomize URL`.
"""

from __future__ import annotations

import itertools
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support import kubectl
from tests.support.kustomize_cases import write_tree
from trainerctl.kustomize import KustomizeError, build_yaml
from trainerctl.kustomize.filesys import DiskFS
from trainerctl.kustomize.loader import clean

SECRET_CM = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: stolen}\ndata: {value: SECRET-VALUE}\n"
CM = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ok}\ndata: {k: v}\n"


def _outside(root: Path) -> Path:
    """A base and a file outside every repository below: what an attacker wants to read."""
    return write_tree(root / "outside", {"secret/kustomization.yaml": "resources: [cm.yaml]\n",
                                         "secret/cm.yaml": SECRET_CM, "secret.yaml": SECRET_CM})


def _climb(depth: int) -> str:
    return "/".join([".."] * depth)


def _chain(manifests: Path, links: int) -> str:
    """Symlinks under manifests/sub that each resolve (lexically) inside manifests, but whose
    chain climbs two directories per link: sub/q -> .., sub/p1 -> q/../.., sub/pN -> pN-1/../..
    Returns the last link's path relative to manifests."""
    sub = manifests / "sub"
    sub.mkdir(parents=True, exist_ok=True)
    os.symlink("..", sub / "q")
    previous = "q"
    for i in range(1, links + 1):
        os.symlink(f"{previous}/../..", sub / f"p{i}")
        previous = f"p{i}"
    return f"sub/{previous}"


# ------------------------------------------------------------------ the engine, as a property


class Recording(DiskFS):
    def __init__(self) -> None:
        super().__init__()
        self.reads: list[str] = []

    def read(self, path: str) -> bytes:
        self.reads.append(path)
        return super().read(path)


DIRS = ["", "a", "a/b", "c", "a/top"]
TOKENS = ["..", "a", "b", "c", "top", "secret", "l0", "l1", "l2", "l3", ".", "outside"]


@st.composite
def hostile_trees(draw):
    links = draw(st.lists(st.tuples(st.sampled_from(DIRS),
                                    st.lists(st.sampled_from(TOKENS), min_size=1, max_size=7),
                                    st.booleans()),
                          max_size=4))
    entries = draw(st.lists(st.lists(st.sampled_from(TOKENS + ["l0", "l1", "secret.yaml"]),
                                     min_size=1, max_size=9),
                            min_size=1, max_size=2))
    as_component = draw(st.booleans())
    return links, entries, as_component


_counter = itertools.count()


@settings(max_examples=300, derandomize=True, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(case=hostile_trees())
def test_no_chain_of_links_and_dotdot_leaves_the_repository(tmp_path, case):
    """Whatever links and `..` a repository holds, a build rooted in it either fails with one
    line or reads only files inside it; the file outside never shows up."""
    links, entries, as_component = case
    work = tmp_path / f"case{next(_counter)}"
    outside = _outside(work)
    repo = work / "repo"
    for d in DIRS:
        (repo / d).mkdir(parents=True, exist_ok=True)
    for i, (where, parts, absolute) in enumerate(links):
        target = "/".join(parts)
        if absolute:
            target = f"{outside.parent}/{target}"
        os.symlink(target, repo / where / f"l{i}")
    field = "components" if as_component else "resources"
    kustomization = f"{field}:\n" + "".join(f"- {'/'.join(e)}\n" for e in entries)
    (repo / "a" / "top" / "kustomization.yaml").write_text(kustomization)
    fs = Recording()
    try:
        out = build_yaml(str(repo / "a" / "top"), fs=fs, repo_root=str(repo))
    except KustomizeError as exc:
        assert "\n" not in str(exc)
        out = ""
    assert "SECRET-VALUE" not in out
    real_repo = os.path.realpath(repo)
    for path in fs.reads:
        assert path == real_repo or path.startswith(real_repo + "/"), (kustomization, path)


def test_the_property_can_fail(tmp_path):
    """The same chain built as a local (trusted) tree reaches the file, as kubectl would: the
    property above tests the boundary, not an input that could never escape."""
    outside = _outside(tmp_path)
    repo = tmp_path / "repo"
    (repo / "top").mkdir(parents=True)
    os.symlink(str(outside), repo / "l0")
    (repo / "top" / "kustomization.yaml").write_text("resources: [../l0/secret]\n")
    assert "SECRET-VALUE" in build_yaml(str(repo / "top"))
    with pytest.raises(KustomizeError, match="must be within the repository"):
        build_yaml(str(repo / "top"), repo_root=str(repo))


# ------------------------------------------------------------------ real git sources, every command


def _commit_v1(repo_dir: Path) -> None:
    """Commit everything in repo_dir (a repository is made if needed) and tag it v1."""
    import git

    repo = git.Repo.init(repo_dir, initial_branch="main")
    repo.git.add("-A")
    with repo.git.custom_environment(GIT_AUTHOR_NAME="x", GIT_AUTHOR_EMAIL="x@example.invalid",
                                     GIT_COMMITTER_NAME="x", GIT_COMMITTER_EMAIL="x@example.invalid"):
        repo.git.commit("-qm", "content")
    repo.git.tag("-f", "v1")
    repo.close()


def _hostile_repo(tmp_path: Path, resources: list[str], chain_links: int = 0) -> Path:
    repo_dir = tmp_path / "hostile"
    manifests = repo_dir / "manifests"
    write_tree(manifests, {"rhoai/ok.yaml": CM})
    if chain_links:
        _chain(manifests, chain_links)
    (manifests / "rhoai" / "kustomization.yaml").write_text(
        "resources:\n" + "".join(f"- {r}\n" for r in ["ok.yaml", *resources]))
    _commit_v1(repo_dir)
    return repo_dir


UNREACHABLE = """apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:9"}}]
users: [{name: u, user: {token: not-used}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
"""


def _trainerctl(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    """The command as a process; a cluster command gets a kubeconfig naming a closed port: the
    render (with --platform given) comes before any request."""
    kubeconfig = cwd / "kubeconfig"
    kubeconfig.write_text(UNREACHABLE)
    env = dict(os.environ, NO_COLOR="1", TRAINERCTL_CACHE_DIR=str(cwd / "cache"),
               KUBECONFIG=str(kubeconfig))
    return subprocess.run([sys.executable, "-m", "trainerctl", *args], cwd=cwd, capture_output=True,
                          text=True, env=env, timeout=300)


def _escapes(tmp_path: Path) -> dict[str, tuple[list[str], int]]:
    outside = _outside(tmp_path)
    secret = str(outside / "secret").lstrip("/")
    return {
        "dotdot": ([f"{_climb(40)}/{secret}"], 0),
        "symlink chain": ([f"../sub/p30/{secret}"], 30),
        "file url": ([f"file://{tmp_path / 'outside-repo'}//secret?ref=v1"], 0),
    }


def _outside_repo(tmp_path: Path) -> None:
    repo_dir = write_tree(tmp_path / "outside-repo", {"secret/kustomization.yaml": "resources: [cm.yaml]\n",
                                                     "secret/cm.yaml": SECRET_CM})
    _commit_v1(repo_dir)


@pytest.mark.parametrize("how", ["dotdot", "symlink chain", "file url"])
def test_every_command_refuses_a_fetched_source_that_climbs_out(tmp_path, how):
    _outside_repo(tmp_path)
    resources, links = _escapes(tmp_path)[how]
    repo = _hostile_repo(tmp_path, resources, links)
    source = ["--source", f"file://{repo}", "--ref", "v1"]
    runs = {
        "render": _trainerctl("render", *source, "--component", "manifests", cwd=tmp_path),
        "kustomize": _trainerctl("kustomize", f"file://{repo}//manifests/rhoai?ref=v1", cwd=tmp_path),
    }
    for command in ("install", "diff", "upgrade-check"):
        runs[command] = _trainerctl(command, *source, "--platform", "kubernetes", "--no-lock",
                                    cwd=tmp_path)
    for command, proc in runs.items():
        assert proc.returncode == 2, (command, proc.stderr)
        assert "SECRET-VALUE" not in proc.stdout + proc.stderr
        (line,) = proc.stderr.strip().splitlines()
        assert "Traceback" not in line
        assert "repository" in line, (command, line)
    if how != "file url":  # kubectl fetches file:// bases from anywhere; trainerctl refuses them
        ref = kubectl.kustomize(f"file://{repo}//manifests/rhoai?ref=v1")
        assert ref.returncode != 0 and "must be within the repo" in ref.stderr, ref.stderr


def test_a_fetched_source_that_stays_inside_renders(tmp_path):
    repo = _hostile_repo(tmp_path, ["../sub/inner"], 0)
    write_tree(repo / "manifests" / "sub" / "inner", {"kustomization.yaml": "resources: [cm.yaml]\n",
                                                      "cm.yaml": CM.replace("name: ok", "name: inner")})
    _commit_v1(repo)
    proc = _trainerctl("render", "--source", f"file://{repo}", "--ref", "v1", "--component",
                       "manifests", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "name: inner" in proc.stdout and "name: ok" in proc.stdout


def test_clean_is_go_filepath_clean():
    assert clean("//a/../b/./c/") == "/b/c"
    assert clean("/../x") == "/x"
