"""IAMPolicyGenerator: a GKE Workload Identity ServiceAccount from a `generators:` config."""

from __future__ import annotations

from trainerctl.kustomize import schema
from trainerctl.kustomize.errors import KustomizeError
from trainerctl.kustomize.resource import Resource

KIND = "IAMPolicyGenerator"
CONFIG = schema.Struct(KIND, {
    "cloud": schema.STR,
    "kubernetesService": schema.Struct("KubernetesService", {"name": schema.STR,
                                                             "namespace": schema.STR}),
    "serviceAccount": schema.Struct("ServiceAccount", {"name": schema.STR,
                                                       "projectId": schema.STR}),
})


def configure(cfg: dict, ctx):
    def generate():
        if cfg.get("cloud") != "gke":
            raise KustomizeError(f"{ctx.where}: cloud provider {cfg.get('cloud', '')} not "
                                 f"supported yet")
        svc, sa = cfg.get("kubernetesService") or {}, cfg.get("serviceAccount") or {}
        md = {
            "annotations": {"iam.gke.io/gcp-service-account":
                            f"{sa.get('name', '')}@{sa.get('projectId', '')}.iam.gserviceaccount.com"},
            "name": svc.get("name", ""),
        }
        if svc.get("namespace"):
            md["namespace"] = svc["namespace"]
        return [Resource({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": md},
                         ctx.where)]

    return generate
