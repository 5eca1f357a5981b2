"""Trainer's way through a blocked upgrade: what to do with each TrainJob that blocks it, and the
TrainJob converted to the target's API (`upgrade-check --write-migrated DIR`).

The mapping from the Trainer 2.1 API (odh-3.5.0) to the 2.2 API (2.2.0 up to opendatahub main)
was read off the two TrainJob CRD schemas and the controllers that apply them
(docs/upgrade.md#migrating-trainjobs gives the table and its sources):

- `spec.podTemplateOverrides[i]` becomes `spec.runtimePatches[]` entry `trainerctl.io/pod-template-override-i`:
  for each `targetJobs[].name`, a `trainingRuntimeSpec.template.spec.replicatedJobs[]` entry of that
  name whose `template.spec.template` holds the override's `metadata` (labels and annotations, the
  only fields 2.1 applied) and `spec`. Both releases apply the entries in order, each as a strategic
  merge patch of the runtime's template, so one entry per override keeps what "later entries win"
  meant. An override Kueue wrote at admission (labelled `kueue.x-k8s.io/podset`) is left out: Kueue
  writes its own patch when it admits the re-created job.
- `spec.labels` and `spec.annotations` (2.1 merged them over the JobSet's) become the
  `trainingRuntimeSpec.template.metadata` of entry `trainerctl.io/labels-and-annotations`.
- `spec.trainer.numProcPerNode` as a string: `auto` is dropped (2.2's default for Torch), a number
  in a string becomes that number, `cpu` and `gpu` are dropped with a note (2.2 has no equivalent).
- any other field the target no longer has is dropped, and named.

Each mapping applies only where the target's schema lacks the old field and has the new one;
the result is validated against the target's schema before it is offered.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

from trainerctl.cluster.client.views.field_types import Cursor, Unreadable
from trainerctl.cluster.client.views.meta import Condition, condition
from trainerctl.upgrade.crd_diff import FIELD_REMOVED, is_crd
from trainerctl.upgrade.report import Advice
from trainerctl.upgrade.schema.coerce import prune
from trainerctl.upgrade.schema.validate import validate

TRAINJOBS = "trainjobs.trainer.kubeflow.org"
KUEUE_PODSET = "kueue.x-k8s.io/podset"
OVERRIDE_MANAGER = "trainerctl.io/pod-template-override-{}"
LABELS_MANAGER = "trainerctl.io/labels-and-annotations"
_LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"


@dataclass
class Migrated:
    """One TrainJob converted to the target's API, with what the conversion could not keep."""

    namespace: str
    name: str
    state: str
    obj: dict
    notes: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # the target still rejects it: not offered


def state_of(obj: dict) -> str:
    """finished (Complete or Failed), suspended or running, from the TrainJob's spec and status."""
    try:
        top = Cursor.of("TrainJob", obj)
        conditions = Condition.read_all(top.mapping("status"))
        suspended = top.mapping("spec").boolean("suspend")
    except Unreadable:
        return "unknown"
    for kind in ("Complete", "Failed"):
        if condition(conditions, kind).status == "True":
            return f"finished ({kind})"
    return "suspended" if suspended else "running"


_ACTIONS = {
    "finished": "delete it before the upgrade; it has finished and nothing runs it again",
    "suspended": "delete it before the upgrade, and after it re-create it converted to the new API "
                 "(trainerctl upgrade-check --write-migrated DIR)",
    "running": "wait until it finishes (or suspend it), then delete it before the upgrade; re-create it "
               "converted after the upgrade if it should run again (--write-migrated DIR)",
    "unknown": "its status cannot be read: delete it before the upgrade, re-create it converted after",
}


def blocking_trainjobs(report: Any) -> set[tuple[str | None, str]]:
    """(namespace, name) of each TrainJob the report blocks on: a rejected value, or data in a
    removed field (that the install does not replace)."""
    out = {(r.namespace, r.name) for r in report.rejections if r.crd == TRAINJOBS}
    for f in report.blocking_findings:
        if f.crd == TRAINJOBS and f.kind == FIELD_REMOVED:
            out |= {(u.namespace, u.name) for u in report.usages_of(f) if not u.replaced}
    return out


def _trainjobs(live_resources: dict[str, list[dict]], wanted: set[tuple[str | None, str]]) -> list[dict]:
    seen, out = set(), []
    for obj in live_resources.get(TRAINJOBS, []):
        meta = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
        key = (meta.get("namespace"), meta.get("name"))
        if key in wanted and key not in seen:
            seen.add(key)
            out.append(obj)
    return sorted(out, key=lambda o: (o["metadata"].get("namespace") or "", o["metadata"].get("name") or ""))


def plan(report: Any, live_resources: dict[str, list[dict]],
         target_objects: list[dict]) -> tuple[list[Advice], list[Migrated]]:
    """For each TrainJob that blocks: what to do, and the TrainJob converted to the target's API."""
    migrated = {(m.namespace, m.name): m for m in migrate(report, live_resources, target_objects)}
    advice = []
    for obj in _trainjobs(live_resources, blocking_trainjobs(report)):
        meta = obj["metadata"]
        state = state_of(obj)
        ref = f"{meta.get('namespace')}/{meta.get('name')}" if meta.get("namespace") else str(meta.get("name"))
        converted = migrated.get((meta.get("namespace") or "", str(meta.get("name"))))
        notes = tuple(converted.notes + [f"still rejected: {p}" for p in converted.problems]) if converted else ()
        advice.append(Advice("TrainJob", ref, state, _ACTIONS[state.split(" ")[0]], notes))
    return advice, list(migrated.values())


def _schema(crd: dict, version: str) -> dict | None:
    for v in (crd.get("spec") or {}).get("versions") or []:
        if isinstance(v, dict) and v.get("name") == version and v.get("served"):
            return ((v.get("schema") or {}).get("openAPIV3Schema")) or {}
    return None


def _has(schema: dict | None, *path: str) -> bool:
    node = schema
    for key in path:
        props = (node or {}).get("properties")
        if not isinstance(props, dict) or not isinstance(props.get(key), dict):
            return False
        node = props[key]
    return True


def _integer_only(schema: dict | None, *path: str) -> bool:
    node = schema
    for key in path:
        node = ((node or {}).get("properties") or {}).get(key)
    return isinstance(node, dict) and node.get("type") == "integer" and not node.get("x-kubernetes-int-or-string")


def convert(obj: dict, schema: dict) -> tuple[dict, list[str]]:
    """The TrainJob as the target's API has it (not yet validated), and notes on what changed."""
    meta = obj.get("metadata") or {}
    annotations = {k: v for k, v in (meta.get("annotations") or {}).items() if k != _LAST_APPLIED}
    new_meta = {"name": meta.get("name"), "namespace": meta.get("namespace")}
    if meta.get("labels"):
        new_meta["labels"] = dict(meta["labels"])
    if annotations:
        new_meta["annotations"] = annotations
    spec = copy.deepcopy(obj.get("spec") or {})
    notes: list[str] = []
    patches: list[dict] = []
    patching = _has(schema, "spec", "runtimePatches")

    labels, annos = spec.get("labels"), spec.get("annotations")
    if patching and (labels or annos) and not _has(schema, "spec", "labels"):
        jobset_meta = {k: v for k, v in (("labels", labels), ("annotations", annos)) if v}
        patches.append({"manager": LABELS_MANAGER, "trainingRuntimeSpec": {"template": {"metadata": jobset_meta}}})
        notes.append(f"spec.labels/spec.annotations -> spec.runtimePatches[{LABELS_MANAGER}]"
                     ".trainingRuntimeSpec.template.metadata (the JobSet's labels and annotations)")
        spec.pop("labels", None)
        spec.pop("annotations", None)

    overrides = spec.get("podTemplateOverrides")
    if patching and isinstance(overrides, list) and not _has(schema, "spec", "podTemplateOverrides"):
        for i, override in enumerate(overrides):
            if not isinstance(override, dict):
                continue
            pod_meta = override.get("metadata") if isinstance(override.get("metadata"), dict) else {}
            if KUEUE_PODSET in (pod_meta.get("labels") or {}):
                notes.append(f"spec.podTemplateOverrides[{i}] was written by Kueue at admission: left out, "
                             "Kueue writes its own runtime patch when it admits the job again")
                continue
            template: dict = {}
            kept_meta = {k: pod_meta[k] for k in ("labels", "annotations") if pod_meta.get(k)}
            if kept_meta:
                template["metadata"] = kept_meta
            if isinstance(override.get("spec"), dict) and override["spec"]:
                template["spec"] = copy.deepcopy(override["spec"])
            jobs = [t.get("name") for t in override.get("targetJobs") or [] if isinstance(t, dict)]
            replicated = [{"name": name, "template": {"spec": {"template": copy.deepcopy(template)}}}
                          for name in jobs if isinstance(name, str)]
            manager = OVERRIDE_MANAGER.format(i)
            patches.append({"manager": manager,
                            "trainingRuntimeSpec": {"template": {"spec": {"replicatedJobs": replicated}}}})
            notes.append(f"spec.podTemplateOverrides[{i}] -> spec.runtimePatches[{manager}] "
                         f"(replicated jobs {', '.join(map(str, jobs)) or 'none'})")
        spec.pop("podTemplateOverrides", None)
    if patches:
        spec["runtimePatches"] = [*(spec.get("runtimePatches") or []), *patches]

    trainer = spec.get("trainer") if isinstance(spec.get("trainer"), dict) else None
    procs = (trainer or {}).get("numProcPerNode")
    if isinstance(procs, str) and _integer_only(schema, "spec", "trainer", "numProcPerNode"):
        if procs.isascii() and procs.isdigit():
            trainer["numProcPerNode"] = int(procs)
            notes.append(f"spec.trainer.numProcPerNode: {procs!r} -> {int(procs)}")
        else:
            del trainer["numProcPerNode"]
            why = "the new API's default for Torch" if procs == "auto" else \
                "the new API has no equivalent; the runtime's default (auto) applies"
            notes.append(f"spec.trainer.numProcPerNode: {procs!r} dropped ({why})")

    out = {"apiVersion": obj.get("apiVersion"), "kind": obj.get("kind"), "metadata": new_meta, "spec": spec}
    before = copy.deepcopy(out)
    prune(out, dict(schema, **{"x-kubernetes-embedded-resource": True}))
    notes += [f"{path}: dropped (the target's API has no such field)" for path in _dropped(before, out)]
    return out, notes


def _dropped(before: Any, after: Any, path: str = "") -> list[str]:
    if isinstance(before, dict) and isinstance(after, dict):
        out = []
        for key, value in before.items():
            where = f"{path}.{key}" if path else key
            if key not in after:
                out.append(where)
            else:
                out += _dropped(value, after[key], where)
        return out
    if isinstance(before, list) and isinstance(after, list):
        return [p for i, (b, a) in enumerate(zip(before, after)) for p in _dropped(b, a, f"{path}[{i}]")]
    return []


def migrate(report: Any, live_resources: dict[str, list[dict]], target_objects: list[dict]) -> list[Migrated]:
    """Each blocking TrainJob converted to the target's API (the version it was read at)."""
    target = next((c for c in target_objects if is_crd(c) and c["metadata"]["name"] == TRAINJOBS), None)
    if target is None:
        return []
    out = []
    for obj in _trainjobs(live_resources, blocking_trainjobs(report)):
        version = str(obj.get("apiVersion", "")).rpartition("/")[2]
        schema = _schema(target, version)
        meta = obj["metadata"]
        if schema is None:
            out.append(Migrated(meta.get("namespace") or "", str(meta.get("name")), state_of(obj), {}, [],
                                [f"the target does not serve {version}"]))
            continue
        converted, notes = convert(obj, schema)
        verdict = validate(converted, schema)
        out.append(Migrated(meta.get("namespace") or "", str(meta.get("name")), state_of(obj), converted, notes,
                            [f"{p.path}: {p.reason}" for p in verdict.problems]))
    return out
