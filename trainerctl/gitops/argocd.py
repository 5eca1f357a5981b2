"""Argo CD: one Application over the stage folders, every object in the sync wave of its stage.

Argo CD applies one wave at a time and starts the next only once every object of the wave is
healthy (Deployments rolled out, CRDs Established), so the waves give trainerctl's stage order.
What Trainer's objects need from it:
- `ServerSideApply=true`: the CRDs are over the 256 KiB annotation limit of client-side apply;
- the caBundles and the webhook cert Secret's data are the cert rotator's: they are not in the
  folder, `ignoreDifferences` keeps them out of the diff and `RespectIgnoreDifferences=true` out
  of the sync;
- CRDs, Namespaces and runtimes are never pruned (as by install); CRDs and Namespaces also stay
  when the Application is deleted (deleting the CRDs would delete every TrainJob);
- a retry policy: Argo CD waits for the controllers' Deployments but not for their webhook
  endpoints, so a runtime applied in the moment between the two is retried.
"""

from __future__ import annotations

from trainerctl.cluster.manager.stages import WEBHOOK_KINDS
from trainerctl.cluster.trainer.policy import NEVER_PRUNE, is_runtime
from trainerctl.gitops.layout import ENGINE_ANNOTATION, GitopsSettings, Provenance, Stage, api_group, with_annotations

API_VERSION = "argoproj.io/v1alpha1"
NAMESPACE = "argocd"
NAME = "trainer"
PROJECT = "default"
IN_CLUSTER = "https://kubernetes.default.svc"
SYNC_WAVE = "argocd.argoproj.io/sync-wave"
SYNC_OPTIONS = "argocd.argoproj.io/sync-options"
COMPARE_OPTIONS = "argocd.argoproj.io/compare-options"
# The ApplicationSet installs Trainer on every cluster whose Argo CD cluster Secret has this label.
FLEET_LABEL = ("trainerctl.io/trainer", "enabled")
APP_SYNC_OPTIONS = ("ServerSideApply=true", "RespectIgnoreDifferences=true", "SkipDryRunOnMissingResource=true")
RETRY = {"limit": 5, "backoff": {"duration": "10s", "factor": 2, "maxDuration": "3m"}}


def sync_options(obj: dict) -> str:
    group, kind = api_group(obj), obj.get("kind", "")
    if (group, kind) in NEVER_PRUNE:
        return "Prune=false,Delete=false"
    if is_runtime(group, kind):
        return "Prune=false"
    return ""


def annotate(obj: dict, stage: Stage) -> dict:
    """The object as the stage folder holds it for Argo CD: its wave, and what must not be pruned."""
    annotations = {SYNC_WAVE: str(stage.index)}
    if sync_options(obj):
        annotations[SYNC_OPTIONS] = sync_options(obj)
    return with_annotations(obj, annotations)


def ignore_differences(stages: list[Stage]) -> list[dict]:
    """The fields the cert rotators write, for the kinds the render has."""
    objects = [o for s in stages for o in s.objects]
    out: list[dict] = []
    for kind in WEBHOOK_KINDS:
        if any(o.get("kind") == kind and api_group(o) == "admissionregistration.k8s.io" for o in objects):
            out.append({"group": "admissionregistration.k8s.io", "kind": kind,
                        "jqPathExpressions": [".webhooks[]?.clientConfig.caBundle"]})
    if any(o.get("kind") == "CustomResourceDefinition" and
           ((o.get("spec") or {}).get("conversion") or {}).get("strategy") == "Webhook" for o in objects):
        out.append({"group": "apiextensions.k8s.io", "kind": "CustomResourceDefinition",
                    "jsonPointers": ["/spec/conversion/webhook/clientConfig/caBundle"]})
    for o in objects:  # a Secret rendered without data is one a controller fills in
        if o.get("kind") == "Secret" and api_group(o) == "" and not o.get("data") and not o.get("stringData"):
            meta = o.get("metadata") or {}
            out.append({"group": "", "kind": "Secret", "name": meta.get("name", ""),
                        "namespace": meta.get("namespace", ""), "jsonPointers": ["/data"]})
    return out


def _spec(stages: list[Stage], settings: GitopsSettings, namespace: str, server: str) -> dict:
    return {
        "project": PROJECT,
        "source": {"repoURL": settings.repo, "targetRevision": settings.branch, "path": settings.in_repo("stages")},
        "destination": {"server": server, "namespace": namespace},
        "syncPolicy": {"automated": {"prune": True, "selfHeal": True}, "syncOptions": list(APP_SYNC_OPTIONS),
                       "retry": RETRY},
        "ignoreDifferences": ignore_differences(stages),
    }


def engine_objects(stages: list[Stage], settings: GitopsSettings, provenance: Provenance,
                   namespace: str) -> list[dict]:
    """The Application for one cluster (the one Argo CD runs in)."""
    return [{"apiVersion": API_VERSION, "kind": "Application",
             "metadata": {"name": NAME, "namespace": NAMESPACE, "annotations": _annotations(provenance)},
             "spec": _spec(stages, settings, namespace, IN_CLUSTER)}]


def fleet_objects(stages: list[Stage], settings: GitopsSettings, provenance: Provenance,
                  namespace: str) -> list[dict]:
    """An ApplicationSet: the same Application for every cluster labelled FLEET_LABEL."""
    key, value = FLEET_LABEL
    template = {"metadata": {"name": NAME + "-{{.name}}", "annotations": _annotations(provenance)},
                "spec": _spec(stages, settings, namespace, "{{.server}}")}
    return [{"apiVersion": API_VERSION, "kind": "ApplicationSet",
             "metadata": {"name": NAME, "namespace": NAMESPACE, "annotations": _annotations(provenance)},
             "spec": {"goTemplate": True, "goTemplateOptions": ["missingkey=error"],
                      "generators": [{"clusters": {"selector": {"matchLabels": {key: value}}}}],
                      "template": template}}]


def _annotations(provenance: Provenance) -> dict[str, str]:
    # Server-side diff: fields other managers own (the rotators') never show as drift.
    return {ENGINE_ANNOTATION: "argocd", COMPARE_OPTIONS: "ServerSideDiff=true", **provenance.annotations()}
