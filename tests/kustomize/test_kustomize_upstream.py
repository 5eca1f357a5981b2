"""Every kustomization under ../shared/upstream builds byte-identical to kubectl.

kubectl reads a copy whose remote URLs point at loopback stand-ins (../shared/remote); the
engine reads the untouched upstream tree with --remote-mirror, so the mirror map is exercised
too and both see the same bytes.
"""

from __future__ import annotations

import difflib
import subprocess
import sys

import pytest

from tests.conftest import SHARED_DIR
from tests.support import kubectl, remotes

UPSTREAM = SHARED_DIR / "upstream"
DIRS = [str(p.relative_to(UPSTREAM)) for p in remotes.kustomization_dirs(UPSTREAM)] if UPSTREAM.is_dir() else []


@pytest.fixture(scope="module")
def served(shared_dir, tmp_path_factory):
    work = tmp_path_factory.mktemp("remotes")
    r = remotes.start(shared_dir, work)
    tree = remotes.rewrite_tree(shared_dir / "upstream", work / "upstream", r)
    yield r, tree
    r.stop()


def test_all_115_directories_are_collected(shared_dir):
    assert len(DIRS) == 115


@pytest.mark.parametrize("rel", DIRS)
def test_byte_identical_to_kubectl(served, rel):
    from trainerctl.kustomize import build_yaml

    r, tree = served
    expected = kubectl.kustomize(tree / rel)
    assert expected.returncode == 0, expected.stderr
    got = build_yaml(str(UPSTREAM / rel), remote_mirrors=r.mirrors)
    if got != expected.stdout:
        diff = "\n".join(list(difflib.unified_diff(
            expected.stdout.splitlines(), got.splitlines(), "kubectl", "trainerctl", lineterm="", n=2))[:60])
        pytest.fail(f"{rel} differs from kubectl kustomize:\n{diff}")


def test_cli_is_a_drop_in(served):
    """The command itself, as a process: same stdout bytes, exit 0."""
    r, tree = served
    rel = "opendatahub-trainer/odh-3.5.0/manifests/rhoai"
    expected = kubectl.kustomize(tree / rel)
    got = subprocess.run([sys.executable, "-m", "trainerctl", "kustomize", str(tree / rel)],
                         capture_output=True, text=True)
    assert got.returncode == 0, got.stderr
    assert got.stdout == expected.stdout


def test_remote_mirror_flag(served):
    r, _ = served
    rel = UPSTREAM / "kubeflow-trainer/v2.3.0/manifests/third-party/jobset"
    args = [sys.executable, "-m", "trainerctl", "kustomize", str(rel)]
    for m in r.mirrors:
        args += ["--remote-mirror", m]
    got = subprocess.run(args, capture_output=True, text=True)
    assert got.returncode == 0, got.stderr
    assert "kind: CustomResourceDefinition" in got.stdout


def test_remote_file_cache_serves_offline(shared_dir, tmp_path, monkeypatch):
    """A release file fetched once builds again with its server gone."""
    from trainerctl.kustomize import build_yaml

    monkeypatch.setenv("TRAINERCTL_CACHE_DIR", str(tmp_path / "cache"))
    r = remotes.start(shared_dir, tmp_path)
    rel = str(UPSTREAM / "kubeflow-trainer/v2.3.0/manifests/third-party/jobset")
    first = build_yaml(rel, remote_mirrors=r.mirrors)
    r.stop()
    assert build_yaml(rel, remote_mirrors=r.mirrors) == first


def test_a_reset_connection_is_retried_and_a_refusal_is_not(tmp_path, monkeypatch):
    """CI saw `[Errno 104] Connection reset by peer` fail a build once; a release file is immutable,
    so a GET whose connection was reset is tried again. An HTTP error is an answer: not retried."""
    import http.server
    import socket
    import struct
    import threading

    from trainerctl.kustomize import build_yaml
    from trainerctl.kustomize.errors import KustomizeError

    gets = []

    class ResetFirst(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            gets.append(self.path)
            if self.path == "/missing.yaml":
                self.send_error(404)
            elif len(gets) == 1:  # close with RST (linger 0): the client sees ECONNRESET
                self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                self.connection.close()
            else:
                body = b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: served\n"
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), ResetFirst)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    monkeypatch.setenv("TRAINERCTL_CACHE_DIR", str(tmp_path / "cache"))
    base = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        for name, url in (("ok", f"{base}/cm.yaml"), ("missing", f"{base}/missing.yaml")):
            (tmp_path / name).mkdir()
            (tmp_path / name / "kustomization.yaml").write_text(f"resources:\n- {url}\n")
        assert "name: served" in build_yaml(str(tmp_path / "ok"))
        assert gets == ["/cm.yaml", "/cm.yaml"]
        with pytest.raises(KustomizeError, match="HTTP 404"):
            build_yaml(str(tmp_path / "missing"))
        assert gets.count("/missing.yaml") == 1
    finally:
        server.shutdown()
        server.server_close()
