"""The install history and `rollback` on the e2e cluster, judged by the real controllers.

v2.2.0 is installed, a TrainJob starts, v2.3.0 is installed over it: `history` shows both;
`rollback` (naming the checkout the revision was installed from, which the record alone may not)
brings back the v2.2.0 controller (the process kubelet runs the v2.2.0 binary) and its runtimes,
the TrainJob is still there, and `status` and `history` show the rollback as a new revision.
Then a CRD is given a version that neither older revision serves, an object is stored at it, and
the rollback is refused naming the CRD, the version and the objects; a revision that is not there
is one line.
"""

from __future__ import annotations

import copy
import json

from tests.support import e2e as h
from tests.support.e2e import JOBS_NS, KF_NS, TRAINER
from tests.testenv.api import ApiError
from trainerctl.render.image_refs import iter_images

TRAINJOBS_CRD = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/trainjobs.trainer.kubeflow.org"


def _runtime_images(objects: list[dict]) -> dict[str, list[str]]:
    return {o["metadata"]["name"]: sorted(image for _, image in iter_images(o))
            for o in objects if o["kind"] == "ClusterTrainingRuntime"}


def _serves(api, path: str) -> bool:
    """The path lists; 404 (not served yet) and 429 (the CRD's storage being set up again after
    the update, as the API server answers meanwhile) are not yet."""
    try:
        return api.get_or_none(path) is not None
    except ApiError as exc:
        if exc.status == 429:
            return False
        raise


def test_history_and_rollback_to_v2_2_0_keeps_the_trainjob(clean_slate, tctl, api):
    tctl.install("v2.2.0")
    h.create_namespace(api, JOBS_NS)
    h.create_trainjob(api, h.trainjob("e2e-rollback-running", JOBS_NS, cpu=None, num_nodes=1))
    job = f"{TRAINER}/namespaces/{JOBS_NS}/trainjobs/e2e-rollback-running"
    tctl.install("v2.3.0")
    h.wait_until(lambda: h.controller_runs(api, "v2.3.0"), 120, "the v2.3.0 controller")

    listed = json.loads(tctl.run("history", "-n", KF_NS, "-o", "json").stdout)["revisions"]
    assert [(r["revision"], r["action"], r["status"]) for r in listed] == [(1, "install", "superseded"),
                                                                           (2, "install", "deployed")]
    assert [r["source"]["path"].rsplit("/", 2)[-2] for r in listed] == ["v2.2.0", "v2.3.0"]
    assert listed[0]["render"]["remoteMirrors"] == tctl.mirrors and listed[0]["objectCount"] > 20

    # Installed from local checkouts: the record never chooses the folder, the user names it.
    unnamed = tctl.run("rollback", "-n", KF_NS, "--dry-run", expect=2)
    assert unnamed.stderr.startswith("error: revision 1 was installed from the local checkout ") and \
        "/kubeflow-trainer/v2.2.0 to render it again" in unnamed.stderr and unnamed.stderr.count("\n") == 1, \
        unnamed.stderr
    named = ["--source", str(tctl.source("v2.2.0")), *(f for m in tctl.mirrors for f in ("--remote-mirror", m))]
    dry = tctl.run("rollback", "-n", KF_NS, "--dry-run", *named)
    assert "image:" in dry.stdout  # the diff: the controller's image goes back
    assert "would be configured" in dry.stdout and "history:" not in dry.stdout
    assert h.controller_runs(api, "v2.3.0") and len(json.loads(tctl.run("history", "-n", KF_NS, "-o", "json")
                                                              .stdout)["revisions"]) == 2

    back = tctl.run("rollback", "-n", KF_NS, *named, "--timeout", str(h.INSTALL_TIMEOUT), "-o", "json")
    report = json.loads(back.stdout)
    # The rollback ends with verify's default tiers, on stderr: the v2.2.0 controller reconciles.
    verified = back.stderr.splitlines()
    assert any(line.startswith("verify: ") and " ok" in line and "fail" not in line for line in verified), back.stderr
    assert any("reconcile" in line for line in verified), back.stderr
    assert report["summary"].get("failed", 0) == 0 and report["history"]["revision"] == 3
    h.wait_until(lambda: h.controller_runs(api, "v2.2.0"), 120, "the v2.2.0 controller to run again")
    live = api.request("GET", "/apis/trainer.kubeflow.org/v1alpha1/clustertrainingruntimes")["items"]
    rendered = [o for o in tctl.render("v2.2.0") if o["kind"] == "ClusterTrainingRuntime"]
    assert _runtime_images(live) == _runtime_images(rendered)
    assert api.get_or_none(job) is not None  # the TrainJob is not lost

    status = json.loads(tctl.run("status", "-n", KF_NS, "-o", "json").stdout)
    assert status["revision"]["revision"] == 3 and status["revision"]["rollbackTo"] == 1
    assert "/v2.2.0/" in status["source"]["path"]
    table = tctl.run("history", "-n", KF_NS).stdout.splitlines()
    assert table[-1].split()[:4] == ["3", table[-1].split()[1], "deployed", "rollback"]
    assert table[-1].endswith("rollback to 1")

    # A revision that is not there: one line, exit 2, nothing changed.
    missing = tctl.run("rollback", "42", "-n", KF_NS, expect=2)
    assert missing.stderr.startswith(f"error: revision 42: not in the install history of namespace {KF_NS} (it "
                                     "holds revisions 1..3;") and missing.stderr.count("\n") == 1

    # A version neither older revision serves, with objects stored at it: refused, named.
    crd = api.request("GET", TRAINJOBS_CRD)
    newer = copy.deepcopy(next(v for v in crd["spec"]["versions"] if v["name"] == "v1alpha1"))
    newer.update(name="v1alpha2", storage=True)
    for v in crd["spec"]["versions"]:
        v["storage"] = False
    crd["spec"]["versions"].append(newer)
    api.request("PUT", TRAINJOBS_CRD, crd)
    h.wait_until(lambda: _serves(api, f"/apis/trainer.kubeflow.org/v1alpha2/namespaces/{JOBS_NS}/trainjobs"), 60,
                 "v1alpha2 to be served")
    stored = h.trainjob("e2e-stored-v1alpha2", JOBS_NS, suspend=True)
    stored["apiVersion"] = "trainer.kubeflow.org/v1alpha2"
    api.request("POST", f"/apis/trainer.kubeflow.org/v1alpha2/namespaces/{JOBS_NS}/trainjobs", stored)
    h.wait_until(lambda: "v1alpha2" in (api.request("GET", TRAINJOBS_CRD).get("status") or {}).get(
        "storedVersions", []), 60, "storedVersions to list v1alpha2")
    refused = tctl.run("rollback", "2", "-n", KF_NS, "--source", str(tctl.source("v2.3.0")),
                       *named[2:], expect=3)
    assert ("rollback refused: CRD trainjobs.trainer.kubeflow.org version v1alpha2 has 2 object(s) that may be "
            "stored at it (status.storedVersions: v1alpha1, v1alpha2), and revision 2 does not serve v1alpha2"
            in refused.stderr), refused.stderr
    assert h.controller_runs(api, "v2.2.0")
    assert len(json.loads(tctl.run("history", "-n", KF_NS, "-o", "json").stdout)["revisions"]) == 3
