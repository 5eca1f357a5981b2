"""The process kubelet behaves like a kubelet where it cannot run a pod (tests/testenv/kubelet.py).

Pods here name the real controller images. What a kubelet would report for each, the process
kubelet reports: an image the cluster's registry (the builds) does not have, an image under the
unpullable registry, a malformed reference, a process that exits, a missing ConfigMap key. Logs
are read as `kubectl logs` reads them: the real kubectl, through kube-apiserver's pods/log, which
dials the node's kubelet endpoint (kwok, serving the process kubelet's CRI log files).
"""

from __future__ import annotations

import subprocess

import pytest

from tests.support import e2e as h
from tests.support.kubectl import kubectl_binary
from tests.testenv.api import ApiError
from tests.testenv.known_images import TRAINER, UNPULLABLE_REGISTRY

NS = "e2e-kubelet"
REPO = TRAINER.repositories[0]
RUNS = f"{REPO}:v2.3.0"


@pytest.fixture(scope="module")
def api(e2e_cluster):
    api = e2e_cluster.api()
    h.create_namespace(api, NS)
    yield api
    try:
        api.request("DELETE", f"/api/v1/namespaces/{NS}")
    except ApiError as exc:
        if exc.status != 404:
            raise


def _pod(name: str, image: str, **container) -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": NS},
            "spec": {"terminationGracePeriodSeconds": 1,
                     "containers": [{"name": "manager", "image": image, **container}]}}


def _create(api, body: dict) -> None:
    api.request("POST", f"/api/v1/namespaces/{NS}/pods", body)


def _status(api, name: str) -> dict:
    pod = api.get_or_none(f"/api/v1/namespaces/{NS}/pods/{name}") or {}
    return ((pod.get("status") or {}).get("containerStatuses") or [{}])[0]


def _waiting(api, name: str, reason: str):
    def check():
        state = (_status(api, name).get("state") or {}).get("waiting") or {}
        return state if state.get("reason") == reason else None

    return h.wait_until(check, 60, f"pod {name} waiting with {reason}")


def _events(api, name: str) -> list[tuple[str, str, str]]:
    items = api.request("GET", f"/api/v1/namespaces/{NS}/events",
                        query={"fieldSelector": f"involvedObject.name={name}"}).get("items") or []
    return [(e.get("type"), e.get("reason"), e.get("message") or "") for e in items
            if (e.get("source") or {}).get("component") == "kubelet"]


def _kubectl(e2e_cluster, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([kubectl_binary(), "--kubeconfig", str(e2e_cluster.admin_kubeconfig), "-n", NS, *args],
                          capture_output=True, text=True, timeout=60)


def test_an_image_tag_with_no_build_is_err_image_pull_then_back_off_with_the_registry_answer(api):
    image = f"{REPO}:v0.0.0-no-such-tag"
    _create(api, _pod("bad-tag", image))
    backoff = _waiting(api, "bad-tag", "ImagePullBackOff")
    not_found = f'failed to resolve reference "{image}": {image}: not found'
    assert backoff["message"].startswith(f'Back-off pulling image "{image}": ErrImagePull: rpc error: code = NotFound')
    assert not_found in backoff["message"]
    events = _events(api, "bad-tag")
    assert ("Normal", "Pulling", f'Pulling image "{image}"') in events
    assert any(r == "Failed" and m.startswith(f'Failed to pull image "{image}"') and not_found in m
               for _, r, m in events), events
    assert ("Warning", "Failed", "Error: ErrImagePull") in events
    assert ("Normal", "BackOff", f'Back-off pulling image "{image}"') in events
    pod = api.request("GET", f"/api/v1/namespaces/{NS}/pods/bad-tag")
    assert pod["status"]["phase"] == "Pending"  # not kwok's Running


def test_an_image_under_the_unpullable_registry_fails_like_a_missing_mirror(api):
    image = f"{UNPULLABLE_REGISTRY}/mirror/trainer-controller-manager:v2.3.0"
    _create(api, _pod("no-mirror", image))
    failed = h.wait_until(lambda: (
        _status(api, "no-mirror").get("state") or {}).get("waiting", {}).get("reason") in ("ErrImagePull",
                                                                                           "ImagePullBackOff"),
                          120, "ErrImagePull or its back-off")
    assert failed
    state = _status(api, "no-mirror")["state"]["waiting"]
    assert f"dial tcp: lookup {UNPULLABLE_REGISTRY}: no such host" in state["message"]


def test_a_malformed_reference_is_invalid_image_name(api):
    image = f"{REPO}:v2.3.0!"
    _create(api, _pod("bad-name", image))
    state = _waiting(api, "bad-name", "InvalidImageName")
    assert state["message"] == (f'Failed to apply default image tag "{image}": couldn\'t parse image name '
                                f'"{image}": invalid reference format')


def test_a_process_that_exits_crash_loops_with_back_off_and_its_logs_are_served(api, e2e_cluster):
    _create(api, _pod("crash", RUNS, args=["--no-such-flag"]))
    seen: list[str] = []

    def looping():
        status = _status(api, "crash")
        waiting = (status.get("state") or {}).get("waiting") or {}
        if waiting.get("reason") == "CrashLoopBackOff" and waiting["message"] not in seen:
            seen.append(waiting["message"])
        return status if status.get("restartCount", 0) >= 3 and waiting.get("reason") == "CrashLoopBackOff" else None

    status = h.wait_until(looping, 90, "three restarts, then CrashLoopBackOff", interval=0.2)
    last = status["lastState"]["terminated"]
    assert last["exitCode"] == 2 and last["reason"] == "Error", last  # Go's flag package exits 2
    # The kubelet's doubling back-off, in its words.
    periods = [m.split()[1] for m in seen]
    assert periods[:2] == ["1s", "2s"], seen
    assert all(m.endswith(f"restarting failed container=manager pod=crash_{NS}({_uid(api, 'crash')})") for m in seen)
    assert any(r == "BackOff" and m.startswith("Back-off restarting failed container manager in pod crash_")
               for _, r, m in _events(api, "crash"))

    previous = _kubectl(e2e_cluster, "logs", "crash", "--previous")
    assert previous.returncode == 0, previous.stderr
    assert previous.stdout.startswith("flag provided but not defined: -no-such-flag\nUsage of /manager:\n")
    tail = _kubectl(e2e_cluster, "logs", "crash", "--previous", "--tail", "2")
    assert tail.stdout == "\n".join(previous.stdout.splitlines()[-2:]) + "\n"
    current = _kubectl(e2e_cluster, "logs", "crash", "--timestamps")
    assert current.returncode == 0 and "flag provided but not defined" in current.stdout, current.stderr
    assert current.stdout.split(" ", 1)[0].endswith("Z")  # the CRI file's time, read back by the kubelet's reader


def _uid(api, name: str) -> str:
    return api.request("GET", f"/api/v1/namespaces/{NS}/pods/{name}")["metadata"]["uid"]


def test_a_missing_configmap_key_is_create_container_config_error_until_it_exists(api):
    api.request("POST", f"/api/v1/namespaces/{NS}/configmaps", {
        "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "settings"}, "data": {"other": "x"}})
    env = [{"name": "LEVEL", "valueFrom": {"configMapKeyRef": {"name": "settings", "key": "level"}}}]
    _create(api, _pod("config", RUNS, args=["--no-such-flag"], env=env))
    state = _waiting(api, "config", "CreateContainerConfigError")
    assert state["message"] == f"couldn't find key level in ConfigMap {NS}/settings"
    assert ("Warning", "Failed", f"Error: couldn't find key level in ConfigMap {NS}/settings") in _events(api, "config")
    api.request("PATCH", f"/api/v1/namespaces/{NS}/configmaps/settings", {"data": {"level": "info"}},
                content_type="application/merge-patch+json")
    h.wait_until(lambda: _status(api, "config").get("lastState")
               or (_status(api, "config").get("state") or {}).get("running"),
                 30, "the container to start once the key exists")
