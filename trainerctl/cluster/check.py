"""`check`: every check install makes before its first write, all of them listed, nothing applied.

Where install stops at the first failure, check goes on so one run shows everything to fix: the
API server and its version against the target release's floor, the rendered kinds, JobSet and its
version, the upgrade path, the Go operator, every permission the install lacks, the CRD upgrade
check, the Istio hazard (a warning), and with --images whether every image exists at its
registry. A read the user may not make is a finding, not a crash.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Callable

import yaml

from trainerctl.cluster.manager import inventory as inv_mod
from trainerctl.cluster.client.client import ApiError, Cluster
from trainerctl.cluster.client.discovery import Discovery
from trainerctl.cluster.manager.plan import ensure_namespace, namespace_labels, plan, read_live
from trainerctl.cluster.trainer import go_operator, preflight
from trainerctl.cluster.trainer.policy import STAGES
from trainerctl.cluster.trainer.preflight import FAIL, OK, WARN, Finding
from trainerctl.cluster.trainer.verify import pods
from trainerctl.cluster.trainer.verify.owned import LABEL
from trainerctl.cluster.trainer.verify.runtimes import rendered
from trainerctl.errors import PreflightError, TrainerctlError
from trainerctl.owner_label import DEFAULT_OWNER_LABEL
from trainerctl.settings import FIELD_MANAGER


@dataclass
class CheckReport:
    namespace: str
    findings: list[Finding] = field(default_factory=list)

    @property
    def failed(self) -> list[Finding]:
        return [f for f in self.findings if f.failed]

    def to_dict(self) -> dict:
        return {"namespace": self.namespace, "ok": not self.failed,
                "findings": [f.to_dict() for f in self.findings]}

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2) + "\n"

    def to_yaml(self) -> str:
        return yaml.safe_dump(self.to_dict(), sort_keys=False)

    def text(self) -> str:
        lines = []
        for f in self.findings:
            lines.append(f"{f.status.upper() if f.status != OK else 'ok':<5} {f.check}: {f.message}")
            lines.extend(f"        {d}" for d in f.details)
        warned = sum(1 for f in self.findings if f.status == WARN)
        lines.append(f"check: {len(self.failed)} failed, {warned} warning(s), "
                     f"{len(self.findings) - len(self.failed) - warned} ok")
        return "\n".join(lines) + "\n"


def _read(findings: list[Finding], what: str, read: Callable[[], Any]) -> Any:
    try:
        return read()
    except (ApiError, TrainerctlError) as exc:
        findings.append(Finding(what, FAIL, f"cannot read {what}: {exc}"))
        return None


def check(objects: list[dict], *, cluster: Cluster, namespace: str, source: dict,
          owner_label: str = DEFAULT_OWNER_LABEL, field_manager: str = FIELD_MANAGER, prune: bool = True,
          upgrade_guard: Callable[..., Any] | None = None,
          image_check: Callable[[list[dict]], list[str]] | None = None,
          job_namespace: str | None = None) -> CheckReport:
    """`image_check` (check --images): asks the registries and returns a line per image that is
    missing or cannot be checked. `job_namespace` (check --job-namespace): whether the namespace
    admits the pods of each rendered runtime (verify's namespace tier)."""
    report = CheckReport(namespace)
    found = report.findings
    if image_check is not None:  # first: it needs no cluster, so no cluster finding below can hide it
        problems = image_check(objects)
        found.append(Finding("images", FAIL, f"{len(problems)} image(s) missing or not checkable at their registries",
                             problems) if problems else Finding("images", OK, "every image exists at its registry"))
    try:
        version = preflight.server_version(cluster)
    except PreflightError as exc:  # nothing else can be asked
        found.append(Finding("api-server", FAIL, str(exc)))
        return report
    found.append(Finding("api-server", OK, f"{cluster.server} answers (context {cluster.context})"))
    target = source.get("trainer_version")
    found.append(preflight.kubernetes(version, target))
    objects = ensure_namespace(objects, namespace, owner_label)
    discovery = Discovery(cluster)
    discovery.refresh()
    discovery.add_rendered_crds(objects)
    kinds = preflight.kinds(discovery, objects)
    found.append(kinds)
    if kinds.failed:
        return report
    planned = plan(objects, discovery, namespace, field_manager, STAGES)
    openshift = discovery.has_group(preflight.OPENSHIFT_GROUP)
    deps_finding, deps = preflight.dependencies_found(cluster, discovery, objects, openshift)
    found.extend([deps_finding, preflight.jobset_version(cluster, deps, target)])
    inventory = _read(found, "the inventory", lambda: inv_mod.read(cluster, namespace))
    installed = inventory.source.get("trainer_version") if inventory else None
    found.append(preflight.upgrade_path(installed, target))
    operator = go_operator.OperatorState(cr=_read(found, "the Go operator's CR", lambda: go_operator.read_cr(cluster)),
                                         deployments=go_operator.find_deployments(cluster))
    found.append(Finding("go-operator", FAIL, operator.refusal()) if operator.can_write
                 else Finding("go-operator", OK, "the Go trainer-operator is not in charge here"))
    needs = preflight.access_needs(planned, namespace)
    try:
        read_live(cluster, planned, owner_label)
    except ApiError:
        pass  # unreadable: every object counts as missing below, so create is asked too
    found.append(preflight.permissions(cluster, needs + preflight.change_needs(planned, namespace, inventory, prune)))
    found.append(preflight.istio(namespace, namespace_labels(planned, namespace), objects))
    if job_namespace:
        found.extend(_namespace_admission(cluster, objects, job_namespace))
    if upgrade_guard is not None and any(p.ref.kind == "CustomResourceDefinition" and p.live for p in planned):
        try:
            upgrade_guard(cluster, objects, owner_label=owner_label, allow_breaking=False)
            found.append(Finding("upgrade", OK, "upgrade-check finds nothing blocking"))
        except (ApiError, TrainerctlError) as exc:
            found.append(Finding("upgrade", FAIL, str(exc)))
    return report


def _namespace_admission(cluster: Cluster, objects: list[dict], namespace: str) -> list[Finding]:
    results = pods.check(cluster, rendered(objects, namespace), namespace, {LABEL: "check"})
    return [Finding("namespace-admission", OK if r.status == OK else FAIL, f"{r.check}: {r.message}", r.details)
            for r in results]
