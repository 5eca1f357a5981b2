"""Preflight and status check JobSet the way the Go operator does.

On the test cluster the OpenShift and OLM APIs are CRDs: `image.openshift.io` ImageStream (how
trainerctl detects OpenShift), OLM's `OperatorCondition` (operators.coreos.com/v2) and the JobSet
Operator's `JobSetOperator` (operator.openshift.io/v1, cluster scope). Each step of the operator's
check is failed in turn, in its order: one distinct line and exit 3 from install, the same reason
in `status`.
"""

from __future__ import annotations

import json

import yaml

from tests.support.cluster import apply_raw, jobset_crd, odh_objects, podmonitor_crd, wait_established
from trainerctl.cluster.trainer import dependencies

ODH_NS = "opendatahub"
OLM_NS = "openshift-jobset-operator"


def crd(group: str, version: str, kind: str, plural: str, scope: str) -> dict:
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": f"{plural}.{group}"},
            "spec": {"group": group, "scope": scope,
                     "names": {"kind": kind, "listKind": f"{kind}List", "plural": plural, "singular": kind.lower()},
                     "versions": [{"name": version, "served": True, "storage": True, "subresources": {"status": {}},
                                   "schema": {"openAPIV3Schema": {"type": "object",
                                                                  "x-kubernetes-preserve-unknown-fields": True}}}]}}


def install_crd(env, obj: dict) -> None:
    apply_raw(env.cluster, obj, "test-setup")
    wait_established(env.cluster, obj["metadata"]["name"], timeout=30)


def test_each_jobset_operator_reason_is_one_line_and_exit_3(env, tmp_path, capsys):
    from trainerctl.cli import main

    rendered = tmp_path / "trainer.yaml"
    rendered.write_text(yaml.safe_dump_all(odh_objects()))
    install = ["install", "-f", str(rendered), "--kubeconfig", env.kubeconfig, "-n", ODH_NS, "--dry-run"]
    status = ["status", "--kubeconfig", env.kubeconfig, "-n", ODH_NS, "-o", "json"]
    seen: list[str] = []

    def expect(reason: str, text: str) -> None:
        code = main(install)
        err = capsys.readouterr().err.strip().splitlines()
        assert code == 3, err
        assert err[-1] == f"error: {text} [{reason}]"
        seen.append(err[-1])
        main(status)
        conds = {c["type"]: c for c in json.loads(capsys.readouterr().out)["conditions"]}
        assert conds["DependenciesAvailable"]["status"] == "False"
        assert conds["DependenciesAvailable"]["reason"] == reason
        assert conds["Degraded"]["status"] == "True" and conds["Degraded"]["reason"] == reason

    # Plain Kubernetes: only the JobSet CRD matters.
    expect("JobSetCRDNotFound", "JobSet is not installed: the CRD jobsets.jobset.x-k8s.io (v1alpha2) is missing or not "
           f"Established; {dependencies.JOBSET_HINT}")

    install_crd(env, crd("image.openshift.io", "v1", "ImageStream", "imagestreams", "Namespaced"))  # OpenShift now
    expect("JobSetOperatorNotInstalled", "the JobSet Operator is not installed (no OLM OperatorCondition "
           "jobset-operator.*): install it from OperatorHub before Trainer")
    install_crd(env, crd("operators.coreos.com", "v2", "OperatorCondition", "operatorconditions", "Namespaced"))
    env.cluster.request("POST", "/api/v1/namespaces", body={"metadata": {"name": OLM_NS}})
    path = f"/apis/operators.coreos.com/v2/namespaces/{OLM_NS}/operatorconditions"
    env.cluster.request("POST", path, body={"apiVersion": "operators.coreos.com/v2", "kind": "OperatorCondition",
                                            "metadata": {"name": "other-operator.v1.0.0"}})
    expect("JobSetOperatorNotInstalled", "the JobSet Operator is not installed (no OLM OperatorCondition "
           "jobset-operator.*): install it from OperatorHub before Trainer")
    env.cluster.request("POST", path, body={"apiVersion": "operators.coreos.com/v2", "kind": "OperatorCondition",
                                            "metadata": {"name": "jobset-operator.v1.0.0"}})
    crmsg = ("the JobSetOperator CR 'cluster' (operator.openshift.io/v1) does not exist: create it to enable the "
             "JobSet controller")
    expect("JobSetOperatorCRNotFound", crmsg)  # its CRD is not even there
    install_crd(env, crd("operator.openshift.io", "v1", "JobSetOperator", "jobsetoperators", "Cluster"))
    expect("JobSetOperatorCRNotFound", crmsg)
    cr_path = "/apis/operator.openshift.io/v1/jobsetoperators"
    env.cluster.request("POST", cr_path, body={"apiVersion": "operator.openshift.io/v1", "kind": "JobSetOperator",
                                               "metadata": {"name": "cluster"}, "spec": {"managementState": "Managed"}})
    expect("JobSetOperatorDegraded", "JobSetOperator cluster is degraded: no status conditions yet (the JobSet "
           "Operator has not reconciled it)")

    def set_conditions(*conds: tuple[str, str, str, str]) -> None:
        env.cluster.request("PATCH", f"{cr_path}/cluster/status", content_type="application/merge-patch+json",
                            body={"status": {"conditions": [
                                {"type": t, "status": s, "reason": r, "message": m,
                                 "lastTransitionTime": "2026-01-01T00:00:00Z"} for t, s, r, m in conds]}})

    set_conditions(("Available", "True", "AsExpected", ""),
                   ("TargetConfigControllerDegraded", "True", "SyncError", "cannot render the deployment"))
    expect("JobSetOperatorDegraded", "JobSetOperator cluster is degraded: TargetConfigControllerDegraded=True "
           "(SyncError): cannot render the deployment")
    set_conditions(("Available", "False", "NoPods", "0 of 1 ready"), ("Degraded", "False", "AsExpected", ""))
    expect("JobSetOperatorDegraded", "JobSetOperator cluster is degraded: Available=False (NoPods): 0 of 1 ready")
    set_conditions(("Available", "True", "AsExpected", ""), ("Degraded", "False", "AsExpected", ""))
    expect("JobSetCRDNotFound", "JobSet is not installed: the CRD jobsets.jobset.x-k8s.io (v1alpha2) is missing or "
           "not Established; it should be created by the JobSet Operator: check the operator's status and logs")
    assert len(set(seen)) == len(seen) - 2  # distinct lines; the repeated checks say the same thing

    # All there: preflight passes (the dry-run goes on to plan the install).
    install_crd(env, jobset_crd())
    install_crd(env, podmonitor_crd())
    code = main(install)
    captured = capsys.readouterr()
    assert code == 0, captured.err
    main(status)
    conds = {c["type"]: c for c in json.loads(capsys.readouterr().out)["conditions"]}
    assert conds["DependenciesAvailable"] == {"type": "DependenciesAvailable", "status": "True",
                                              "reason": "DependenciesAvailable",
                                              "message": "all required dependencies are available"}
    assert conds["Degraded"]["status"] == "False"


class _NoJobSetDiscovery:
    """Discovery a moment after the CRD became Established: it does not serve the kind yet."""

    def lookup(self, api_version: str, kind: str):
        return None


class _CrdCluster:
    def __init__(self, crd: dict | None):
        self.crd, self.paths = crd, []

    def request(self, method: str, path: str, **_):
        from trainerctl.cluster.client.client import ApiError

        self.paths.append(path)
        if self.crd is None:
            raise ApiError(404, "NotFound", "not found")
        return self.crd


def test_an_established_crd_counts_even_before_discovery_serves_its_kind():
    established = {"metadata": {"name": dependencies.JOBSET_CRD},
                   "status": {"conditions": [{"type": "Established", "status": "True"}]}}
    cluster = _CrdCluster(established)
    state = dependencies.check(cluster, _NoJobSetDiscovery(), openshift=False)
    assert state.ok and state.jobset == "cluster"
    assert cluster.paths == ["/apis/apiextensions.k8s.io/v1/customresourcedefinitions/jobsets.jobset.x-k8s.io"]
    pending = {"metadata": {"name": dependencies.JOBSET_CRD},
               "status": {"conditions": [{"type": "Established", "status": "False"}]}}
    for crd_obj in (pending, None):
        assert dependencies.check(_CrdCluster(crd_obj), _NoJobSetDiscovery(), openshift=False).reason == "JobSetCRDNotFound"
