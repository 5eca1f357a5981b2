"""One ownership label per command: the session's (cli/options.py `session`), from --owner-label or
`ownerLabel:` in trainerctl.yaml, for every cluster action. An install made under another label
than the default is uninstalled by it (before, uninstall searched the default label and left it all),
and status and support-bundle take it too.

On the session's API server, in a namespace of its own, with objects that need no controller.
"""

from __future__ import annotations

import os
import secrets
import subprocess
import sys

import pytest
import yaml

from trainerctl.cluster.client.client import connect

pytestmark = pytest.mark.cluster

LABEL = ("example.com/owned-by", "team-a")


def _run(*args: str, cwd, kubeconfig) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "KUBECONFIG"}
    return subprocess.run([sys.executable, "-m", "trainerctl", *args, "--kubeconfig", str(kubeconfig)], cwd=cwd,
                          capture_output=True, text=True, env=env, stdin=subprocess.DEVNULL)


def test_uninstall_status_and_support_bundle_use_the_settings_owner_label(test_cluster, tmp_path):
    ns = f"owner-{secrets.token_hex(3)}"
    labels = {LABEL[0]: LABEL[1]}
    objects = [{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "settings", "namespace": ns,
                                                                      "labels": labels}, "data": {"a": "1"}},
               {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "runner", "namespace": ns,
                                                                           "labels": labels}}]
    (tmp_path / "objects.yaml").write_text(yaml.safe_dump_all(objects))
    (tmp_path / "trainerctl.yaml").write_text(f"ownerLabel: {LABEL[0]}={LABEL[1]}\nnamespace: {ns}\n")
    kubeconfig = test_cluster.admin_kubeconfig
    admin = connect(str(kubeconfig))
    config_map = f"/api/v1/namespaces/{ns}/configmaps/settings"

    installed = _run("install", "-f", "objects.yaml", "--no-wait", "--skip-preflight", cwd=tmp_path,
                     kubeconfig=kubeconfig)
    assert installed.returncode == 0, installed.stderr
    assert admin.request("GET", config_map)["metadata"]["labels"] == labels
    assert admin.request("GET", f"/api/v1/namespaces/{ns}")["metadata"]["labels"][LABEL[0]] == LABEL[1]

    status = _run("status", "-f", "objects.yaml", "-o", "json", cwd=tmp_path, kubeconfig=kubeconfig)
    assert status.returncode in (0, 1), status.stderr  # read, Ready or not; never refused
    states = {o["name"]: o["state"] for o in yaml.safe_load(status.stdout)["objects"]}
    assert states["settings"] == "present" and states["runner"] == "present", states

    bundle = _run("support-bundle", "--output-file", str(tmp_path / "bundle.tar.gz"), cwd=tmp_path,
                  kubeconfig=kubeconfig)
    assert bundle.returncode == 0, bundle.stderr

    removed = _run("uninstall", "-o", "json", cwd=tmp_path, kubeconfig=kubeconfig)
    assert removed.returncode == 0, removed.stderr
    gone = {o["name"] for o in yaml.safe_load(removed.stdout)["objects"] if o["action"] == "deleted"}
    assert {"settings", "runner"} <= gone, removed.stdout
    assert admin.get_or_none(config_map) is None
    assert admin.get_or_none(f"/api/v1/namespaces/{ns}/serviceaccounts/runner") is None

    # And the flag, for each of them, over the file.
    for command in ("uninstall", "status", "support-bundle"):
        proc = _run(command, "--owner-label", "other.example/x=y", "--help", cwd=tmp_path, kubeconfig=kubeconfig)
        assert proc.returncode == 0 and "--owner-label" in proc.stdout, (command, proc.stderr)
