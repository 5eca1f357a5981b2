"""A forbidden user gets a clear line; an API server outage mid-install converges."""

from __future__ import annotations

import threading

import yaml

from tests.support.cluster import FakeController, ODH_NS, odh_objects, prepare_cluster_for_odh
from tests.support.waiting import wait_until
from tests.support.actions import diff
from tests.support.actions import session
from tests.support.actions import install
from trainerctl.cluster.install import InstallOptions, RunFailed


def test_restricted_user_is_refused_before_the_first_apply_naming_the_permission(env, tmp_path, capsys):
    from trainerctl.cli import main

    prepare_cluster_for_odh(env.cluster)
    rendered = tmp_path / "render.yaml"
    rendered.write_text(yaml.safe_dump_all(odh_objects()))
    code = main(["install", "-f", str(rendered), "--kubeconfig", env.restricted_kubeconfig, "-n", ODH_NS])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 3
    assert len(err) == 1 and err[0].startswith("error: user testenv-restricted may not patch "
                                               "customresourcedefinitions.apiextensions.k8s.io (cluster-scoped)")
    assert env.get(f"/api/v1/namespaces/{ODH_NS}") is None  # nothing half-applied


def test_bad_kubeconfig_and_context_are_one_line_errors(shared_env, tmp_path, capsys):
    from trainerctl.cli import main

    assert main(["status", "--kubeconfig", str(tmp_path / "missing")]) == 2
    assert "file not found" in capsys.readouterr().err
    assert main(["status", "--kubeconfig", shared_env.kubeconfig, "--context", "nope"]) == 2
    assert "unknown context 'nope'" in capsys.readouterr().err
    broken = tmp_path / "kc"
    broken.write_text(open(shared_env.kubeconfig).read().replace(shared_env.tc.server, "https://127.0.0.1:1"))
    one = tmp_path / "one.yaml"
    one.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n")
    assert main(["install", "-f", str(one), "--kubeconfig", str(broken)]) == 3
    err = capsys.readouterr().err
    assert err.startswith("error: cannot reach the API server https://127.0.0.1:1") and err.count("\n") == 1


def test_api_server_outage_mid_install_then_rerun_converges(env):
    prepare_cluster_for_odh(env.cluster)
    objects = odh_objects()
    outcome: dict = {}
    with FakeController(env, objects, ready=False) as fake:
        def run() -> None:
            try:
                install(objects, cluster=env.cluster, namespace=ODH_NS, options=InstallOptions(timeout=60))
            except RunFailed as exc:
                outcome["error"] = exc
        thread = threading.Thread(target=run)
        thread.start()
        wait_until(lambda: env.get(f"/apis/apps/v1/namespaces/{ODH_NS}/deployments/kubeflow-trainer-controller-manager"),
                   60, "install to create the controller's Deployment", interval=0.05)
        env.tc.stop_apiserver()  # while install waits for the controller
        thread.join(60)
        assert "error" in outcome, "install did not notice the outage"
        assert "cannot reach the API server" in str(outcome["error"])
        assert outcome["error"].exit_code != 0
        env.tc.start_apiserver()
        fake.ready = True
        report = install(objects, cluster=env.cluster, namespace=ODH_NS, options=InstallOptions(timeout=60))
        assert not report.failed
        # Exactly what a clean install makes: nothing to change, nothing extra, inventory complete.
        result = diff(objects, cluster=env.cluster, namespace=ODH_NS)
        assert not result.drift and not result.errors

    inv = session(env.cluster, ODH_NS).resources.read_inventory()
    assert inv.complete and len(inv.entries) == len(objects) + 1
