"""The engine's filesystem: the disk (rooted, read-only, bounded reads), an in-memory layer over
it, and the load restrictor resolving `..` and symlinks hop by hop through either."""

from __future__ import annotations

import os
import socket
import threading

import pytest

from tests.support.kustomize_cases import write_tree
from trainerctl.kustomize import KustomizeError, build, build_yaml
from trainerctl.kustomize.filesys import DiskFS, FsError, OverlayFS
from trainerctl.kustomize.loader import Missing, Outside, real_path

CM = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm}\ndata: {k: v}\n"


def test_a_fifo_is_refused_by_name_without_waiting(tmp_path):
    write_tree(tmp_path, {"kustomization.yaml": "resources: [pipe.yaml]\n"})
    os.mkfifo(tmp_path / "pipe.yaml")
    done = []

    def run():
        try:
            build(str(tmp_path))
        except KustomizeError as exc:
            done.append(str(exc))

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(10)
    assert done, "the build waited on the FIFO"
    assert "pipe.yaml" in done[0] and "FIFO" in done[0] and "\n" not in done[0]


def test_a_fifo_kustomization_file_is_refused(tmp_path):
    os.mkfifo(tmp_path / "kustomization.yaml")
    with pytest.raises(KustomizeError, match="kustomization.yaml: a FIFO, not a regular file"):
        build(str(tmp_path))


def test_a_socket_is_refused(tmp_path):
    write_tree(tmp_path, {"kustomization.yaml": "resources: [sock.yaml]\n"})
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(tmp_path / "sock.yaml"))
    try:
        with pytest.raises(KustomizeError, match="sock.yaml: a socket, not a regular file"):
            build(str(tmp_path))
    finally:
        server.close()


def test_a_device_is_refused(tmp_path):
    write_tree(tmp_path, {"kustomization.yaml": "resources: [zero.yaml]\n"})
    try:
        os.mknod(tmp_path / "zero.yaml", 0o600 | 0o020000, os.makedev(1, 5))  # /dev/zero's numbers
    except PermissionError:
        pytest.skip("creating a device node needs privileges")
    with pytest.raises(KustomizeError, match="zero.yaml: a device, not a regular file"):
        build(str(tmp_path))


def test_reads_are_bounded_and_the_bound_can_be_raised(tmp_path, monkeypatch):
    write_tree(tmp_path, {"kustomization.yaml": "resources: [cm.yaml]\n", "cm.yaml": CM})
    monkeypatch.setenv("TRAINERCTL_MAX_FILE", str(len(CM) - 1))
    with pytest.raises(KustomizeError, match=r"cm.yaml: larger than \d+ bytes \(raise TRAINERCTL_MAX_FILE"):
        build(str(tmp_path))
    monkeypatch.setenv("TRAINERCTL_MAX_FILE", str(len(CM)))
    assert build(str(tmp_path))[0]["data"] == {"k": "v"}


def test_a_symlink_loop_is_one_line(tmp_path):
    write_tree(tmp_path, {"kustomization.yaml": "resources: [a.yaml]\n"})
    os.symlink("b.yaml", tmp_path / "a.yaml")
    os.symlink("a.yaml", tmp_path / "b.yaml")
    with pytest.raises(KustomizeError, match="a.yaml: too many levels of symbolic links"):
        build(str(tmp_path))
    os.symlink("loop", tmp_path / "loop")
    with pytest.raises(KustomizeError, match="too many levels of symbolic links"):
        build(str(tmp_path / "loop"))


def test_disk_fs_is_rooted(tmp_path):
    inside = write_tree(tmp_path / "in", {"cm.yaml": CM})
    fs = DiskFS(str(inside))
    assert fs.lstat(str(inside / "cm.yaml")).kind == "file"
    assert fs.lstat(str(tmp_path)) is None
    with pytest.raises(FsError):
        fs.read("/etc/hostname")


def test_overlay_files_build_over_the_disk(tmp_path):
    write_tree(tmp_path, {"base/kustomization.yaml": "resources: [cm.yaml]\n", "base/cm.yaml": CM})
    fs = OverlayFS()
    fs.add_file(str(tmp_path / "kustomization.yaml"),
                b"resources: [base]\nnamePrefix: mem-\n", label="the in-memory overlay")
    fs.add_file(str(tmp_path / "base" / "cm.yaml"), CM.replace("v}", "from-memory}").encode())
    (obj,) = build(str(tmp_path), fs=fs)
    assert obj["metadata"]["name"] == "mem-cm" and obj["data"] == {"k": "from-memory"}
    assert not (tmp_path / "kustomization.yaml").exists()
    assert (tmp_path / "base" / "cm.yaml").read_text() == CM
    # the disk alone still sees the disk
    with pytest.raises(KustomizeError, match="unable to find one of"):
        build(str(tmp_path))
    fs.add_file(str(tmp_path / "kustomization.yaml"), b"bogus: 1\n", label="the in-memory overlay")
    with pytest.raises(KustomizeError, match="^the in-memory overlay: .*bogus"):
        build(str(tmp_path), fs=fs)


def test_overlay_hides_disk_files(tmp_path):
    write_tree(tmp_path, {"kustomization.yml": "resources: [cm.yaml]\n", "cm.yaml": CM})
    fs = OverlayFS()
    fs.add_file(str(tmp_path / "kustomization.yaml"), b"resources: [cm.yaml]\nnamespace: x\n")
    with pytest.raises(KustomizeError, match="found multiple kustomization files"):
        build(str(tmp_path), fs=fs)
    fs.hide(str(tmp_path / "kustomization.yml"))
    assert build(str(tmp_path), fs=fs)[0]["metadata"]["namespace"] == "x"


def test_the_load_restrictor_holds_through_the_overlay(tmp_path):
    write_tree(tmp_path, {"outside.yaml": CM, "root/in.yaml": CM})
    root = tmp_path / "root"
    fs = OverlayFS()
    fs.add_file(str(root / "kustomization.yaml"), b"resources: [../outside.yaml]\n")
    with pytest.raises(KustomizeError, match="outside.yaml: security: file .* is not in or below"):
        build(str(root), fs=fs)
    # an in-memory file outside the root is refused like a disk file
    fs.add_file(str(tmp_path / "mem.yaml"), CM.encode())
    fs.add_file(str(root / "kustomization.yaml"), b"resources: [../mem.yaml]\n")
    with pytest.raises(KustomizeError, match="mem.yaml: security"):
        build(str(root), fs=fs)
    # a disk symlink under an overlay directory is followed, and checked
    os.symlink("../outside.yaml", root / "link.yaml")
    fs.add_file(str(root / "kustomization.yaml"), b"resources: [link.yaml]\n")
    with pytest.raises(KustomizeError, match="link.yaml: security"):
        build(str(root), fs=fs)
    os.symlink("in.yaml", root / "ok.yaml")
    fs.add_file(str(root / "kustomization.yaml"), b"resources: [ok.yaml]\n")
    assert build(str(root), fs=fs)[0]["metadata"]["name"] == "cm"


def test_an_overlay_file_cannot_sit_under_a_disk_symlink(tmp_path):
    (tmp_path / "real").mkdir()
    os.symlink("real", tmp_path / "link")
    with pytest.raises(ValueError, match="not a directory"):
        OverlayFS().add_file(str(tmp_path / "link" / "kustomization.yaml"), b"")


def test_dotdot_is_lexical_then_links_hop_by_hop(tmp_path):
    """As Go's filepath.Join: `sub/../x` is `x` even when sub is a link; inside a link's target
    `..` is taken from where the link points. The first hop out of the boundary is refused."""
    write_tree(tmp_path, {"root/x.yaml": CM, "root/deep/y.yaml": CM, "elsewhere/z.yaml": CM})
    root = str(tmp_path / "root")
    os.symlink(str(tmp_path / "elsewhere"), tmp_path / "root" / "sub")
    fs = DiskFS()
    assert real_path(fs, f"{root}/sub/../x.yaml", root) == (f"{root}/x.yaml", "file")
    with pytest.raises(Outside):
        real_path(fs, f"{root}/sub/z.yaml", root)
    os.symlink("deep/../../root/x.yaml", tmp_path / "root" / "out-and-back")
    with pytest.raises(Outside):  # leaves the root before it comes back
        real_path(fs, f"{root}/out-and-back", root)
    assert real_path(fs, f"{root}/out-and-back") == (f"{root}/x.yaml", "file")
    with pytest.raises(Missing):
        real_path(fs, f"{root}/x.yaml/more", root)


def test_build_of_a_plain_path_still_works(tmp_path, monkeypatch):
    write_tree(tmp_path, {"k/kustomization.yaml": "resources: [cm.yaml]\n", "k/cm.yaml": CM})
    monkeypatch.chdir(tmp_path)
    assert build_yaml("k") == build_yaml(str(tmp_path / "k") + "/")
    with pytest.raises(KustomizeError, match="^nowhere: no such directory$"):
        build("nowhere")
    with pytest.raises(KustomizeError, match="not a directory"):
        build("k/cm.yaml")
