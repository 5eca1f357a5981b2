"""The Trainer 2.1 -> 2.2 upgrade on the real controllers: blocked where it breaks, the ground truth
of why, and the way through.

Trainer v2.2.0 replaces `spec.podTemplateOverrides` with `spec.runtimePatches` and narrows
`spec.trainer.numProcPerNode` from int-or-string to int32. A TrainJob stored with
`numProcPerNode: auto` stays in etcd, and the v2.2.0 controller cannot decode it: its TrainJob list
fails and it never becomes ready. The story, on the e2e cluster (the process kubelet runs the real
v2.1.0 and v2.2.0 controllers and their JobSet v0.10.1 and v0.11.0):

1. v2.1.0 is installed; three TrainJobs: `numProcPerNode: auto`, `podTemplateOverrides`, a clean one.
2. `upgrade-check` to v2.2.0 exits 1 naming exactly the first two, with the field, the value and
   what to do; `install` refuses with exit 3 and changes nothing.
3. With `--allow-breaking` the real v2.2.0 controller fails as predicted, and `status` and `verify`
   name the TrainJob and the field; `rollback` brings v2.1.0 back.
4. The two are re-created from `upgrade-check --write-migrated`, and the upgrade passes; `verify`
   passes.
5. `rollback` to v2.1.0 is refused by the reverse check while a TrainJob uses `runtimePatches`.
"""

from __future__ import annotations

import json

import yaml

from tests.support import e2e as h
from tests.support.e2e import JOBS_NS, KF_NS, TRAINER

TRAINJOBS_CRD = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/trainjobs.trainer.kubeflow.org"
AUTO, OVERRIDES, CLEAN = "tj-auto", "tj-overrides", "tj-clean"


def _jobs() -> dict[str, dict]:
    auto = h.trainjob(AUTO, JOBS_NS, num_nodes=1, cpu=None, suspend=True)
    auto["spec"]["trainer"]["numProcPerNode"] = "auto"
    overrides = h.trainjob(OVERRIDES, JOBS_NS, num_nodes=1, cpu=None, suspend=True)
    overrides["spec"]["podTemplateOverrides"] = [{"targetJobs": [{"name": "node"}],
                                                  "spec": {"nodeSelector": {"e2e.trainerctl.io/pool": "a"}}}]
    return {AUTO: auto, OVERRIDES: overrides, CLEAN: h.trainjob(CLEAN, JOBS_NS, num_nodes=1, cpu=None, suspend=True)}


def _target(tctl, version: str) -> list[str]:
    return [*tctl.source_args(version), "--timeout", str(h.INSTALL_TIMEOUT)]


def _trainjob(name: str) -> str:
    return f"{TRAINER}/namespaces/{JOBS_NS}/trainjobs/{name}"


def test_the_2_1_to_2_2_upgrade_is_blocked_where_it_breaks_and_passes_once_migrated(clean_slate, tctl, api, tmp_path):
    # 1. Trainer v2.1.0, and three TrainJobs its API takes.
    tctl.install("v2.1.0")
    h.wait_until(lambda: h.controller_runs(api, "v2.1.0"), 120, "the v2.1.0 controller")
    h.create_namespace(api, JOBS_NS)
    for body in _jobs().values():
        h.create_trainjob(api, body)

    # 2. The check names exactly the two, with field, value and what to do; install refuses.
    check = tctl.run("upgrade-check", *tctl.source_args("v2.2.0"), expect=1)
    report = check.stdout
    assert f"TrainJob {JOBS_NS}/{AUTO}: spec.trainer.numProcPerNode: 'auto'" in report, report
    assert "spec.podTemplateOverrides" in report and f"TrainJob {JOBS_NS}/{OVERRIDES}" in report, report
    assert CLEAN not in report, report
    advice = json.loads(tctl.run("upgrade-check", *tctl.source_args("v2.2.0"), "-o", "json", expect=1).stdout)["advice"]
    assert sorted(a["object"] for a in advice) == [f"{JOBS_NS}/{AUTO}", f"{JOBS_NS}/{OVERRIDES}"], advice
    assert all(a["state"] == "suspended" and a["action"] for a in advice), advice  # re-create it converted
    crd_before = api.request("GET", TRAINJOBS_CRD)["metadata"]["resourceVersion"]
    refused = tctl.run("install", *_target(tctl, "v2.2.0"), expect=3)
    last = refused.stderr.splitlines()[-1]  # the report, then the one error line
    assert last.startswith("error: upgrade blocked by 2 change(s), first: TrainJob "), refused.stderr
    assert f"{JOBS_NS}/{AUTO}: spec.trainer.numProcPerNode: 'auto'" in last, last
    assert api.request("GET", TRAINJOBS_CRD)["metadata"]["resourceVersion"] == crd_before  # nothing applied
    assert h.controller_runs(api, "v2.1.0")

    # 3. The ground truth: through the guard, the real v2.2.0 controller cannot list TrainJobs and
    # never becomes ready; install, status and verify name the TrainJob and the field.
    broken = tctl.run("install", *_target(tctl, "v2.2.0"), "--allow-breaking", expect=None)
    assert broken.returncode not in (0, 3), broken.stderr
    named = f"{JOBS_NS}/{AUTO}"
    assert named in broken.stderr and "numProcPerNode" in broken.stderr, broken.stderr[-3000:]
    status = tctl.run("status", "-n", KF_NS, expect=None)
    assert status.returncode != 0 and named in status.stdout + status.stderr, status.stdout + status.stderr
    assert "numProcPerNode" in status.stdout + status.stderr
    verify = tctl.run("verify", "-n", KF_NS, "--timeout", "60", expect=None)
    assert verify.returncode != 0, verify.stdout
    assert named in verify.stdout + verify.stderr and "numProcPerNode" in verify.stdout + verify.stderr, \
        verify.stdout + verify.stderr
    # The failed install recorded no revision: the way back is revision 1, named.
    back = tctl.run("rollback", "1", "-n", KF_NS, "--source", str(tctl.source("v2.1.0")), *sum(
        (["--remote-mirror", m] for m in tctl.mirrors), []), "--timeout", str(h.INSTALL_TIMEOUT), "--no-verify")
    assert "history: revision 2 recorded" in back.stdout, back.stdout
    h.wait_until(lambda: h.controller_runs(api, "v2.1.0"), 120, "the v2.1.0 controller again")

    # 4. The way through: the two re-created converted, after the upgrade.
    out = tmp_path / "migrated"
    tctl.run("upgrade-check", *tctl.source_args("v2.2.0"), "--write-migrated", str(out), expect=1)
    written = sorted(p.name for p in (out / JOBS_NS).iterdir())
    assert written == [f"{AUTO}.yaml", f"{OVERRIDES}.yaml"], written
    migrated = {p.stem: yaml.safe_load(p.read_text()) for p in (out / JOBS_NS).iterdir()}
    assert "numProcPerNode" not in migrated[AUTO]["spec"]["trainer"]
    assert "podTemplateOverrides" not in migrated[OVERRIDES]["spec"] and migrated[OVERRIDES]["spec"]["runtimePatches"]
    for name in (AUTO, OVERRIDES):
        api.request("DELETE", _trainjob(name))
        h.wait_until(lambda name=name: api.get_or_none(_trainjob(name)) is None, 120, f"TrainJob {name} deleted")
    tctl.install("v2.2.0")
    h.wait_until(lambda: h.controller_runs(api, "v2.2.0"), 120, "the v2.2.0 controller")
    for name, body in migrated.items():
        h.create_trainjob(api, body)
        assert api.get_or_none(_trainjob(name)) is not None
    tctl.run("verify", "-n", KF_NS, "--timeout", "120")

    # 5. Back to v2.1.0 would prune the runtimePatches the converted TrainJob now holds: refused.
    refused = tctl.run("rollback", "1", "-n", KF_NS, "--source", str(tctl.source("v2.1.0")), *sum(
        (["--remote-mirror", m] for m in tctl.mirrors), []), "--timeout", str(h.INSTALL_TIMEOUT), expect=3)
    assert OVERRIDES in refused.stderr and "runtimePatches" in refused.stderr, refused.stderr
    assert h.controller_runs(api, "v2.2.0")
