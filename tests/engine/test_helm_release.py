"""Helm's release records read without Helm (trainerctl/cluster/operations/helm_releases.py): decoding, grouping
revisions, what a release owns.

The records here are built the way Helm's storage driver writes them (pkg/storage/driver/util.go:
JSON, gzip at best compression, standard base64; a Secret's data is base64 once more in the API).
tests/e2e/test_e2e_helm.py reads records the real Helm v4.3.2 wrote.
"""

from __future__ import annotations

import base64
import json

import pytest

from tests.support.helm_records import encode_payload
from trainerctl.cluster.client.views import HelmRecord
from trainerctl.cluster.operations import helm_releases


def _release(name: str = "kubeflow-trainer", revision: int = 1, status: str = "deployed",
             manifest: str = "", hooks: list | None = None, chart: str = "kubeflow-trainer", version: str = "2.2.0"):
    return {"name": name, "namespace": "kubeflow-system", "version": revision,
            "info": {"status": status}, "chart": {"metadata": {"name": chart, "version": version}},
            "manifest": manifest, "hooks": hooks or []}


def _secret(release: dict, ns: str = "kubeflow-system", payload: str | None = None) -> dict:
    payload = payload if payload is not None else encode_payload(release)
    return {"kind": "Secret", "type": helm_releases.RELEASE_TYPE,
            "metadata": {"name": f"sh.helm.release.v1.{release['name']}.v{release['version']}", "namespace": ns,
                         "labels": {"owner": "helm", "name": release["name"], "status": release["info"]["status"],
                                    "version": str(release["version"])}},
            "data": {"release": base64.b64encode(payload.encode()).decode()}}


MANIFEST = """---
# Source: kubeflow-trainer/templates/rbac/service_account.yaml
apiVersion: v1
kind: ServiceAccount
metadata:
  name: kubeflow-trainer-controller-manager
  namespace: kubeflow-system
---
# Source: kubeflow-trainer/templates/rbac/clusterrole.yaml
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: kubeflow-trainer-controller-manager
---
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: ConfigMap
  metadata: {name: in-a-list}
"""


@pytest.mark.parametrize("release", [_release(), _release(manifest=MANIFEST), {"name": "x", "unicode": "größe ✓"}])
def test_payload_round_trips_as_helm_writes_it(release):
    assert helm_releases.decode_payload(encode_payload(release)) == release


def test_uncompressed_payload_of_early_helm_3_is_read_too():
    release = _release(manifest=MANIFEST)
    legacy = base64.b64encode(json.dumps(release).encode()).decode()
    assert helm_releases.decode_payload(legacy) == release


@pytest.mark.parametrize("payload, why", [
    ("%%%", "not base64"),
    (base64.b64encode(b"\x1f\x8b\x08garbage").decode(), "bad gzip data"),
    (base64.b64encode(b"{not json").decode(), "not JSON"),
    (base64.b64encode(b"[1, 2]").decode(), "not a JSON object"),
])
def test_a_record_that_is_not_helms_says_why(payload, why):
    with pytest.raises(helm_releases.ReleaseDecodeError, match=why):
        helm_releases.decode_payload(payload)


def test_secret_and_configmap_records_decode():
    release = _release(manifest=MANIFEST)
    secret = _secret(release)
    cm = {"kind": "ConfigMap", "metadata": secret["metadata"], "data": {"release": encode_payload(release)}}
    for raw, kind in ((secret, "Secret"), (cm, "ConfigMap")):
        decoded = HelmRecord.read(raw, kind).decoded()
        assert (decoded.name, decoded.namespace, decoded.version, decoded.status, decoded.chart,
                decoded.chart_version, decoded.manifest) == (release["name"], release["namespace"], 1, "deployed",
                                                             "kubeflow-trainer", "2.2.0", MANIFEST)


def test_releases_group_revisions_and_the_deployed_one_is_current():
    v1 = _release(revision=1, status="superseded", manifest=MANIFEST)
    v2 = _release(revision=2, status="deployed", manifest=MANIFEST.split("---\n# Source: kubeflow-trainer/templates/rbac/clusterrole")[0],
                  version="2.2.1")
    v3 = _release(revision=3, status="failed", manifest="")
    other = _release(name="cert-manager", chart="cert-manager")
    not_helm = {"kind": "Secret", "type": "Opaque", "metadata": {"name": "sh.helm.release.v1.x.v1", "namespace": "a",
                                                                 "labels": {"owner": "helm"}}, "data": {}}
    broken = _secret(_release(revision=4, status="pending-upgrade"), payload="!!")
    releases = helm_releases.releases_from_records([_secret(v) for v in (v3, v1, v2)] + [_secret(other, "cm"), not_helm, broken])
    assert [(r.name, r.namespace) for r in releases] == [("cert-manager", "cm"), ("kubeflow-trainer", "kubeflow-system")]
    trainer = releases[1]
    assert [r.revision for r in trainer.records] == [1, 2, 3, 4]  # the unreadable one still goes at the end
    assert trainer.revision == 2 and trainer.status == "deployed" and trainer.chart_version == "2.2.1"
    assert trainer.describe() == ("Helm release kubeflow-trainer in namespace kubeflow-system "
                                  "(chart kubeflow-trainer-2.2.1, revision 2, deployed)")
    # What any stored revision created (Helm deletes what an upgrade dropped, so what is left is the release's).
    names = [(o["kind"], o["metadata"]["name"]) for o in trainer.manifest_objects()]
    assert names == [("ServiceAccount", "kubeflow-trainer-controller-manager"),
                     ("ClusterRole", "kubeflow-trainer-controller-manager"), ("ConfigMap", "in-a-list")]


def test_hooks_are_the_releases_too():
    hook = {"name": "kubeflow-trainer-runtimes-installer", "kind": "Job", "events": ["post-install"],
            "manifest": "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: kubeflow-trainer-runtimes-installer\n"}
    release = helm_releases.releases_from_records([_secret(_release(hooks=[hook]))])[0]
    assert [(o["kind"], o["metadata"]["name"]) for o in release.hook_objects()] == \
        [("Job", "kubeflow-trainer-runtimes-installer")]


def test_ownership_marks_and_the_patch_that_removes_them():
    meta = {"namespace": "kubeflow-system",
            "annotations": {helm_releases.NAME_ANNOTATION: "kubeflow-trainer", helm_releases.NAMESPACE_ANNOTATION: "kubeflow-system",
                            "keep": "me"},
            "labels": {"app.kubernetes.io/managed-by": "Helm", "app.kubernetes.io/name": "trainer"}}
    release = helm_releases.Release("kubeflow-trainer", "kubeflow-system")
    assert release.owns(meta) and helm_releases.owner_of(meta) == ("kubeflow-trainer", "kubeflow-system")
    assert not helm_releases.Release("kubeflow-trainer", "elsewhere").owns(meta)
    assert helm_releases.ownership_patch(meta) == [
        {"op": "remove", "path": "/metadata/annotations/meta.helm.sh~1release-name"},
        {"op": "remove", "path": "/metadata/annotations/meta.helm.sh~1release-namespace"},
        {"op": "remove", "path": "/metadata/labels/app.kubernetes.io~1managed-by"}]
    assert helm_releases.ownership_patch({"labels": {"app.kubernetes.io/managed-by": "kustomize"}}) == []
    assert helm_releases.owner_of({"annotations": {}}) is None
