"""Flux: one `Kustomization` (kustomize.toolkit.fluxcd.io/v1) per stage folder.

Each depends on the one before it, so it applies a revision only after the previous stage is
Ready at that same revision (kustomize-controller checks both): stages go out in trainerctl's
order on install and on every upgrade. A stage is Ready once its health checks pass, and they
are where trainerctl waits: the CRDs Established, then, before anything the admission webhooks
judge, every Deployment rolled out (kstatus: all replicas updated and available, none of the old
spec left) and an endpoint ready behind every webhook Service.

Pruning: `prune: true`, except for what trainerctl never prunes (CRDs, whose deletion deletes every
TrainJob; Namespaces) and the runtimes. Flux cannot know which runtimes an unfinished TrainJob
still needs, so a runtime dropped from the render stays on the cluster (`prune: disabled`) and
`trainerctl diff -f DIR` lists the ones no unfinished TrainJob uses any more.
"""

from __future__ import annotations

from trainerctl.cluster.manager.plan import webhook_services
from trainerctl.cluster.manager.stages import WAIT_CONTROLLERS, WAIT_CRDS
from trainerctl.cluster.trainer.policy import NEVER_PRUNE, RECREATE_KINDS, STAGES, is_runtime
from trainerctl.gitops.layout import ENGINE_ANNOTATION, GitopsSettings, Provenance, Stage, api_group, with_annotations

API_VERSION = "kustomize.toolkit.fluxcd.io/v1"
SOURCE_API_VERSION = "source.toolkit.fluxcd.io/v1"
NAMESPACE = "flux-system"  # where `flux bootstrap` puts its objects
NAME = "trainer"
BOOTSTRAP_SOURCE = "flux-system"  # the GitRepository `flux bootstrap` creates
PRUNE = "kustomize.toolkit.fluxcd.io/prune"
# Drift is corrected every 10 minutes; a failed apply is retried after one. A stage's timeout
# bounds its apply and health checks: trainerctl's own default --timeout.
INTERVAL, RETRY_INTERVAL, TIMEOUT = "10m", "1m", "5m"
SOURCE_INTERVAL = "1m"
# kstatus knows no Endpoints: ready when some subset has a ready address. Until the endpoints
# controller has written any subset the expression cannot be evaluated and the check keeps waiting.
ENDPOINTS_READY = "subsets.exists(s, has(s.addresses) && size(s.addresses) > 0)"


def never_pruned(obj: dict) -> bool:
    group, kind = api_group(obj), obj.get("kind", "")
    return (group, kind) in NEVER_PRUNE or is_runtime(group, kind)


def annotate(obj: dict, stage: Stage) -> dict:
    """The object as the stage folder holds it for Flux."""
    return with_annotations(obj, {PRUNE: "disabled"} if never_pruned(obj) else {})


def kustomization_name(stage: Stage) -> str:
    return f"{NAME}-{stage.folder}"


def _ref(obj: dict) -> dict:
    meta = obj.get("metadata") or {}
    ref = {"apiVersion": obj["apiVersion"], "kind": obj["kind"], "name": meta.get("name", "")}
    if meta.get("namespace"):
        ref["namespace"] = meta["namespace"]
    return ref


def health_checks(stages: list[Stage]) -> dict[str, list[dict]]:
    """Stage folder -> what trainerctl waits for after that stage (StageSpec.wait), as Flux
    health checks. The controllers' wait covers every rendered Deployment and webhook Service;
    when its stage has nothing to apply it goes with the stage written before it."""
    everything = [o for s in stages for o in s.objects]
    out: dict[str, list[dict]] = {}
    for stage in stages:
        if stage.spec.wait == WAIT_CRDS:
            out[stage.folder] = [_ref(o) for o in stage.objects if o.get("kind") == "CustomResourceDefinition"]
    controllers = [_ref(o) for o in everything if o.get("kind") == "Deployment" and api_group(o) == "apps"]
    controllers += [{"apiVersion": "v1", "kind": "Endpoints", "name": name, "namespace": ns}
                    for ns, name, _port in webhook_services(everything)]
    for index, spec in enumerate(STAGES):
        holder = next((s for s in reversed(stages) if s.index <= index), None)
        if spec.wait == WAIT_CONTROLLERS and controllers and holder is not None:
            out.setdefault(holder.folder, []).extend(controllers)
    return {k: v for k, v in out.items() if v}


def engine_objects(stages: list[Stage], settings: GitopsSettings, provenance: Provenance,
                   owner_label: tuple[str, str]) -> list[dict]:
    """The GitRepository (with --gitops-repo) and one Kustomization per stage, in stage order."""
    annotations = {ENGINE_ANNOTATION: "flux", **provenance.annotations(images=False)}
    out: list[dict] = []
    source = BOOTSTRAP_SOURCE
    if settings.repo:
        source = NAME
        spec: dict = {"interval": SOURCE_INTERVAL, "url": settings.repo, "ref": {"branch": settings.branch}}
        if settings.path:  # only this folder goes into the artifact
            spec["ignore"] = f"/*\n!/{settings.path}/\n"
        out.append({"apiVersion": SOURCE_API_VERSION, "kind": "GitRepository",
                    "metadata": {"name": NAME, "namespace": NAMESPACE,
                                 "annotations": {ENGINE_ANNOTATION: "flux", **provenance.annotations()}},
                    "spec": spec})
    checks = health_checks(stages)
    key, value = owner_label
    previous: Stage | None = None
    for stage in stages:
        spec = {
            "interval": INTERVAL,
            "retryInterval": RETRY_INTERVAL,
            "timeout": TIMEOUT,
            "sourceRef": {"kind": "GitRepository", "name": source, "namespace": NAMESPACE},
            "path": "./" + settings.in_repo("stages", stage.folder),
            "prune": True,
            "wait": False,
            "commonMetadata": {"labels": {key: value}},
        }
        if previous is not None:
            spec["dependsOn"] = [{"name": kustomization_name(previous)}]
        if checks.get(stage.folder):
            spec["healthChecks"] = checks[stage.folder]
            if any(c["kind"] == "Endpoints" for c in checks[stage.folder]):
                spec["healthCheckExprs"] = [{"apiVersion": "v1", "kind": "Endpoints", "current": ENDPOINTS_READY}]
        if any((api_group(o), o.get("kind")) in RECREATE_KINDS for o in stage.objects):
            spec["force"] = True  # recreate on an immutable-field change, as install does for these kinds
        out.append({"apiVersion": API_VERSION, "kind": "Kustomization",
                    "metadata": {"name": kustomization_name(stage), "namespace": NAMESPACE,
                                 "annotations": annotations},
                    "spec": spec})
        previous = stage
    return out
