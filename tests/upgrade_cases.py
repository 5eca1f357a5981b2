"""Inputs shared by the upgrade tests: the odh-3.4.0 CRDs, hand-edited targets, TrainJob fixtures."""

from __future__ import annotations

import copy
from pathlib import Path

import yaml

TRAINJOBS = "trainjobs.trainer.kubeflow.org"
REMOVED_TOP = "spec.podTemplateOverrides"
REMOVED_NESTED = "spec.trainer.env[*].valueFrom"


def load_crds(shared: Path, ref: str) -> list[dict]:
    out = []
    for f in sorted((shared / "upstream" / ref / "manifests" / "base" / "crds").glob("*.yaml")):
        if f.name != "kustomization.yaml":
            out += [d for d in yaml.load_all(f.read_text(), Loader=yaml.CSafeLoader) if d]
    return out


def _spec_schema(crd: dict, version: str = "v1alpha1") -> dict:
    v = next(v for v in crd["spec"]["versions"] if v["name"] == version)
    return v["schema"]["openAPIV3Schema"]["properties"]["spec"]


def target_removing_fields(crds: list[dict]) -> list[dict]:
    """The TrainJob CRD loses podTemplateOverrides and trainer.env[*].valueFrom, makes
    spec.trainer required, and makes spec.trainer.image immutable."""
    out = copy.deepcopy(crds)
    tj = next(c for c in out if c["metadata"]["name"] == TRAINJOBS)
    spec = _spec_schema(tj)
    del spec["properties"]["podTemplateOverrides"]
    del spec["properties"]["trainer"]["properties"]["env"]["items"]["properties"]["valueFrom"]
    spec["required"] = sorted(set(spec.get("required", [])) | {"trainer"})
    spec["properties"]["trainer"]["properties"]["image"].setdefault("x-kubernetes-validations", []).append(
        {"rule": "self == oldSelf", "message": "image is immutable"})
    return out


def target_dropping_stored_version(crds: list[dict]) -> list[dict]:
    """The TrainJob CRD now serves and stores only v1beta1: v1alpha1 is gone from spec.versions
    although the cluster has stored TrainJobs in it."""
    out = copy.deepcopy(crds)
    tj = next(c for c in out if c["metadata"]["name"] == TRAINJOBS)
    version = tj["spec"]["versions"][0]
    version["name"] = "v1beta1"
    tj["spec"]["versions"] = [version]
    return out


def trainjob(name: str, namespace: str, spec_extra: dict | None = None) -> dict:
    spec = {"runtimeRef": {"name": "torch-distributed"},
            "trainer": {"numNodes": 1, "env": [{"name": "PLAIN", "value": "1"}]}}
    for key, value in (spec_extra or {}).items():
        if key == "trainer":
            spec["trainer"].update(value)
        else:
            spec[key] = value
    return {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob",
            "metadata": {"name": name, "namespace": namespace}, "spec": spec}


def fixture_trainjobs(namespace: str) -> list[dict]:
    """plain: uses no removed field; overrides: sets podTemplateOverrides; secret-env: an env
    var from a Secret (trainer.env[*].valueFrom); no-trainer: lacks spec.trainer, which the
    edited target makes required."""
    bare = trainjob("no-trainer", namespace)
    del bare["spec"]["trainer"]
    return [
        trainjob("plain", namespace),
        bare,
        trainjob("overrides", namespace, {"podTemplateOverrides": [{
            "targetJobs": [{"name": "node"}],
            "spec": {"nodeSelector": {"pool": "gpu"}},
        }]}),
        trainjob("secret-env", namespace, {"trainer": {"env": [
            {"name": "PLAIN", "value": "1"},
            {"name": "TOKEN", "valueFrom": {"secretKeyRef": {"name": "hf", "key": "token"}}},
        ]}}),
    ]


RUNTIME_CRDS = ("clustertrainingruntimes.trainer.kubeflow.org", "trainingruntimes.trainer.kubeflow.org")
REMOVED_RUNTIME = "spec.mlPolicy.numNodes"


def target_removing_runtime_field(crds: list[dict]) -> list[dict]:
    """Both runtime CRDs lose spec.mlPolicy.numNodes."""
    out = copy.deepcopy(crds)
    for crd in out:
        if crd["metadata"]["name"] in RUNTIME_CRDS:
            del _spec_schema(crd)["properties"]["mlPolicy"]["properties"]["numNodes"]
    return out


def runtime(kind: str, name: str, namespace: str | None, num_nodes: int | None) -> dict:
    spec: dict = {"template": {"spec": {"replicatedJobs": [{"name": "node", "template": {"spec": {"template": {
        "spec": {"containers": [{"name": "node", "image": "example.invalid/trainer:1"}]}}}}}]}}}
    if num_nodes is not None:
        spec["mlPolicy"] = {"numNodes": num_nodes}
    meta = {"name": name} if namespace is None else {"name": name, "namespace": namespace}
    return {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": kind, "metadata": meta, "spec": spec}
