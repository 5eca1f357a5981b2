"""status: installed source from the inventory, each object present/missing/drifted, Deployments."""

from __future__ import annotations

import json

import yaml

from tests.test_cluster_support import FakeController, env, odh_objects, prepare_cluster_for_odh  # noqa: F401
from tests.test_install import ODH_NS
from trainerctl.cluster.install import InstallOptions, install
from trainerctl.cluster.status import status


def test_status_reports_source_presence_drift_and_availability(env, tmp_path, capsys):
    from trainerctl.cli import main

    assert main(["status", "--kubeconfig", env.kubeconfig, "-n", ODH_NS]) == 0
    assert "not installed by trainerctl" in capsys.readouterr().out
    prepare_cluster_for_odh(env.cluster)
    objects = odh_objects()
    source = {"url": "https://github.com/opendatahub-io/trainer.git", "ref": "odh-3.5.0",
              "commit": "d063877c480bbd9a35512691ded96c97d8937b44", "trainer_version": "2.1.0"}
    with FakeController(env, objects):
        install(objects, cluster=env.cluster, namespace=ODH_NS, source=source, options=InstallOptions(timeout=60))
    st = status(cluster=env.cluster, namespace=ODH_NS)
    assert st["installed"] and st["source"] == source and st["trainerVersion"] == "2.1.0"
    assert st["summary"] == {"present": len(objects) + 1}
    assert st["deployments"] == [{"namespace": ODH_NS, "name": "kubeflow-trainer-controller-manager",
                                  "available": True}]

    env.cluster.request("DELETE", f"/api/v1/namespaces/{ODH_NS}/configmaps/kubeflow-trainer-config")
    env.cluster.request("PATCH", f"/api/v1/namespaces/{ODH_NS}/services/kubeflow-trainer-controller-manager",
                        body={"metadata": {"labels": {"app.kubernetes.io/name": "edited"}}},
                        content_type="application/merge-patch+json", query={"fieldManager": "kubectl-edit"})
    rendered = tmp_path / "render.yaml"
    rendered.write_text(yaml.safe_dump_all(objects))
    assert main(["status", "--kubeconfig", env.kubeconfig, "-n", ODH_NS, "-f", str(rendered), "-o", "json"]) == 0
    st = json.loads(capsys.readouterr().out)
    states = {o["name"]: o["state"] for o in st["objects"]}
    assert states["kubeflow-trainer-config"] == "missing"
    assert states["kubeflow-trainer-controller-manager"] in ("drifted", "present")
    assert [o["kind"] for o in st["objects"] if o["state"] == "drifted"] == ["Service"]
    assert main(["status", "--kubeconfig", env.kubeconfig, "-n", ODH_NS]) == 0
    out = capsys.readouterr().out
    assert "ref odh-3.5.0 commit d063877c480bbd9a35512691ded96c97d8937b44" in out
    assert "ConfigMap opendatahub/kubeflow-trainer-config: missing" in out
