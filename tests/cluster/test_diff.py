"""--dry-run and diff write nothing; diff exits 1 on drift, 0 after a re-install."""

from __future__ import annotations

import pytest
import yaml

from tests.support.cluster import FakeController, ODH_NS, live_objects, odh_objects, prepare_cluster_for_odh
from tests.support.waiting import Not, wait_until
from trainerctl.cluster.client.client import ApiError
from tests.support.actions import install
from trainerctl.cluster.install import InstallOptions, RunFailed


def all_resource_versions(env) -> dict[str, str]:
    """resourceVersion of every object of every listable type: proves nothing was written."""
    from trainerctl.cluster.client.client import object_path
    from trainerctl.cluster.client.discovery import Discovery

    out = {}
    for res in Discovery(env.cluster).all_resources():
        # Leases (API server identity, renewed every few seconds) and Events are not ours to judge.
        if "list" not in res.verbs or res.kind in ("Event", "Lease"):
            continue
        def listed(res=res):
            try:
                return env.cluster.request("GET", object_path(res.group, res.version, res.resource, None),
                                           accept="application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1")
            except ApiError as exc:  # a just-created CRD's storage may still be initialising
                if exc.status not in (429, 503):
                    raise
                return Not(exc)

        items = wait_until(listed, 10, f"the API server to list {res.resource}")
        for it in items.get("items") or []:
            md = it["metadata"]
            out[f"{res.group}/{res.kind}/{md.get('namespace', '')}/{md['name']}"] = md.get("resourceVersion")
    return out


def test_dry_run_on_an_empty_cluster_writes_nothing_and_counts_creates(env):
    prepare_cluster_for_odh(env.cluster)
    objects = odh_objects()
    before = all_resource_versions(env)
    report = install(objects, cluster=env.cluster, namespace=ODH_NS, options=InstallOptions(dry_run=True))
    assert all_resource_versions(env) == before
    # Runtimes whose CRD is not installed yet count as "create", not as errors.
    assert report.counts() == {"created": len(objects) + 1}


def test_dry_run_and_diff_after_install(env, tmp_path, capsys):
    from trainerctl.cli import main

    prepare_cluster_for_odh(env.cluster)
    objects = odh_objects()
    rendered = tmp_path / "render.yaml"
    rendered.write_text(yaml.safe_dump_all(objects))
    args = ["-f", str(rendered), "--kubeconfig", env.kubeconfig]
    with FakeController(env, objects) as fake:
        install(objects, cluster=env.cluster, namespace=ODH_NS, options=InstallOptions(timeout=60))
        wait_until(fake.settled, 30, "the fake controller to settle")
        before = all_resource_versions(env)
        report = install(objects, cluster=env.cluster, namespace=ODH_NS, options=InstallOptions(dry_run=True))
        assert report.changed == 0
        assert main(["diff", *args]) == 0
        assert capsys.readouterr().out == ""
        assert all_resource_versions(env) == before

        # A managed field edited by hand is drift.
        env.cluster.request("PATCH", f"/api/v1/namespaces/{ODH_NS}/configmaps/kubeflow-trainer-config",
                            body={"data": {"controller_manager_config.yaml": "edited: by hand\n"}},
                            content_type="application/merge-patch+json", query={"fieldManager": "kubectl-edit"})
        before = all_resource_versions(env)
        assert main(["diff", *args]) == 1
        out = capsys.readouterr().out
        assert "live/ConfigMap/opendatahub/kubeflow-trainer-config" in out
        assert "-  controller_manager_config.yaml: 'edited: by hand" in out or "edited: by hand" in out
        assert 'conflict with field manager "kubectl-edit"' in out
        # The hand edit made kubectl-edit the owner: a dry-run names it, --force-conflicts takes it back.
        with pytest.raises(RunFailed, match='conflict with field manager "kubectl-edit"'):
            install(objects, cluster=env.cluster, namespace=ODH_NS, options=InstallOptions(dry_run=True))
        report = install(objects, cluster=env.cluster, namespace=ODH_NS,
                         options=InstallOptions(dry_run=True, force_conflicts=True))
        assert [o.name for o in report.objects if o.action == "configured"] == ["kubeflow-trainer-config"]
        assert all_resource_versions(env) == before

        install(objects, cluster=env.cluster, namespace=ODH_NS, options=InstallOptions(timeout=60, force_conflicts=True))
        assert main(["diff", *args]) == 0
        capsys.readouterr()
    live = live_objects(env, report)
    cm = live[f"/ConfigMap/{ODH_NS}/kubeflow-trainer-config"]
    assert "edited: by hand" not in cm["data"]["controller_manager_config.yaml"]


def test_diff_reports_errors_above_1(shared_env, tmp_path):
    from trainerctl.cli import main

    bad = tmp_path / "bad.yaml"
    bad.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\ndata: {a: 1}\n---\n- not an object\n")
    assert main(["diff", "-f", str(bad), "--kubeconfig", shared_env.kubeconfig]) == 2
