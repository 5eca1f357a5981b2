"""Inputs shared by the upgrade tests: the odh-3.4.0 CRDs, hand-edited targets, TrainJob fixtures."""

from __future__ import annotations

import copy
import re
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


def write_target(tmp_path: Path, crds: list[dict], name: str = "target.yaml") -> str:
    """The target CRDs as a rendered file, for `upgrade-check -f`."""
    path = tmp_path / name
    path.write_text(yaml.safe_dump_all(crds, sort_keys=False))
    return str(path)


def run_cli(capsys, *args) -> tuple[int, str, str]:
    """trainerctl in this process: (exit code, stdout, stderr)."""
    from trainerctl.cli import main

    capsys.readouterr()
    code = main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


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


# -- an independent reading of two CRD schemas (what the real-CRD tests compare against) ----
# --- the independent oracle ------------------------------------------------------------------

def flatten(node, pointer=()):
    """Every (key path, value) pair of a YAML document, lists indexed by position."""
    yield pointer, node
    if isinstance(node, dict):
        for k, v in node.items():
            yield from flatten(v, pointer + (k,))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from flatten(v, pointer + (i,))


def field_path(pointer: tuple) -> str | None:
    """Key path below openAPIV3Schema -> field path, or None when the path is not a schema node
    reached only through properties/<name>, items and additionalProperties."""
    out, i = "", 0
    while i < len(pointer):
        step = pointer[i]
        if step == "properties" and i + 1 < len(pointer):
            out = f"{out}.{pointer[i + 1]}" if out else str(pointer[i + 1])
            i += 2
        elif step == "items":
            out += "[*]"
            i += 1
        elif step == "additionalProperties":
            out = f"{out}.*" if out else "*"
            i += 1
        else:
            return None
    return out


def schema_of(crd: dict, version: str) -> dict:
    v = next(v for v in crd["spec"]["versions"] if v["name"] == version)
    return v["schema"]["openAPIV3Schema"]


def oracle(live: dict, target: dict, version: str):
    def index(schema):
        fields, rules, required = set(), set(), set()
        for pointer, value in flatten(schema):
            if pointer and pointer[-1] == "x-kubernetes-validations":
                path = field_path(pointer[:-1])
                if path is not None:
                    rules |= {(path or "<root>", r["rule"]) for r in value}
            elif len(pointer) >= 1 and pointer[-1] == "required" and isinstance(value, list):
                path = field_path(pointer[:-1])
                if path is not None:
                    required |= {f"{path}.{n}" if path else n for n in value}
            elif isinstance(value, dict):
                path = field_path(pointer)
                if path:
                    fields.add(path)
        return fields, rules, required

    lf, lr, lq = index(schema_of(live, version))
    tf, tr, tq = index(schema_of(target, version))
    gone = lf - tf
    # report only the top of each removed subtree
    removed = {p for p in gone if not any(p.startswith(q + ".") or p.startswith(q + "[") for q in gone if q != p)}
    # a newly required field under a parent that did not exist before binds nobody
    newly_required = {p for p in tq - lq if re.sub(r"(\.[^.\[]+|\[\*\])$", "", p) in lf | {""}}
    # rules of a removed field go with it (the field-removed finding covers them)
    dropped_rules = {(p, r) for p, r in lr - tr if p not in gone}
    return removed, tr - lr, dropped_rules, newly_required
