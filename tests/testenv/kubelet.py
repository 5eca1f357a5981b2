"""A process kubelet: pods whose image is a known controller run the real binary, as a pod would.

For each scheduled pod whose container image tests/testenv/known_images.py knows, or that is
under its unpullable registry (kwok plays every other pod), this process:

- gives it its own network namespace and pod IP (tests/testenv/podnet.py);
- builds a root directory holding the image's binary at its entrypoint, and the pod's volumes at
  their mount paths: Secrets and ConfigMaps (kept in sync, written like the kubelet's atomic writer,
  so cert watchers see updates), downward API files and projected service account tokens from the
  TokenRequest API. So the controller finds its namespace, token and cluster CA at
  /var/run/secrets/kubernetes.io/serviceaccount, and its config and webhook certs where the
  Deployment mounts them;
- runs the container's command and args (with $(VAR) expansion) and env, as the pod's user, chrooted
  there, inside that network namespace and with the pod's hostname (its own UTS namespace);
  KUBERNETES_SERVICE_HOST is the pod network's gateway,
  which the service proxy forwards to kube-apiserver;
- behaves like a kubelet where it cannot run the pod: an image with no build behind it is
  ErrImagePull, then ImagePullBackOff with the kubelet's image back-off, carrying the registry's
  answer (known_images.pull); a malformed reference is InvalidImageName; a missing ConfigMap,
  Secret or key in the environment is CreateContainerConfigError, in a volume ContainerCreating
  with a FailedMount event;
- reports the pod's status: Running with its IP, Ready from the container's readiness probe;
  a process that exits is terminated (Error, its exit code), restarted at once the first time and
  then after the kubelet's doubling back-off (CrashLoopBackOff), with restartCount and lastState;
  on deletion it stops it within the grace period and removes the pod;
- records the kubelet's events (Pulling, Failed, BackOff, Created, Started, Unhealthy, FailedMount)
  on the pod, folded and counted as client-go does;
- keeps each container start's output in CRI log files through a log shim (logshim.py), and
  points kwok at them with a `Logs` object per pod, so `kubectl logs` (and `--previous`) reads them
  through kube-apiserver from the node's kubelet endpoint, which kwok serves.

Probes run every second from the first second (not the pod's periods and initial delays: tests
should not wait 15 s for a controller that is ready in 2); liveness probes are not run. A failed
readiness probe is an Unhealthy event at most once per the probe's period.

It is one thread on purpose: processes are started with a preexec function (setns, chroot, setuid,
then the parent-death signal, which a credential change would clear), which is only safe to run
from a single-threaded parent.

    python -m tests.testenv.kubelet --kubeconfig admin.kubeconfig --bin-dir BIN --workdir DIR \
        --net-index 1 --api-port 6443
"""

from __future__ import annotations

import argparse
import base64
import ctypes
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import traceback
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from tests.testenv.api import Api, ApiError
from tests.testenv.backoff import Backoff
from tests.testenv.events import Recorder
from tests.testenv.known_images import KNOWN, UNPULLABLE_REGISTRY, process_kubelet_takes, pull
from tests.testenv.podnet import PodNetwork

POLL_SECONDS = 0.3
VOLUME_SYNC_SECONDS = 1.0
PROBE_SECONDS = 1.0
MAX_GRACE_SECONDS = 10
DEFAULT_UID = 65532  # the distroless `nonroot` user both controller images run as
MERGE_PATCH = "application/merge-patch+json"
CLONE_NEWNET = 0x40000000
CLONE_NEWUTS = 0x04000000
PR_SET_PDEATHSIG = 1

_libc = ctypes.CDLL(None, use_errno=True)


def now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def log(msg: str) -> None:
    print(f"{now()} kubelet: {msg}", file=sys.stderr, flush=True)


class NotReadyYet(RuntimeError):
    """A volume source (Secret, ConfigMap, token) is not there yet; try again on the next pass."""


# -- files -----------------------------------------------------------------------------------
def write_atomic_dir(target: Path, files: dict[str, tuple[bytes, int]]) -> bool:
    """Make `target` hold exactly `files` (relative path -> (content, mode)) the way the kubelet's
    atomic writer does: a timestamped dir, `..data` pointing at it, and top-level symlinks into
    `..data`. Returns True when something changed."""
    data = target / "..data"
    if data.is_symlink():
        current = {}
        base = data.resolve()
        for path in base.rglob("*"):
            if path.is_file():
                current[str(path.relative_to(base))] = (path.read_bytes(), path.stat().st_mode & 0o777)
        if current == files:
            return False
    target.mkdir(parents=True, exist_ok=True)
    target.chmod(0o755)
    stamp = target / f"..{time.time_ns()}"
    stamp.mkdir()
    stamp.chmod(0o755)
    for rel, (content, mode) in files.items():
        path = stamp / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content)
        path.chmod(mode)
    tmp = target / "..data_tmp"
    if tmp.is_symlink():
        tmp.unlink()
    tmp.symlink_to(stamp.name)
    old = data.resolve() if data.is_symlink() else None
    os.replace(tmp, data)
    tops = {rel.split("/", 1)[0] for rel in files}
    for entry in target.iterdir():
        if entry.name.startswith(".."):
            continue
        if entry.name not in tops and entry.is_symlink():
            entry.unlink()
    for top in tops:
        link = target / top
        if not link.is_symlink():
            link.symlink_to(f"..data/{top}")
    if old is not None and old != stamp:
        shutil.rmtree(old, ignore_errors=True)
    return True


def _mode(item: dict, default: int) -> int:
    return item.get("mode") if item.get("mode") is not None else default


def _select(data: dict[str, bytes], items: list[dict] | None, default_mode: int,
            secret: bool = False) -> dict[str, tuple[bytes, int]]:
    if not items:
        return {key: (value, default_mode) for key, value in data.items()}
    out = {}
    for item in items:
        if item["key"] not in data:  # the kubelet's volume plugins' words
            raise NotReadyYet(f"references non-existent secret key: {item['key']}" if secret
                              else f"configmap references non-existent config key: {item['key']}")
        out[item["path"]] = (data[item["key"]], _mode(item, default_mode))
    return out


def field_value(pod: dict, path: str) -> str:
    meta = pod["metadata"]
    match = re.fullmatch(r"metadata\.(labels|annotations)\['(.+)'\]", path)
    if match:
        return (meta.get(match.group(1)) or {}).get(match.group(2), "")
    simple = {
        "metadata.name": meta.get("name"), "metadata.namespace": meta.get("namespace"),
        "metadata.uid": meta.get("uid"), "spec.nodeName": pod["spec"].get("nodeName"),
        "spec.serviceAccountName": pod["spec"].get("serviceAccountName"),
        "status.podIP": (pod.get("status") or {}).get("podIP"), "status.hostIP": (pod.get("status") or {}).get("hostIP"),
    }
    if path == "metadata.labels":
        return "\n".join(f'{k}="{v}"' for k, v in sorted((meta.get("labels") or {}).items()))
    if path == "metadata.annotations":
        return "\n".join(f'{k}="{v}"' for k, v in sorted((meta.get("annotations") or {}).items()))
    return simple.get(path) or ""


# -- one pod ---------------------------------------------------------------------------------
# The kubelet's back-offs. Restarts: 1 s doubling to 60 s, a kubelet with the
# ReduceDefaultCrashLoopBackOffDecay feature gate (the default is 10 s to 300 s; a crash loop test
# should not take minutes). Image pulls: the kubelet's fixed 10 s doubling to 300 s.
CRASH_BACKOFF = (1.0, 60.0)
IMAGE_BACKOFF = (10.0, 300.0)
# A waiting reason's events are recorded again (their count grows) at most this often, about as
# often as a kubelet's pod worker retries a pod that cannot start.
RETRY_EVENT_SECONDS = 10.0
DEFAULT_PROBE_PERIOD = 10
LOGS_API = "/apis/kwok.x-k8s.io/v1alpha1"
LOG_SHIM = Path(__file__).resolve().parent / "logshim.py"


@dataclass
class PodRun:
    uid: str
    namespace: str
    name: str
    container: str
    image: str
    host: int  # last octet of the pod IP, also the netns number
    ip: str
    netns: str
    root: Path
    log_path: Path  # the plain log a person reads, every start appended
    log_dir: Path  # CRI log files, <start>.log, as the kubelet's /var/log/pods/<pod>/<container>/
    binary: str | None = None  # the entrypoint path in the root once the image is "pulled"
    image_id: str = ""  # "testenv-binary://<file in the e2e bin dir>": which build runs
    pull_error: str = ""  # the last failed pull, shown during the pull back-off
    waiting: tuple[str, str] | None = None  # why the container is not running: (reason, message)
    waiting_since: float = 0.0
    proc: subprocess.Popen | None = None
    shim: subprocess.Popen | None = None
    started_at: str = ""
    starts: int = 0
    exits: list[dict] = field(default_factory=list)  # the last two terminated states, newest last
    exited_at: float = 0.0
    report_exit: bool = False  # show the terminated state once before the back-off
    ready: bool = False
    next_probe: float = 0.0
    next_unhealthy_event: float = 0.0
    next_volume_sync: float = 0.0
    tokens: dict[str, float] = field(default_factory=dict)  # volume path -> refresh time
    terminating_until: float = 0.0
    last_status: dict | None = None
    volume_error: str = ""

    @property
    def restart_count(self) -> int:
        return max(self.starts - 1, 0)

    @property
    def container_id(self) -> str:
        return f"testenv://{self.uid[:8]}-{self.starts - 1}" if self.starts else ""


class ConfigError(RuntimeError):
    """What the kubelet cannot build a container's config from: CreateContainerConfigError."""


def go_duration(seconds: float) -> str:
    """Go's time.Duration text for whole seconds (10s, 1m0s, 5m0s)."""
    whole = int(seconds)
    return f"{whole}s" if whole < 60 else f"{whole // 60}m{whole % 60}s"


class Kubelet:
    def __init__(self, api: Api, bin_dir: Path, workdir: Path, net: PodNetwork, api_port: int = 443):
        self.api = api
        self.bin_dir = bin_dir
        self.workdir = workdir
        self.net = net
        self.api_port = api_port
        self.runs: dict[str, PodRun] = {}
        self.node_ips: dict[str, str] = {}
        self.stopping = False
        self.events = Recorder(api)
        self.crash_backoff = Backoff(*CRASH_BACKOFF)
        self.pull_backoff = Backoff(*IMAGE_BACKOFF)
        self.shims: list[subprocess.Popen] = []

    # -- main loop -----------------------------------------------------------------------
    def run(self) -> None:
        signal.signal(signal.SIGTERM, self._on_signal)
        signal.signal(signal.SIGINT, self._on_signal)
        try:
            while not self.stopping:
                try:
                    self.sync_once()
                    self.events.flush_all()
                except (ApiError, OSError) as exc:
                    log(f"sync failed: {exc}")
                self.shims = [s for s in self.shims if s.poll() is None]
                time.sleep(POLL_SECONDS)
        finally:
            self.shutdown()

    def _on_signal(self, *_):
        self.stopping = True

    def sync_once(self) -> None:
        pods = self.api.request("GET", "/api/v1/pods", query={"fieldSelector": "spec.nodeName!="}).get("items") or []
        seen = set()
        for pod in pods:
            containers = pod["spec"].get("containers") or []
            if not containers or not process_kubelet_takes(containers[0].get("image", "")):
                continue
            uid = pod["metadata"]["uid"]
            seen.add(uid)
            try:
                self.sync_pod(pod)
            except ApiError as exc:
                if exc.status != 404:  # the pod went away meanwhile
                    log(f"{pod['metadata']['namespace']}/{pod['metadata']['name']}: {exc}")
            except Exception:  # one pod's trouble must not stop the others: log it, retry next pass
                log(f"{pod['metadata']['namespace']}/{pod['metadata']['name']}: {traceback.format_exc()}")
        for uid in [u for u in self.runs if u not in seen]:
            run = self.runs[uid]
            log(f"{run.namespace}/{run.name}: pod is gone; stopping its process")
            self._kill(run, signal.SIGKILL)
            self._cleanup(run)

    def sync_pod(self, pod: dict) -> None:
        """One pass of the kubelet's SyncPod for this pod: volumes, image, config, start (or back
        off), probes, status. Like the kubelet, a step that fails leaves the container waiting
        with its reason, and the next pass tries again."""
        meta = pod["metadata"]
        uid = meta["uid"]
        run = self.runs.get(uid)
        if run is None:
            if meta.get("deletionTimestamp"):
                self._delete_pod(pod)
                return
            if (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
                return
            run = self.runs[uid] = self._new_run(pod)
        if meta.get("deletionTimestamp"):
            self._terminate(run, pod)
            return
        t = time.monotonic()
        if t >= run.next_volume_sync:
            run.next_volume_sync = t + VOLUME_SYNC_SECONDS
            try:
                self._sync_volumes(run, pod)
                run.volume_error = ""
            except NotReadyYet as exc:
                run.volume_error = str(exc)
        self._reap(run)
        if run.proc is None and not run.report_exit:
            if run.volume_error:
                volume, _, message = run.volume_error.partition(": ")
                self._wait(run, pod, "ContainerCreating", "", [
                    ("Warning", "FailedMount", f'MountVolume.SetUp failed for volume "{volume}" : {message}')])
            elif run.binary is not None or self._pull(run, pod):
                self._start_or_back_off(run, pod)
        if run.proc is not None and t >= run.next_probe:
            run.next_probe = t + PROBE_SECONDS
            ready, why = self._probe(run, pod)
            if ready != run.ready:
                log(f"{run.namespace}/{run.name}: {'ready' if ready else 'not ready'}")
            run.ready = ready
            if not ready and why and t >= run.next_unhealthy_event:
                period = ((pod["spec"]["containers"][0].get("readinessProbe") or {}).get("periodSeconds")
                          or DEFAULT_PROBE_PERIOD)
                run.next_unhealthy_event = t + period
                self.events.pod_event(pod, "Warning", "Unhealthy", f"Readiness probe failed: {why}", run.container)
        self._report(run, pod)

    def _wait(self, run: PodRun, pod: dict, reason: str, message: str, events: list[tuple[str, str, str]]) -> None:
        """The container waits for `reason`; its events are recorded on a change and then at the
        kubelet's retry pace."""
        t = time.monotonic()
        if run.waiting != (reason, message) or t - run.waiting_since >= RETRY_EVENT_SECONDS:
            run.waiting_since = t
            for type_, event_reason, text in events:
                self.events.pod_event(pod, type_, event_reason, text, run.container)
        run.waiting = (reason, message)

    # -- the image ------------------------------------------------------------------------
    def _pull(self, run: PodRun, pod: dict) -> bool:
        """The kubelet's EnsureImageExists against this cluster's registry (known_images.pull):
        True once the image's build is in the pod's root."""
        result = pull(run.image, self.built_binaries())
        if result.reason == "InvalidImageName":
            self._wait(run, pod, result.reason, result.message, [
                ("Warning", "InspectFailed", result.message), ("Warning", "Failed", "Error: InvalidImageName")])
            return False
        if result.build is None:
            key = f"{run.uid}_{result.image}"
            if self.pull_backoff.in_backoff_since_update(key):
                text = f'Back-off pulling image "{result.image}"'
                self._wait(run, pod, "ImagePullBackOff", f"{text}: {run.pull_error}", [
                    ("Normal", "BackOff", text), ("Warning", "Failed", "Error: ImagePullBackOff")])
                return False
            run.waiting = None  # a new attempt: its events are recorded whatever the last state was
            self._wait(run, pod, "ErrImagePull", result.message, [
                ("Normal", "Pulling", f'Pulling image "{result.image}"'),
                ("Warning", "Failed", f'Failed to pull image "{result.image}": {result.message}'),
                ("Warning", "Failed", "Error: ErrImagePull")])
            self.pull_backoff.next(key, time.monotonic())
            run.pull_error = f"ErrImagePull: {result.message}"
            log(f"{run.namespace}/{run.name}: cannot pull {run.image}: {result.message}")
            return False
        image, version = result.build
        binary = self.bin_dir / image.binary(version)
        target = run.root / image.entrypoint.lstrip("/")
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            os.link(binary, target)
        except FileExistsError:
            pass
        except OSError:
            shutil.copy2(binary, target)
        run.binary = image.entrypoint
        run.image_id = f"testenv-binary://{binary.name}"
        self.events.pod_event(pod, "Normal", "Pulled",
                              f'Container image "{run.image}" already present on machine', run.container)
        return True

    def built_binaries(self) -> set[str]:
        return {p.name for p in self.bin_dir.iterdir() if p.is_file()}

    # -- starting, exits, back-off ----------------------------------------------------------
    def _reap(self, run: PodRun) -> None:
        if run.proc is None or run.proc.poll() is None:
            return
        code = run.proc.returncode
        log(f"{run.namespace}/{run.name}: process exited with {code}")
        exit_code = code if code >= 0 else 128 - code
        run.exits = [*run.exits[-1:], {"terminated": {
            "exitCode": exit_code, "reason": "Error" if exit_code else "Completed",
            "startedAt": run.started_at, "finishedAt": now(), "containerID": run.container_id}}]
        run.exited_at = time.monotonic()
        run.proc, run.ready, run.report_exit = None, False, True
        self._publish_logs(run, run.starts - 1, run.starts - 1)

    def _start_or_back_off(self, run: PodRun, pod: dict) -> None:
        """The kubelet's doBackOff, then start: the first restart after an exit is immediate, each
        later one waits out a doubling back-off counted from the last exit."""
        if run.exits:
            if self.crash_backoff.in_backoff_since(run.uid, run.exited_at):
                period = go_duration(self.crash_backoff.get(run.uid))
                pod_name = f"{run.name}_{run.namespace}({run.uid})"
                self._wait(run, pod, "CrashLoopBackOff",
                           f"back-off {period} restarting failed container={run.container} pod={pod_name}", [
                               ("Warning", "BackOff",
                                f"Back-off restarting failed container {run.container} in pod {pod_name}")])
                return
            self.crash_backoff.next(run.uid, run.exited_at)
        try:
            self._start(run, pod)
        except ConfigError as exc:
            self._wait(run, pod, "CreateContainerConfigError", str(exc), [("Warning", "Failed", f"Error: {exc}")])


    # -- set-up -------------------------------------------------------------------------
    def _new_run(self, pod: dict) -> PodRun:
        meta = pod["metadata"]
        used = {r.host for r in self.runs.values()}
        host = next(h for h in range(2, 255) if h not in used)
        netns, address = self.net.add_pod(host)
        pod_dir = f"{meta['namespace']}_{meta['name']}_{meta['uid'][:8]}"
        root = self.workdir / "pods" / pod_dir
        root.mkdir(parents=True, exist_ok=True)
        root.chmod(0o755)
        (root / "tmp").mkdir(exist_ok=True)
        (root / "tmp").chmod(0o1777)
        log_path = self.workdir / "logs" / "pods" / f"{meta['namespace']}_{meta['name']}.log"
        log_path.parent.mkdir(parents=True, exist_ok=True)
        container = pod["spec"]["containers"][0]
        log_dir = self.workdir / "logs" / "containers" / pod_dir / container["name"]
        log_dir.mkdir(parents=True, exist_ok=True)
        log(f"{meta['namespace']}/{meta['name']}: pod IP {address}, root {root}")
        return PodRun(meta["uid"], meta["namespace"], meta["name"], container["name"], container.get("image", ""),
                      host, address, netns, root, log_path, log_dir)

    def _sync_volumes(self, run: PodRun, pod: dict) -> None:
        volumes = {v["name"]: v for v in pod["spec"].get("volumes") or []}
        container = pod["spec"]["containers"][0]
        for mount in container.get("volumeMounts") or []:
            volume = volumes.get(mount["name"])
            if volume is None:
                raise NotReadyYet(f"{mount['name']}: volume is not defined")
            try:
                files = self._volume_files(run, pod, volume, mount["mountPath"])
            except NotReadyYet as exc:
                raise NotReadyYet(f"{mount['name']}: {exc}") from None
            target = run.root / mount["mountPath"].lstrip("/")
            sub = mount.get("subPath")
            if sub:
                if sub not in files:
                    raise NotReadyYet(f"{mount['name']}: subPath {sub} not in the volume")
                if not target.exists():  # like the kubelet: a subPath mount is not updated later
                    target.parent.mkdir(parents=True, exist_ok=True)
                    target.write_bytes(files[sub][0])
                    target.chmod(files[sub][1])
            elif files is not None:
                write_atomic_dir(target, files)
            else:
                target.mkdir(parents=True, exist_ok=True)
                target.chmod(0o1777)

    def _volume_files(self, run: PodRun, pod: dict, volume: dict, mount_path: str) -> dict | None:
        """The files of a volume (path -> (bytes, mode)); None for an emptyDir."""
        ns = run.namespace
        if "secret" in volume:
            src = volume["secret"]
            data = self._object_data(ns, "secrets", src["secretName"], src.get("optional", False), b64=True)
            return _select(data, src.get("items"), src.get("defaultMode", 0o644), secret=True)
        if "configMap" in volume:
            src = volume["configMap"]
            data = self._object_data(ns, "configmaps", src["name"], src.get("optional", False), b64=False)
            return _select(data, src.get("items"), src.get("defaultMode", 0o644))
        if "downwardAPI" in volume:
            src = volume["downwardAPI"]
            return self._downward(pod, src.get("items") or [], src.get("defaultMode", 0o644))
        if "emptyDir" in volume:
            return None
        if "projected" in volume:
            src = volume["projected"]
            mode = src.get("defaultMode", 0o644)
            files: dict[str, tuple[bytes, int]] = {}
            for source in src.get("sources") or []:
                if "serviceAccountToken" in source:
                    files.update(self._token(run, pod, source["serviceAccountToken"], mount_path, mode))
                elif "configMap" in source:
                    s = source["configMap"]
                    data = self._object_data(ns, "configmaps", s["name"], s.get("optional", False), b64=False)
                    files.update(_select(data, s.get("items"), mode))
                elif "secret" in source:
                    s = source["secret"]
                    data = self._object_data(ns, "secrets", s["name"], s.get("optional", False), b64=True)
                    files.update(_select(data, s.get("items"), mode, secret=True))
                elif "downwardAPI" in source:
                    files.update(self._downward(pod, source["downwardAPI"].get("items") or [], mode))
                else:
                    raise NotReadyYet(f"projected source {sorted(source)} is not supported by the test kubelet")
            return files
        raise NotReadyYet(f"volume type {sorted(k for k in volume if k != 'name')} is not supported by the test kubelet")

    def _object_data(self, ns: str, resource: str, name: str, optional: bool, b64: bool) -> dict[str, bytes]:
        obj = self.api.get_or_none(f"/api/v1/namespaces/{ns}/{resource}/{name}")
        if obj is None:
            if optional:
                return {}
            raise NotReadyYet(f'{resource[:-1]} "{name}" not found')  # the kubelet's words
        data = {k: base64.b64decode(v) if b64 else v.encode() for k, v in (obj.get("data") or {}).items()}
        if not b64:
            data.update({k: base64.b64decode(v) for k, v in (obj.get("binaryData") or {}).items()})
        return data

    def _downward(self, pod: dict, items: list[dict], mode: int) -> dict[str, tuple[bytes, int]]:
        out = {}
        for item in items:
            if "fieldRef" not in item:
                raise NotReadyYet("downwardAPI resourceFieldRef is not supported by the test kubelet")
            out[item["path"]] = (field_value(pod, item["fieldRef"]["fieldPath"]).encode(), _mode(item, mode))
        return out

    def _token(self, run: PodRun, pod: dict, src: dict, mount_path: str, mode: int) -> dict[str, tuple[bytes, int]]:
        key = f"{mount_path}/{src['path']}"
        current = run.root / mount_path.lstrip("/") / src["path"]
        if key in run.tokens and time.monotonic() < run.tokens[key] and current.exists():
            return {src["path"]: (current.read_bytes(), mode)}
        seconds = src.get("expirationSeconds") or 3600
        spec = {"expirationSeconds": seconds,
                "boundObjectRef": {"apiVersion": "v1", "kind": "Pod", "name": run.name, "uid": run.uid}}
        if src.get("audience"):
            spec["audiences"] = [src["audience"]]
        sa = pod["spec"].get("serviceAccountName") or "default"
        response = self.api.request("POST", f"/api/v1/namespaces/{run.namespace}/serviceaccounts/{sa}/token",
                                    {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": spec})
        run.tokens[key] = time.monotonic() + 0.8 * seconds
        return {src["path"]: (response["status"]["token"].encode(), mode)}

    # -- the process ----------------------------------------------------------------------
    def _env(self, pod: dict, container: dict) -> dict[str, str]:
        """The container's environment; ConfigError (CreateContainerConfigError) when a referenced
        ConfigMap, Secret or key is missing, in the kubelet's words."""
        try:
            return self._env_or_missing(pod, container)
        except NotReadyYet as exc:
            raise ConfigError(str(exc)) from None

    def _env_or_missing(self, pod: dict, container: dict) -> dict[str, str]:
        ns = pod["metadata"]["namespace"]
        env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": "/", "HOSTNAME": pod["metadata"]["name"],
               "KUBERNETES_SERVICE_HOST": self.net.gateway, "KUBERNETES_SERVICE_PORT": str(self.api_port),
               "KUBERNETES_SERVICE_PORT_HTTPS": str(self.api_port)}
        for src in container.get("envFrom") or []:
            prefix = src.get("prefix", "")
            if "configMapRef" in src:
                ref = src["configMapRef"]
                data = self._object_data(ns, "configmaps", ref["name"], ref.get("optional", False), b64=False)
            else:
                ref = src["secretRef"]
                data = self._object_data(ns, "secrets", ref["name"], ref.get("optional", False), b64=True)
            env.update({prefix + k: v.decode() for k, v in data.items()})
        for item in container.get("env") or []:
            if "valueFrom" not in item:
                env[item["name"]] = expand(item.get("value", ""), env)
                continue
            src = item["valueFrom"]
            if "fieldRef" in src:
                env[item["name"]] = field_value(pod, src["fieldRef"]["fieldPath"])
            elif "secretKeyRef" in src or "configMapKeyRef" in src:
                is_secret = "secretKeyRef" in src
                ref = src["secretKeyRef" if is_secret else "configMapKeyRef"]
                data = self._object_data(ns, "secrets" if is_secret else "configmaps", ref["name"],
                                         ref.get("optional", False), b64=is_secret)
                if ref["key"] in data:
                    env[item["name"]] = data[ref["key"]].decode()
                elif not ref.get("optional"):
                    raise ConfigError(f"couldn't find key {ref['key']} in {'Secret' if is_secret else 'ConfigMap'} "
                                      f"{ns}/{ref['name']}")
            else:
                env[item["name"]] = ""  # resourceFieldRef: no cgroup limits here
        return env

    def _start(self, run: PodRun, pod: dict) -> None:
        """Start the container: its process, with stdout and stderr to a log shim (as a runtime's
        shim owns them) writing <start>.log; kwok serves those files as the node's
        /containerLogs (a Logs object per pod names the current and the previous one)."""
        container = pod["spec"]["containers"][0]
        env = self._env(pod, container)
        command = [expand(c, env) for c in container.get("command") or [run.binary]]
        args = [expand(a, env) for a in container.get("args") or []]
        uid, gid, groups = _identity(pod, container)
        attempt = run.starts
        (run.log_dir / f"{attempt - 2}.log").unlink(missing_ok=True)  # the kubelet keeps one previous log
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        try:
            shim = subprocess.Popen(
                [sys.executable, "-S", "-E", str(LOG_SHIM), str(run.log_dir / f"{attempt}.log"), str(run.log_path),
                 str(out_r), str(err_r)], stdin=subprocess.DEVNULL, pass_fds=(out_r, err_r), start_new_session=True)
            log(f"{run.namespace}/{run.name}: starting {' '.join(command + args)} ({run.image_id}) as {uid}:{gid} "
                f"in {run.netns}")
            run.proc = subprocess.Popen([*command, *args], env=env, stdin=subprocess.DEVNULL, stdout=out_w,
                                        stderr=err_w, start_new_session=True, close_fds=True,
                                        preexec_fn=_enter(run.netns, str(run.root), uid, gid, groups,
                                                          (pod["spec"].get("hostname") or run.name)[:63].encode()))
        finally:
            for fd in (out_r, out_w, err_r, err_w):
                os.close(fd)
        run.shim = shim
        self.shims.append(shim)
        run.starts += 1
        run.waiting, run.report_exit = None, False
        self._pid_file(run).parent.mkdir(parents=True, exist_ok=True)
        self._pid_file(run).write_text(str(run.proc.pid))
        run.started_at = now()
        run.next_probe = time.monotonic() + 0.5
        self.events.pod_event(pod, "Normal", "Created", f"Created container: {run.container}", run.container)
        self.events.pod_event(pod, "Normal", "Started", f"Started container {run.container}", run.container)
        self._publish_logs(run, attempt, attempt - 1)

    def _publish_logs(self, run: PodRun, current: int, previous: int) -> None:
        """The kwok Logs object that points the node's /containerLogs at this pod's files, chosen as
        the kubelet chooses containers for logs: the running container, or while none runs the
        last one that exited; with `previous`, the last one that exited."""
        entry = {"containers": [run.container], "logsFile": str(run.log_dir / f"{current}.log")}
        if previous >= 0:
            entry["previousLogsFile"] = str(run.log_dir / f"{previous}.log")
        body = {"apiVersion": "kwok.x-k8s.io/v1alpha1", "kind": "Logs",
                "metadata": {"name": run.name, "namespace": run.namespace}, "spec": {"logs": [entry]}}
        try:
            self.api.request("PATCH", f"{LOGS_API}/namespaces/{run.namespace}/logs/{run.name}", body,
                             query={"fieldManager": "testenv-kubelet", "force": "true"},
                             content_type="application/apply-patch+yaml")
        except ApiError as exc:
            log(f"{run.namespace}/{run.name}: cannot publish its logs: {exc}")

    def _probe(self, run: PodRun, pod: dict) -> tuple[bool, str]:
        """The readiness probe: (ready, why not, in the kubelet's prober's words)."""
        container = pod["spec"]["containers"][0]
        probe = container.get("readinessProbe")
        if not probe:
            return True, ""
        get = probe.get("httpGet")
        if get is None:
            return True, ""  # exec/tcp probes: trust a running process
        port = get.get("port")
        if isinstance(port, str) and not port.isdigit():
            port = next((p["containerPort"] for p in container.get("ports") or [] if p.get("name") == port), None)
        scheme = (get.get("scheme") or "HTTP").lower()
        url = f"{scheme}://{run.ip}:{port}{get.get('path', '/')}"
        try:
            import ssl

            context = ssl._create_unverified_context() if scheme == "https" else None  # kubelet skips verification too
            with urllib.request.urlopen(url, timeout=1, context=context) as response:
                ok = 200 <= response.status < 400
                return ok, "" if ok else f"HTTP probe failed with statuscode: {response.status}"
        except urllib.error.HTTPError as exc:
            return False, f"HTTP probe failed with statuscode: {exc.code}"
        except (urllib.error.URLError, OSError, ValueError) as exc:
            reason = getattr(exc, "reason", exc)
            if isinstance(reason, ConnectionRefusedError):
                reason = "connect: connection refused"
            elif isinstance(reason, TimeoutError):
                reason = "context deadline exceeded (Client.Timeout exceeded while awaiting headers)"
            return False, f'Get "{url}": dial tcp {run.ip}:{port}: {reason}'

    # -- status ---------------------------------------------------------------------------
    def _report(self, run: PodRun, pod: dict) -> None:
        status = pod.get("status") or {}
        container = pod["spec"]["containers"][0]
        ready = run.proc is not None and run.ready
        scheduled = [c for c in status.get("conditions") or [] if c.get("type") == "PodScheduled"]
        previous = {c.get("type"): c for c in (run.last_status or {}).get("conditions") or []}
        unready = {"reason": "ContainersNotReady", "message": f"containers with unready status: [{run.container}]"}

        def cond(type_: str, ok: bool, why: dict | None = None) -> dict:
            value = "True" if ok else "False"
            old = previous.get(type_)
            since = old["lastTransitionTime"] if old and old.get("status") == value else now()
            return {"type": type_, "status": value, "lastTransitionTime": since, **({} if ok else why or {})}

        last = run.exits[-1] if run.exits else None
        if run.proc is not None:
            state = {"running": {"startedAt": run.started_at}}
        elif run.report_exit and last:
            state, last = last, (run.exits[-2] if len(run.exits) > 1 else None)
        elif run.waiting:
            state = {"waiting": {"reason": run.waiting[0], **({"message": run.waiting[1]} if run.waiting[1] else {})}}
        else:
            state = {"waiting": {"reason": "ContainerCreating"}}
        cstatus = {"name": container["name"], "image": container["image"], "imageID": run.image_id, "ready": ready,
                   "started": run.proc is not None, "restartCount": run.restart_count, "state": state}
        if run.proc is not None:
            cstatus["containerID"] = run.container_id
        if last:
            cstatus["lastState"] = last
        host_ip = self._node_ip(pod["spec"].get("nodeName", ""))
        new = {
            "phase": "Running" if run.starts else "Pending",
            "conditions": [*scheduled, cond("PodReadyToStartContainers", True), cond("Initialized", True),
                           cond("ContainersReady", ready, unready), cond("Ready", ready, unready)],
            "hostIP": host_ip, "hostIPs": [{"ip": host_ip}],
            "podIP": run.ip, "podIPs": [{"ip": run.ip}],
            "startTime": status.get("startTime") or now(),
            "containerStatuses": [cstatus],
        }
        if run.report_exit and run.proc is None:
            run.report_exit = False  # shown once; the next pass decides on the back-off
        if new == run.last_status:
            return
        self.api.request("PATCH", f"/api/v1/namespaces/{run.namespace}/pods/{run.name}/status",
                         {"status": new}, content_type=MERGE_PATCH)
        run.last_status = new

    def _node_ip(self, node: str) -> str:
        if node not in self.node_ips:
            obj = self.api.get_or_none(f"/api/v1/nodes/{node}") or {}
            addresses = (obj.get("status") or {}).get("addresses") or []
            found = next((a["address"] for a in addresses if a.get("type") == "InternalIP"), None)
            if not found:
                return self.net.gateway
            self.node_ips[node] = found
        return self.node_ips[node]

    # -- stopping -------------------------------------------------------------------------
    def _terminate(self, run: PodRun, pod: dict) -> None:
        if run.proc is not None and run.proc.poll() is None:
            if not run.terminating_until:
                grace = pod["metadata"].get("deletionGracePeriodSeconds")
                grace = min(MAX_GRACE_SECONDS, 30 if grace is None else grace)
                run.terminating_until = time.monotonic() + grace
                log(f"{run.namespace}/{run.name}: deleting; SIGTERM (grace {grace}s)")
                self._kill(run, signal.SIGTERM)
                return
            if time.monotonic() < run.terminating_until:
                return
            self._kill(run, signal.SIGKILL)
        self._cleanup(run)
        self._delete_pod(pod)

    def _delete_pod(self, pod: dict) -> None:
        meta = pod["metadata"]
        try:
            self.api.request("DELETE", f"/api/v1/namespaces/{meta['namespace']}/pods/{meta['name']}",
                             {"gracePeriodSeconds": 0, "preconditions": {"uid": meta["uid"]}})
        except ApiError as exc:
            if exc.status not in (404, 409):
                raise

    def _kill(self, run: PodRun, sig: int) -> None:
        if run.proc is None:
            return
        try:
            os.killpg(run.proc.pid, sig)
        except ProcessLookupError:
            pass
        if sig == signal.SIGKILL:
            run.proc.wait()

    def _pid_file(self, run: PodRun) -> Path:
        """Where tests find a process pod's pid (to kill a leader, say): run/<namespace>_<name>.pid."""
        return self.workdir / "run" / f"{run.namespace}_{run.name}.pid"

    def _cleanup(self, run: PodRun) -> None:
        self._kill(run, signal.SIGKILL)
        self._pid_file(run).unlink(missing_ok=True)
        self.net.remove_pod(run.host)
        shutil.rmtree(run.root, ignore_errors=True)
        shutil.rmtree(run.log_dir.parent, ignore_errors=True)  # the kubelet removes a deleted pod's logs
        self.events.forget(run.uid)
        if run.starts and not self.stopping:
            try:
                self.api.request("DELETE", f"{LOGS_API}/namespaces/{run.namespace}/logs/{run.name}")
            except ApiError as exc:
                if exc.status != 404:
                    log(f"{run.namespace}/{run.name}: cannot remove its Logs: {exc}")
        self.runs.pop(run.uid, None)

    def shutdown(self) -> None:
        for run in list(self.runs.values()):
            self._cleanup(run)
        self.net.teardown()


def expand(text: str, env: dict[str, str]) -> str:
    """Kubernetes' $(VAR) expansion in command, args and env values ($$ escapes)."""
    return re.sub(r"\$\$|\$\(([A-Za-z_][A-Za-z0-9_]*)\)",
                  lambda m: "$" if m.group(0) == "$$" else env.get(m.group(1), m.group(0)), text)


def _identity(pod: dict, container: dict) -> tuple[int, int, list[int]]:
    pod_sc = pod["spec"].get("securityContext") or {}
    sc = {**pod_sc, **(container.get("securityContext") or {})}
    uid = sc.get("runAsUser", DEFAULT_UID)
    gid = sc.get("runAsGroup", uid)
    groups = [g for g in [pod_sc.get("fsGroup"), *(pod_sc.get("supplementalGroups") or [])] if g is not None]
    return uid, gid, groups


def _enter(netns: str, root: str, uid: int, gid: int, groups: list[int], hostname: bytes):
    def enter() -> None:
        fd = os.open(netns, os.O_RDONLY)
        if _libc.setns(fd, CLONE_NEWNET) != 0:
            raise OSError(ctypes.get_errno(), f"setns {netns}")
        os.close(fd)
        # The pod's own hostname (controllers put it in their leader election identity).
        if _libc.unshare(CLONE_NEWUTS) != 0 or _libc.sethostname(hostname, len(hostname)) != 0:
            raise OSError(ctypes.get_errno(), "hostname")
        os.chroot(root)
        os.chdir("/")
        os.setgroups(groups)
        os.setgid(gid)
        os.setuid(uid)
        # After setuid, which clears it: the process dies with this kubelet, even on SIGKILL.
        _libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)

    return enter


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="kubelet")
    parser.add_argument("--kubeconfig", required=True)
    parser.add_argument("--bin-dir", required=True)
    parser.add_argument("--workdir", required=True)
    parser.add_argument("--net-index", type=int, required=True)
    parser.add_argument("--api-port", type=int, default=443)
    args = parser.parse_args(argv)
    kubelet = Kubelet(Api.from_kubeconfig(args.kubeconfig), Path(args.bin_dir), Path(args.workdir),
                      PodNetwork(args.net_index), args.api_port)
    log(f"running pods of {', '.join(r for image in KNOWN for r in image.repositories)}; "
        f"failing pulls from {UNPULLABLE_REGISTRY}")
    kubelet.run()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
