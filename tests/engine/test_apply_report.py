"""What `install` reports for one applied object: a real change is "configured", however soon it follows."""

from __future__ import annotations

import time

from trainerctl.cluster.manager.apply import ApplyOptions, Planned, apply_one, get_meta
from trainerctl.cluster.client.client import connect
from trainerctl.cluster.client.discovery import Discovery
from trainerctl.cluster.manager.objects import ref_of
from trainerctl.settings import FIELD_MANAGER

OPTIONS = ApplyOptions(field_manager=FIELD_MANAGER, timeout=30)


def test_a_change_right_after_the_previous_apply_is_configured(test_cluster, namespace):
    # managedFields times have one-second resolution and a ConfigMap has no generation, so neither
    # can tell "our apply changed it" from "someone else moved it"; only the resourceVersion can.
    cluster = connect(str(test_cluster.admin_kubeconfig))
    discovery = Discovery(cluster)
    discovery.refresh()
    res = discovery.lookup("v1", "ConfigMap")
    actions = []
    for i in range(5):
        body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"cm{i}", "namespace": namespace},
                "data": {"a": "1"}}
        first = Planned(ref_of(body), res, body, "config", "h")
        assert apply_one(cluster, first, OPTIONS, time.monotonic() + 30).action == "created"
        again = Planned(first.ref, res, body, "config", "h", live=get_meta(cluster, first.path))
        changed_body = {**body, "data": {"a": "2"}}
        changed = Planned(first.ref, res, changed_body, "config", "h", live=get_meta(cluster, first.path))
        actions.append((apply_one(cluster, again, OPTIONS, time.monotonic() + 30).action,
                        apply_one(cluster, changed, OPTIONS, time.monotonic() + 30).action))
    assert actions == [("unchanged", "configured")] * 5


def test_a_result_is_keyed_as_its_ref_and_notes_join_what_is_said():
    from trainerctl.cluster.manager.objects import Ref
    from trainerctl.cluster.manager.report import ObjectResult

    r = ObjectResult("Deployment", "m", "ns", "apps", "workloads", "configured")
    assert r.key == Ref("apps", "Deployment", "ns", "m").key
    r.add_note("")
    assert r.message == ""
    r.add_note("took over fields from kubectl")
    r.add_note("")
    r.add_note("legacy finalizer removed")
    assert r.message == "took over fields from kubectl; legacy finalizer removed"
