"""Pure pieces of the cluster package: no API server needed."""

from __future__ import annotations

import pytest

from trainerctl.cluster.manager.apply import conflict_message
from trainerctl.cluster.client.client import ApiError
from trainerctl.cluster.client.discovery import Resource
from trainerctl.cluster.manager.objects import Ref, body_hash, prepare
from trainerctl.cluster.trainer.preflight import upgrade_path
from trainerctl.cluster.manager.stages import WebhookRules
from trainerctl.cluster.trainer.policy import LEGACY_MANAGERS, STAGES
from trainerctl.cluster.manager.fields import migrated_managed_fields

SECRET = Resource("", "v1", "Secret", "secrets", True)
CTR = Resource("trainer.kubeflow.org", "v1alpha1", "ClusterTrainingRuntime", "clustertrainingruntimes", False)
VWC = Resource("admissionregistration.k8s.io", "v1", "ValidatingWebhookConfiguration",
               "validatingwebhookconfigurations", False)


def test_prepare_drops_what_other_managers_own_and_misplaced_namespaces():
    secret = prepare({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "cert"}, "data": {}}, SECRET, "ns")
    assert "data" not in secret and secret["metadata"]["namespace"] == "ns"
    ctr = prepare({"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "ClusterTrainingRuntime",
                   "metadata": {"name": "r", "namespace": "opendatahub"}}, CTR, "ns")
    assert "namespace" not in ctr["metadata"]
    vwc = prepare({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingWebhookConfiguration",
                   "metadata": {"name": "v"}, "webhooks": [{"name": "a", "clientConfig": {"caBundle": "Cg=="}}]},
                  VWC, "ns")
    assert vwc["webhooks"][0]["clientConfig"] == {}


def test_body_hash_depends_on_content_and_field_manager():
    body = {"a": 1, "b": [1, 2]}
    assert body_hash(body, "trainerctl") == body_hash({"b": [1, 2], "a": 1}, "trainerctl")
    assert body_hash(body, "trainerctl") != body_hash(body, "other")
    assert body_hash(body, "trainerctl") != body_hash({"a": 2, "b": [1, 2]}, "trainerctl")


def test_stages_put_webhook_intercepted_kinds_last():
    rules = WebhookRules.from_objects([{"kind": "ValidatingWebhookConfiguration", "webhooks": [
        {"rules": [{"apiGroups": ["trainer.kubeflow.org"], "resources": ["clustertrainingruntimes"]}]}]}])
    assert STAGES.stage_of("ClusterTrainingRuntime", "trainer.kubeflow.org", "clustertrainingruntimes", rules) == "admitted"
    assert STAGES.stage_of("PodMonitor", "monitoring.coreos.com", "podmonitors", rules) == "config"
    assert STAGES.stage_of("Deployment", "apps", "deployments", rules) == "workloads"
    assert STAGES.stage_of("CustomResourceDefinition", "apiextensions.k8s.io", "customresourcedefinitions", rules) == "crds"


def test_takeover_merges_legacy_field_sets_into_our_apply_entry():
    managed = [
        {"manager": "kubectl-client-side-apply", "operation": "Update", "apiVersion": "v1",
         "fieldsType": "FieldsV1", "fieldsV1": {"f:data": {"f:a": {}}, "f:metadata": {"f:labels": {"f:x": {}}}}},
        {"manager": "trainerctl", "operation": "Apply", "apiVersion": "v1", "fieldsType": "FieldsV1",
         "fieldsV1": {"f:data": {"f:b": {}}}},
        {"manager": "kubectl", "operation": "Update", "subresource": "scale", "apiVersion": "v1",
         "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {"f:replicas": {}}}},
    ]
    fields, names = migrated_managed_fields(managed, "trainerctl", "v1", LEGACY_MANAGERS)
    assert names == ["kubectl-client-side-apply"]
    assert [e["manager"] for e in fields] == ["trainerctl", "kubectl"]  # the scale entry stays
    assert fields[0]["fieldsV1"] == {"f:data": {"f:a": {}, "f:b": {}}, "f:metadata": {"f:labels": {"f:x": {}}}}
    assert migrated_managed_fields(fields, "trainerctl", "v1", LEGACY_MANAGERS) is None


def test_conflict_message_names_the_manager_and_fields():
    exc = ApiError(409, "Conflict", "Apply failed with 1 conflict", {"causes": [
        {"reason": "FieldManagerConflict", "message": 'conflict with "gitops" using v1', "field": ".data.x"}]})
    msg = conflict_message(exc, Ref("", "ConfigMap", "ns", "c"))
    assert msg.startswith('conflict with field manager "gitops" on .data.x') and "--force-conflicts" in msg
    # A cause of another shape (a list as message, a number as field) says nothing: it is left out.
    odd = ApiError(409, "Conflict", 'Apply failed: conflict with "gitops" using v1', {"causes": [
        {"message": ["x"], "field": ".data.y"}, {"message": 'conflict with "argo" using v1', "field": 7},
        {"message": 'conflict with "flux" using v1', "field": None}, "not-a-cause"]})
    assert [set(c) for c in odd.causes] == [{"type", "message", "field"}] and odd.causes[0]["field"] == ""
    assert conflict_message(odd, Ref("", "ConfigMap", "ns", "c")).startswith('conflict with field manager "flux";')


@pytest.mark.parametrize("old,new,refused", [("v2.2.0", "v2.4.0", True), ("2.1.0", "2.5.1", True),
                                             ("v2.2.0", "v2.3.0", False), ("v2.3.0", "v2.4.0", False),
                                             (None, "v2.4.0", False)])
def test_upgrade_path_must_pass_through_2_3(old, new, refused):
    finding = upgrade_path(old, new)
    assert finding.failed == refused
    assert ("upgrade to a 2.3 release first" in finding.message) == refused


def _deployment(**status):
    from trainerctl.cluster.client.views import Deployment

    base = {"observedGeneration": 2, "replicas": 1, "updatedReplicas": 1, "availableReplicas": 1,
            "conditions": [{"type": "Available", "status": "True"}]}
    return Deployment.read({"metadata": {"namespace": "ns", "name": "d", "generation": 2}, "spec": {"replicas": 1},
                            "status": {**base, **status}})


@pytest.mark.parametrize("status, why", [
    ({}, ""),
    ({"observedGeneration": 1}, "rollout of the new spec not observed yet"),
    # Mid-rollout the Available condition is already True: the old pod still counts towards it.
    ({"updatedReplicas": 0, "replicas": 1}, "0 of 1 replica(s) updated"),
    ({"replicas": 2}, "1 old replica(s) still running"),
    ({"terminatingReplicas": 1}, "1 old replica(s) still running"),
    ({"availableReplicas": 0}, "0 of 1 updated replica(s) available"),
    ({"conditions": []}, "Available=unset (no Available condition)"),
])
def test_a_deployment_is_ready_only_once_no_old_replica_runs(status, why):
    from trainerctl.cluster.manager.wait import deployment_is_available

    assert deployment_is_available(_deployment(**status)) == (not why, why)


def _meta(rv, ours_time="t1", others=(), generation=None, labels=None):
    fields = [{"manager": "trainerctl", "operation": "Apply", "time": ours_time, "fieldsV1": {"f:spec": {}}}]
    fields += [{"manager": m, "operation": "Update", "subresource": sub, "time": t, "fieldsV1": {}} for m, sub, t in others]
    return {"resourceVersion": rv, "managedFields": fields, "generation": generation, "labels": labels or {"a": "b"}}


def test_a_controller_write_in_between_is_not_our_change():
    from trainerctl.cluster.manager.apply import _wrote_nothing

    before = _meta("1", others=[("kube-controller-manager", "status", "t0")], generation=3)
    status_only = _meta("2", others=[("kube-controller-manager", "status", "t5")], generation=3)
    assert _wrote_nothing(before, status_only, "trainerctl")
    assert _wrote_nothing(before, dict(before), "trainerctl")
    # Nobody else wrote: a new version is ours, even in the same second (same entry time).
    assert not _wrote_nothing(before, _meta("2", others=[("kube-controller-manager", "status", "t0")], generation=3), "trainerctl")
    # Someone else wrote, and so did we: our entry, the generation or our labels moved.
    assert not _wrote_nothing(before, _meta("2", ours_time="t6", others=[("kube-controller-manager", "status", "t5")], generation=3), "trainerctl")
    assert not _wrote_nothing(before, _meta("2", others=[("kube-controller-manager", "status", "t5")], generation=4), "trainerctl")
    assert not _wrote_nothing(before, _meta("2", others=[("kube-controller-manager", "status", "t5")], generation=3, labels={"a": "c"}), "trainerctl")
