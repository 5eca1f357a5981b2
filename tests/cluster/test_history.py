"""The install history on a real API server: records written, numbered, kept to --history-max,
listed by `trainerctl history`; a record edited by hand or truncated is one line; a revision that
is not there is one line naming those that are; uninstall keeps or deletes the install_history."""

from __future__ import annotations

import json

import pytest

from trainerctl.cli import main
from trainerctl.cluster.client.views import Entry, Unreadable
from trainerctl.cluster.client.client import connect
from trainerctl.cluster.operations import install_history
from tests.support.actions import session, uninstall
from trainerctl.cluster.uninstall import UninstallOptions
from trainerctl.errors import InputError

pytestmark = pytest.mark.cluster

SOURCE = {"url": "https://github.com/kubeflow/trainer.git", "ref": "v2.2.0", "commit": "a" * 40,
          "digest": "sha256:" + "b" * 64, "overlay": "overlays/manager", "trainer_version": "2.2.0"}
ENTRIES = {"apps/Deployment/ns/controller": Entry("apps/v1", "deployments", True, "controllers", "h1")}


def _new(ref: str = "v2.2.0", **kw) -> install_history.NewRevision:
    return install_history.NewRevision({**SOURCE, "ref": ref, "trainer_version": ref[1:]}, dict(ENTRIES),
                                       {"platform": "kubernetes", "images": {}}, **kw)


def _path(namespace: str, revision: int) -> str:
    return f"/api/v1/namespaces/{namespace}/configmaps/{install_history.name(revision)}"


@pytest.fixture
def api(test_cluster):
    return connect(str(test_cluster.admin_kubeconfig))


def test_records_are_numbered_kept_to_the_limit_and_listed(api, test_cluster, namespace, capsys):
    for ref in ("v2.2.0", "v2.3.0", "v2.2.0"):
        install_history.record(session(api, namespace, field_manager="trainerctl"), _new(ref), history_max=2)
    assert install_history.revisions(session(api, namespace)) == [2, 3]
    # The same install again changes nothing it records: no revision.
    again = install_history.record(session(api, namespace, field_manager="trainerctl"), _new("v2.2.0"), history_max=2)
    assert again == {"revision": 3, "recorded": False, "message": "revision 3 unchanged (this install changed "
                                                                   "nothing it records)"}
    back = install_history.record(session(api, namespace, field_manager="trainerctl"),
                          _new("v2.3.0", action="rollback", description="rollback to 2", rollback_to=2), history_max=0)
    assert back["revision"] == 4 and install_history.revisions(session(api, namespace)) == [2, 3, 4]
    raw = api.request("GET", _path(namespace, 4))
    assert raw["metadata"]["labels"] == {"app.kubernetes.io/managed-by": "trainerctl", "trainerctl.io/history": "true",
                                         "trainerctl.io/revision": "4"}
    record = install_history.read(session(api, namespace), 4)
    assert (record.action, record.rollback_to, record.source["ref"], record.object_count) == ("rollback", 2,
                                                                                              "v2.3.0", 1)
    assert record.who  # the API server's name for the user, and user@host

    kubeconfig = str(test_cluster.admin_kubeconfig)
    assert main(["history", "--kubeconfig", kubeconfig, "-n", namespace]) == 0
    table = capsys.readouterr().out.splitlines()
    assert table[0].split()[:5] == ["REVISION", "UPDATED", "STATUS", "ACTION", "TRAINER"]
    assert [line.split()[0] for line in table[1:]] == ["2", "3", "4"]
    assert "rollback to 2" in table[3] and "uninstalled" in table[3]  # no inventory here: nothing deployed
    assert main(["history", "--kubeconfig", kubeconfig, "-n", namespace, "-o", "json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [r["revision"] for r in listed["revisions"]] == [2, 3, 4]
    assert listed["revisions"][0]["source"]["commit"] == "a" * 40
    assert listed["revisions"][2]["rollbackTo"] == 2 and listed["revisions"][0]["status"] == "superseded"


@pytest.mark.parametrize("edit, line", [
    (lambda d: d.update(objects=d["objects"][: len(d["objects"]) // 2]),
     r"data.objects: expected a JSON object \("),
    (lambda d: d.update(revision="three"), r"data.revision: expected a whole number 1..2147483647, got 'three'"),
    (lambda d: d.update(revision="7"), r"metadata.name: expected a name ending in .v7"),
    (lambda d: d.update(time="yesterday"), r"data.time: expected an RFC 3339 time"),
    (lambda d: d.update(render=json.dumps({"images": ["x"]})), r"data.render.images: expected a mapping of strings"),
    (lambda d: d.update(render=json.dumps({"secret": "x"})), r"data.render.secret: expected one of the recorded"),
    (lambda d: d.pop("action"), r"data.action: expected a non-empty string"),
    (lambda d: d.update(source="{"), r"data.source: expected a JSON object"),
])
def test_a_record_edited_by_hand_or_truncated_is_one_line(api, test_cluster, namespace, capsys, edit, line):
    install_history.record(session(api, namespace, field_manager="trainerctl"), _new("v2.2.0"), history_max=10)
    install_history.record(session(api, namespace, field_manager="trainerctl"), _new("v2.3.0"), history_max=10)
    raw = api.request("GET", _path(namespace, 1))
    edit(raw["data"])
    api.request("PUT", _path(namespace, 1), body=raw)
    with pytest.raises(Unreadable, match=rf"^unreadable ConfigMap {namespace}/trainerctl-history.v1: {line}"):
        install_history.read(session(api, namespace), 1)
    # history lists what it can, and says which record it left out and why, in one line.
    assert main(["history", "--kubeconfig", str(test_cluster.admin_kubeconfig), "-n", namespace]) == 0
    out, err = capsys.readouterr()
    assert [row.split()[0] for row in out.splitlines()[1:]] == ["2"]
    [warning] = err.splitlines()
    assert "unreadable ConfigMap" in warning and "(left out)" in warning and "Traceback" not in err
    # The next revision is still numbered after the unreadable one's.
    assert install_history.record(session(api, namespace, field_manager="x"), _new("v2.2.0"), history_max=10)["revision"] == 3


def test_a_revision_that_is_not_there_is_one_line(api, namespace):
    with pytest.raises(InputError, match=rf"^revision 1: not in the install history of namespace {namespace} "
                                         r"\(it holds no revisions;"):
        install_history.read(session(api, namespace), 1)
    install_history.record(session(api, namespace, field_manager="trainerctl"), _new("v2.2.0"), history_max=10)
    install_history.record(session(api, namespace, field_manager="trainerctl"), _new("v2.3.0"), history_max=10)
    with pytest.raises(InputError, match=r"revision 9: not in the install history .* \(it holds revisions 1..2; "):
        install_history.read(session(api, namespace), 9)


def test_a_record_over_the_bound_keeps_its_count_not_its_entries(api, namespace):
    many = {f"g/K/ns/object-{i:05d}-{'x' * 200}": Entry("g/v1", "ks", True, "s", "h" * 64, "1", "f" * 16)
            for i in range(2000)}
    new = install_history.NewRevision(SOURCE, many, {})
    assert install_history.record(session(api, namespace, field_manager="t"), new, history_max=10)["revision"] == 1
    record = install_history.read(session(api, namespace), 1)
    assert record.object_count == 2000 and record.entries == {}


def test_uninstall_keeps_or_deletes_the_history_and_says_which(api, namespace):
    install_history.record(session(api, namespace, field_manager="trainerctl"), _new("v2.2.0"), history_max=10)
    kept = uninstall(cluster=api, namespace=namespace, options=UninstallOptions(keep_history=True, timeout=30))
    assert kept.history["kept"] == 1 and "--keep-history" in kept.text()
    assert install_history.revisions(session(api, namespace)) == [1]
    dry = uninstall(cluster=api, namespace=namespace, options=UninstallOptions(dry_run=True, timeout=30))
    assert "1 revision(s) would be deleted" in dry.text() and install_history.revisions(session(api, namespace)) == [1]
    gone = uninstall(cluster=api, namespace=namespace, options=UninstallOptions(timeout=30))
    assert gone.history == {"deleted": 1, "message": "1 revision(s) deleted (--keep-history keeps them)"}
    assert install_history.revisions(session(api, namespace)) == []


def test_each_install_that_changes_something_records_a_revision(api, namespace):
    from tests.support.actions import install
    from trainerctl.cluster.install import InstallOptions

    def config(value: str) -> list[dict]:
        return [{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {
            "name": "settings", "namespace": namespace, "labels": {"platform.opendatahub.io/part-of": "trainer"}},
            "data": {"value": value}}]

    options = InstallOptions(skip_preflight=True, wait=False, recipe={"platform": "kubernetes"}, history_max=2)
    first = install(config("1"), cluster=api, namespace=namespace, source=SOURCE, options=options)
    assert first.history["revision"] == 1 and "history: revision 1 recorded" in first.text()
    assert install(config("1"), cluster=api, namespace=namespace, source=SOURCE, options=options).history == {
        "revision": 1, "recorded": False, "message": "revision 1 unchanged (this install changed nothing it records)"}
    install(config("2"), cluster=api, namespace=namespace, source=SOURCE, options=options)
    third = install(config("3"), cluster=api, namespace=namespace, source=SOURCE, options=options)
    assert third.history["message"] == "revision 3 recorded; 1 older revision(s) removed (--history-max 2)"
    record = install_history.read(session(api, namespace), 3)
    assert set(record.entries) == {f"/ConfigMap/{namespace}/settings", f"/Namespace//{namespace}"}
    assert record.render == {"platform": "kubernetes"} and record.source == SOURCE
    dry = install(config("4"), cluster=api, namespace=namespace, source=SOURCE,
                  options=InstallOptions(skip_preflight=True, wait=False, dry_run=True))
    assert dry.history == {} and install_history.revisions(session(api, namespace)) == [2, 3]


def test_rollback_refuses_what_it_cannot_install_again_in_one_line(api, test_cluster, namespace, shared_dir, capsys):
    def rollback(*args: str) -> tuple[int, str]:
        code = main(["rollback", *args, "--kubeconfig", str(test_cluster.admin_kubeconfig), "-n", namespace])
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "Traceback" not in err, err
        return code, err

    assert rollback() == (2, f"error: nothing to roll back to: namespace {namespace} has no install history (each "
                             "install records one; `trainerctl history` lists it)\n")
    checkout = shared_dir / "upstream" / "kubeflow-trainer" / "v2.2.0"
    recorded = {"path": str(checkout / "manifests"), "digest": "sha256:" + "0" * 64, "overlay": "overlays/manager"}
    install_history.record(session(api, namespace, field_manager="t"),
                   install_history.NewRevision(recorded, dict(ENTRIES), {"components": ["runtimes"]}), history_max=10)
    code, err = rollback()
    assert (code, err) == (2, f"error: nothing to roll back to: the install history of namespace {namespace} holds "
                              "revision 1 only (name a revision to install it again)\n")
    # A local checkout is never chosen by the record: named with --source, it is rendered and checked.
    code, err = rollback("1")
    assert code == 2 and err == (f"error: revision 1 was installed from the local checkout {checkout}, which "
                                 "trainerctl does not pin; a record on the cluster never chooses a local folder or a "
                                 f"host by itself: name it with --source {checkout} to render it again (its tree "
                                 f"digest must be sha256:{'0' * 64})\n")
    code, err = rollback("1", "--source", str(checkout))
    assert code == 1 and err.startswith(f"error: rollback refused: revision 1 was rendered from tree digest "
                                        f"sha256:{'0' * 64}, but its source now renders tree digest sha256:")
    install_history.record(session(api, namespace, field_manager="t"),
                   install_history.NewRevision({"file": "rendered.yaml"}, dict(ENTRIES)), history_max=10)
    assert rollback("2") == (2, "error: revision 2 was installed from -f rendered.yaml, of which trainerctl keeps no "
                                "copy: install that file again with `trainerctl install -f`\n")
    assert rollback("9")[0] == 2 and rollback("0")[0] == 2
    raw = api.request("GET", _path(namespace, 1))
    raw["data"]["render"] = raw["data"]["render"][:5]
    api.request("PUT", _path(namespace, 1), body=raw)
    code, err = rollback()
    assert code == 3 and err.startswith(f"error: unreadable ConfigMap {namespace}/trainerctl-history.v1: data.render: "
                                        "expected a JSON object")


def test_the_crd_guard_names_a_stored_version_the_target_does_not_serve(api, namespace):
    from tests.support.cluster import versioned_crd, wait_served
    from trainerctl.cluster.trainer.stored_versions import dropped, refuse_dropped
    from trainerctl.errors import PreflightError

    group = f"{namespace}.example.com"

    def crd(*versions: tuple[str, bool, bool]) -> dict:
        return versioned_crd(group, "Widget", *versions)

    def create(version: str, name: str) -> None:
        api.request("POST", f"/apis/{group}/{version}/namespaces/{namespace}/widgets",
                    body={"apiVersion": f"{group}/{version}", "kind": "Widget", "metadata": {"name": name}})

    older = crd(("v1", True, True))
    api.request("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", body=older)
    wait_served(api, older)
    create("v1", "a")
    assert dropped(api, [older]) == []
    newer = crd(("v1", True, False), ("v2", True, True))
    live = api.request("GET", f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.{group}")
    live["spec"]["versions"] = newer["spec"]["versions"]
    api.request("PUT", f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.{group}", body=live)
    wait_served(api, newer)
    create("v2", "b")
    create("v2", "c")
    [found] = dropped(api, [older])
    assert (found.crd, found.version, found.objects, found.stored) == (f"widgets.{group}", "v2", 3, ("v1", "v2"))
    with pytest.raises(PreflightError, match=rf"^rollback refused: CRD widgets.{group} version v2 has 3 object\(s\) "
                                             r"that may be stored at it \(status.storedVersions: v1, v2\), and "
                                             r"revision 1 does not serve v2;"):
        refuse_dropped(api, [older], what="revision 1")
    assert dropped(api, [crd(("v1", True, False), ("v2", True, True))]) == []


def test_a_record_never_chooses_a_local_folder_or_a_host(api, test_cluster, namespace, tmp_path, capsys):
    """The sample: a revision whose recipe names a local path and no digest is not rendered from
    that path (its file never read, nothing sent): one line, exit 2, naming what to give. So for a
    file:// URL, another repository, a recorded mirror or ownership label the user did not name,
    and an overlay that climbs out of the tree."""
    outside = tmp_path / "outside"
    (outside / "manifests" / "overlays" / "x").mkdir(parents=True)
    (outside / "manifests" / "overlays" / "x" / "kustomization.yaml").write_text("resources:\n- /etc/hostname\n")
    pinned = {"url": "https://github.com/kubeflow/trainer.git", "ref": "v2.2.0",
              "commit": "dc7656ad878916f526cd401f30a347574cd47877",
              "digest": "sha256:f91afd8f7e7c76174e364a13f85c5fb177c7b9012ee8d53460152959db7427fd"}
    cases = [
        ({"path": str(outside / "manifests"), "overlay": "overlays/x"}, {},
         f"the local checkout {outside}, which trainerctl does not pin; a record on the cluster never chooses a local "
         f"folder or a host by itself: name it with --source {outside} to render it again\n"),
        ({"url": f"file://{outside}", "ref": "main", "commit": "a" * 40, "digest": "sha256:" + "b" * 64}, {},
         f"file://{outside} at ref main, which trainerctl does not pin"),
        ({**pinned, "url": "https://evil.example/kubeflow/trainer.git"}, {},
         "https://evil.example/kubeflow/trainer.git at ref v2.2.0, which trainerctl does not pin"),
        ({**pinned, "ref": "main"}, {}, "https://github.com/kubeflow/trainer.git at ref main, which trainerctl does"),
        (pinned, {"remoteMirrors": ["https://github.com/=http://evil.example/"]},
         "rendered with --remote-mirror https://github.com/=http://evil.example/; a record on the cluster never "
         "chooses a host by itself: give --remote-mirror https://github.com/=REPLACEMENT"),
        (pinned, {"ownerLabel": "app=anything"}, "installed with the ownership label app=anything, not "
                                                "platform.opendatahub.io/part-of=trainer: give --owner-label app=anything"),
        (pinned, {"overlay": "../../../../etc"}, "render.overlay '../../../../etc': expected a directory path inside "
                                                 "manifests/ (no '..')"),
    ]
    for source, render, said in cases:
        install_history.record(session(api, namespace, field_manager="t"), install_history.NewRevision(source, dict(ENTRIES), render),
                       history_max=0)
        revision = install_history.revisions(session(api, namespace))[-1]
        code = main(["rollback", str(revision), "--dry-run", "--offline", "--cache-dir", str(tmp_path / "cache"),
                     "--kubeconfig", str(test_cluster.admin_kubeconfig), "-n", namespace])
        out, err = capsys.readouterr()
        assert code == 2 and out == "" and err.count("\n") == 1, (source, render, err)
        assert said in err and err.startswith(f"error: revision {revision}"), (said, err)
    assert not (tmp_path / "cache").exists()  # nothing fetched, nothing cached
    # --ref alone names no source: the record's URL would still choose the host.
    code = main(["rollback", "1", "--ref", "v2.2.0", "--kubeconfig", str(test_cluster.admin_kubeconfig),
                 "-n", namespace])
    assert code == 2 and "--ref: name the source it is a ref of with --source" in capsys.readouterr().err


def test_hand_made_revision_numbers_never_break_an_install(api, test_cluster, namespace, capsys):
    """A labelled record named beyond the highest revision is unreadable and left out of the
    numbering; a history at the top, or a name taken by a ConfigMap of someone else's, leaves the
    install unrecorded with a line, never failed."""
    def plant(name: str, revision: str, labels: dict | None = None) -> None:
        body = install_history.to_configmap(namespace, 1, _new("v2.0.0"), when=__import__("datetime").datetime.now(
            __import__("datetime").timezone.utc), who="someone")
        body["metadata"]["name"] = name
        body["data"]["revision"] = revision
        if labels is not None:
            body["metadata"]["labels"] = labels
        api.request("POST", f"/api/v1/namespaces/{namespace}/configmaps", body=body)

    install_history.record(session(api, namespace, field_manager="t"), _new("v2.2.0"), history_max=10)
    plant("trainerctl-history.v9999999999", "9999999999")
    assert install_history.revisions(session(api, namespace)) == [1]
    second = install_history.record(session(api, namespace, field_manager="t"), _new("v2.3.0"), history_max=10)
    assert second["revision"] == 2 and second["recorded"]
    assert install_history.record(session(api, namespace, field_manager="t"), _new("v2.2.0"), history_max=10)["revision"] == 3
    assert main(["history", "--kubeconfig", str(test_cluster.admin_kubeconfig), "-n", namespace]) == 0
    out, err = capsys.readouterr()
    assert [row.split()[0] for row in out.splitlines()[1:]] == ["1", "2", "3"]
    assert err == (f"warning: unreadable ConfigMap {namespace}/trainerctl-history.v9999999999: metadata.name: "
                   "expected trainerctl-history.vN, N a revision 1..2147483647 (left out)\n")
    plant("trainerctl-history.v4", "4", labels={})  # not a record: no history label
    taken = install_history.record(session(api, namespace, field_manager="t"), _new("v2.3.0"), history_max=10)
    assert taken["recorded"] is False and taken["message"].startswith(
        f"not recorded: ConfigMap {namespace}/trainerctl-history.v4 is already there without the label")
    plant(install_history.name(install_history.MAX_REVISION), str(install_history.MAX_REVISION))
    top = install_history.record(session(api, namespace, field_manager="t"), _new("v2.2.0"), history_max=10)
    assert top == {"revision": install_history.MAX_REVISION, "recorded": False,
                   "message": f"not recorded: revision {install_history.MAX_REVISION} is the highest the history numbers "
                              f"(ConfigMap {namespace}/{install_history.name(install_history.MAX_REVISION)} looks made by hand: "
                              "delete it)"}
    assert main(["rollback", "99999999999", "--kubeconfig", str(test_cluster.admin_kubeconfig), "-n", namespace]) == 2
    assert "REVISION 99999999999: expected a revision number 1..2147483647" in capsys.readouterr().err
