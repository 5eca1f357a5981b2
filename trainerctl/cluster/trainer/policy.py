"""How Trainer is installed on top of the generic engine: the stage order, what is never pruned or
deleted, what may be recreated, and the finalizer only old Trainer controllers remove."""

from __future__ import annotations

from trainerctl.cluster.operations.leftovers import KUBECTL_MANAGERS
from trainerctl.cluster.manager.stages import WAIT_CONTROLLERS, WAIT_CRDS, WEBHOOK_KINDS, StagePlan, StageSpec
from trainerctl.cluster.trainer.go_operator import FIELD_MANAGERS as OPERATOR_FIELD_MANAGERS

GROUP = "trainer.kubeflow.org"
RUNTIME_KINDS = ("ClusterTrainingRuntime", "TrainingRuntime")
TRAINJOB = (GROUP, "TrainJob")

# Like Helm's install order: CRDs (Established) before their objects, RBAC before the
# controller, the controller and its webhooks before what they admit. The runtimes go last: the
# validating webhook judges them (failurePolicy Fail), so it must answer first.
STAGES = StagePlan(
    (
        StageSpec("crds", frozenset({"CustomResourceDefinition"}), wait=WAIT_CRDS, title="CRDs"),
        StageSpec("namespaces", frozenset({"Namespace"}), title="namespace"),
        StageSpec("rbac", frozenset({"ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"}), title="RBAC"),
        StageSpec("config"),  # ServiceAccounts, ConfigMaps, Secrets, Services, the rest
        StageSpec("workloads", frozenset({"Deployment", "StatefulSet", "DaemonSet"}), title="controllers"),
        StageSpec("webhooks", frozenset(WEBHOOK_KINDS), wait=WAIT_CONTROLLERS),
        StageSpec("admitted", title="runtimes"),  # runtimes and whatever else our webhooks intercept
    ),
    default="config",
    admitted="admitted",
    # Every Trainer release validates its runtimes with a webhook; they wait for it even when the
    # render has no webhook configuration of its own (`-c runtimes` onto an installed Trainer).
    always_admitted=frozenset({(GROUP, "clustertrainingruntimes"), (GROUP, "trainingruntimes")}),
)

# Never pruned: deleting a CRD deletes every custom resource of it (users' TrainJobs); the
# controller's Leases; namespaces (they hold more than us); users' TrainJobs.
NEVER_PRUNE = frozenset({("apiextensions.k8s.io", "CustomResourceDefinition"), ("coordination.k8s.io", "Lease"),
                         ("", "Namespace"), TRAINJOB})
# Never deleted by uninstall (CRDs only with --delete-crds): the same, and Events.
KEEP_ON_UNINSTALL = NEVER_PRUNE | {("", "Event"), ("events.k8s.io", "Event")}
# Deleted and recreated when the server says a field is immutable: the controller Deployment
# (its selector changes between releases) and our runtimes (CEL immutability rules).
RECREATE_KINDS = frozenset({("apps", "Deployment"), (GROUP, "ClusterTrainingRuntime")})
# Trainer 2.0-2.2 put this on runtimes a TrainJob uses and only those controllers remove it;
# 2.3 never does. Whatever we keep, delete or hand over must not be left holding it.
LEGACY_FINALIZER = "trainer.kubeflow.org/resource-in-use"
# Field managers whose fields an install takes over: the Go operator's, and `kubectl apply`'s
# (client-side, whose last-applied annotation then becomes ours and is dropped by our apply, and
# server-side, the documented `kubectl apply --server-side -k .../overlays/manager` install).
# Other kubectl commands use managers of their own (kubectl-edit, kubectl-scale, ...) and stay.
LEGACY_MANAGERS = (*OPERATOR_FIELD_MANAGERS, *KUBECTL_MANAGERS)


def is_runtime(group: str, kind: str) -> bool:
    return group == GROUP and kind in RUNTIME_KINDS
