"""The Go operator's Trainer CR conditions, computed from what `status` reads.

The operator's CR reports (odh-platform-utilities' condition manager): `Ready`, derived from its
dependents (the first unhealthy one, by type name, gives its status, reason and message; we put
"not installed at all" first);
`ProvisioningSucceeded`; `DeploymentsAvailable` (reason DeploymentsNotReady, "N/M deployments
ready"); and the dependency check as `Degraded` with the reasons in dependencies.py. We report the
same, plus that check as a positive `DependenciesAvailable` condition a pipeline can gate on next
to the others (Degraded stays for pipelines written against the operator).

Pure functions of their inputs: status.py does the reading.
"""

from __future__ import annotations

from trainerctl.cluster.trainer.dependencies import DependencyState

READY = "Ready"
PROVISIONED = "ProvisioningSucceeded"
DEPLOYMENTS = "DeploymentsAvailable"
DEPENDENCIES = "DependenciesAvailable"
DEGRADED = "Degraded"
# What Ready is derived from, in the aggregator's order (type names, sorted).
DEPENDENTS = (DEPENDENCIES, DEPLOYMENTS, PROVISIONED)
NOT_INSTALLED = "NotInstalled"  # when nothing is installed, that is why Trainer is not Ready
_EXAMPLES = 3


def condition(ctype: str, ok: bool, reason: str, message: str) -> dict:
    return {"type": ctype, "status": "True" if ok else "False", "reason": reason, "message": message}


def _names(objects: list[dict], state: str) -> list[str]:
    out = []
    for o in objects:
        if o["state"] == state:
            out.append(f"{o['kind']} {o['namespace']}/{o['name']}" if o["namespace"] else f"{o['kind']} {o['name']}")
    return out


def _listed(names: list[str]) -> str:
    more = f" and {len(names) - _EXAMPLES} more" if len(names) > _EXAMPLES else ""
    return ", ".join(names[:_EXAMPLES]) + more


def provisioning(installed: bool, complete: bool, namespace: str, objects: list[dict],
                 operator_managed: bool = False) -> dict:
    if not installed:
        hint = ("the Go trainer-operator manages Trainer here (its Trainer default-trainer exists): hand over with "
                "trainerctl install --take-over-operator" if operator_managed else "run trainerctl install")
        return condition(PROVISIONED, False, NOT_INSTALLED, f"no trainerctl inventory in namespace {namespace}: {hint}")
    if not complete:
        return condition(PROVISIONED, False, "InstallIncomplete",
                         "the last install did not finish: run trainerctl install again")
    for state, reason in (("missing", "ObjectsMissing"), ("drifted", "ObjectsDrifted"), ("error", "StatusCheckFailed")):
        names = _names(objects, state)
        if names:
            return condition(PROVISIONED, False, reason, f"{len(names)} object(s) {state}: {_listed(names)}")
    return condition(PROVISIONED, True, "Provisioned", f"{len(objects)} object(s) as installed")


def deployments(items: list[dict]) -> dict:
    ready = [d for d in items if d["available"]]
    message = f"{len(ready)}/{len(items)} deployments ready"
    if not items or len(ready) != len(items):
        waiting = [f"{d['namespace']}/{d['name']}" + (f" ({d['reason']})" if d.get("reason") else "")
                   for d in items if not d["available"]]
        return condition(DEPLOYMENTS, False, "DeploymentsNotReady",
                         message + (f": {_listed(waiting)}" if waiting else ""))
    return condition(DEPLOYMENTS, True, "DeploymentsAvailable", message)


def conditions(deps: DependencyState, provisioned: dict, deployed: dict) -> list[dict]:
    """Ready first, then its dependents, then Degraded (the operator's form of the dependency check)."""
    dependents = {DEPENDENCIES: condition(DEPENDENCIES, deps.ok, deps.reason, deps.message),
                  DEPLOYMENTS: deployed, PROVISIONED: provisioned}
    order = DEPENDENTS if provisioned["reason"] != NOT_INSTALLED else (PROVISIONED, *DEPENDENTS)  # nothing to judge
    first_bad = next((dependents[t] for t in order if dependents[t]["status"] != "True"), None)
    ready = (condition(READY, True, "Ready", "Trainer is installed, available and its dependencies are met")
             if first_bad is None else condition(READY, False, first_bad["reason"], first_bad["message"]))
    degraded = condition(DEGRADED, not deps.ok, deps.reason, deps.message)
    return [ready, *(dependents[t] for t in DEPENDENTS), degraded]


def is_ready(conds: list[dict]) -> bool:
    return any(c["type"] == READY and c["status"] == "True" for c in conds)
