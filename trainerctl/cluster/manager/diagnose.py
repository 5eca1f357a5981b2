"""Why a Deployment is not rolled out, or a webhook Service has no ready endpoint: the cause, named.

Read only from Kubernetes objects, the way `kubectl describe` and `kubectl logs --previous` show
them: the Deployment's conditions, its newest ReplicaSet (FailedCreate: a quota, PodSecurity, a
missing ServiceAccount), that ReplicaSet's pods (PodScheduled, each container's state), the
events of each, and for a container that crashed the last lines of its previous log.

Every object is read through its view (client/views): one that does not fit (a restart count of
"5", a revision of "abc", statuses that are not mappings) is named in the diagnosis' "could not
read" line and skipped; the rest is still diagnosed. So is a log that cannot be read in time or
within its size: reported, never fatal.

Generic: nothing here knows the product installed. Where an image reference came from is the
caller's to say (`image_origins`, image reference -> where it came from), and so is what a
container's log means (`explain_log`, the log's lines -> a LogCause or None): for a container
that crashed (its previous log) or runs but is not ready (its log now), the caller's reader may
name the cause in one line (an object the controller cannot decode, a configuration field it
rejects, a permission it lacks), kind `log`, final when the reader says it will not heal. Logs
are read only when `logs` is asked, and each line of them is the server's text (log_text.py).

Causes that will not heal by themselves are `final`: an install may stop waiting at once.
They are InvalidImageName (the reference cannot be parsed, so no retry can pull it), a crash
loop past CRASH_LOOP_RESTARTS restarts, and ProgressDeadlineExceeded (the deployment controller
itself gave up). Everything else (a pull that may succeed once a mirror has the tag, a pod that
may be scheduled once a node joins, a quota that may be raised, a ConfigMap that may be created)
is waited for until the time-out. A cause a container's log names is final when the caller's
reader says so.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from trainerctl.cluster.client.client import ApiError, Cluster, object_path
from trainerctl.cluster.client.views import (ContainerStatus, Deployment, Event, Pod, ReplicaSet, Service,
                                             Unreadable, by_time, condition, read_each)
from trainerctl.errors import Interrupted, TrainerctlError, WaitTimeout
from trainerctl.trust.safe_text import clean

CRASH_LOOP_RESTARTS = 3
LOG_TAIL_LINES = 10  # the log lines a crash cause shows
LOG_READ_LINES = 200  # read to find the error line a usage text or a stack trace buries
# A line that says what went wrong (flag errors come first, before a long usage text).
_ERROR_LINE = re.compile(r"error|fatal|panic|fail|invalid|not defined|unable|cannot|refused|denied", re.I)
IMAGE_REASONS = ("ErrImagePull", "ImagePullBackOff", "InvalidImageName", "ErrImageNeverPull",
                 "RegistryUnavailable", "SignatureValidationFailed")
CONFIG_REASONS = ("CreateContainerConfigError", "CreateContainerError", "RunContainerError")
TEXT_CAUSES = 3  # causes per object in text; -o json has them all


@dataclass(frozen=True)
class LogCause:
    """What a container's log says keeps it from running, as the caller's reader names it."""

    reason: str  # a name for it: CannotDecode, ConfigRejected, Forbidden, ...
    message: str  # the one line that names it (already cut and made printable)
    line: str = ""  # the log line it was read from (cut)
    final: bool = True  # it will not heal by itself: a wait may stop


# The caller's reader of a container's log (its lines, oldest first, each printable, masked and cut: log_lines).
LogExplainer = Callable[[list[str]], "LogCause | None"]


@dataclass
class Cause:
    """One reason an object is not ready, in the words of the component that knows it."""

    kind: str  # image, crash, unschedulable, not-ready, create-failed, config, mount, rollout, no-endpoint, failed
    reason: str  # Kubernetes' own: ImagePullBackOff, CrashLoopBackOff, FailedScheduling, FailedCreate, ...
    object: str  # "Pod ns/name", "ReplicaSet ns/name", ...
    message: str
    container: str = ""
    image: str = ""
    image_origin: str = ""
    exit_code: int | None = None
    restarts: int | None = None
    log: list[str] = field(default_factory=list)
    pods: int = 1  # how many pods show this same cause
    final: bool = False

    def headline(self) -> str:
        """One line, no message: what went wrong and where."""
        what = {
            "image": lambda: f"image {self.image or '?'}{self._origin()} cannot be pulled ({self.reason})",
            "crash": lambda: (f"container {self.container} crashes ({self.reason}"
                              + (f", exit code {self.exit_code}" if self.exit_code is not None else "")
                              + (f", {self.restarts} restart(s)" if self.restarts else "") + ")"),
            "unschedulable": lambda: f"pod cannot be scheduled ({self.reason})",
            "not-ready": lambda: f"container {self.container} runs but is not ready ({self.reason})",
            "create-failed": lambda: f"pods cannot be created ({self.reason})",
            "config": lambda: f"container {self.container} cannot start ({self.reason})",
            "mount": lambda: f"a volume cannot be mounted ({self.reason})",
            "rollout": lambda: f"rollout failed ({self.reason})",
            "no-endpoint": lambda: f"no ready endpoint ({self.reason})",
            "failed": lambda: f"pod failed ({self.reason})",
            "log": lambda: self.message,  # the caller's reader named it in one line
        }.get(self.kind, lambda: self.reason)()
        return what + (f" [{self.pods} pods]" if self.pods > 1 else "")

    def _origin(self) -> str:
        return f" (from {self.image_origin})" if self.image_origin else ""

    def text(self) -> str:
        return f"{self.headline()}: {self.message}" if self.message and self.kind != "log" else self.headline()

    def lines(self) -> list[str]:
        return [self.text(), *(f"  | {line}" for line in self.log)]

    @classmethod
    def from_dict(cls, data: dict) -> "Cause":
        names = {"exitCode": "exit_code", "imageOrigin": "image_origin"}
        return cls(**{names.get(k, k): v for k, v in data.items()})

    def to_dict(self) -> dict:
        out = {"kind": self.kind, "reason": self.reason, "object": self.object, "message": self.message,
               "final": self.final}
        for key, value in (("container", self.container), ("image", self.image), ("imageOrigin", self.image_origin),
                           ("exitCode", self.exit_code), ("restarts", self.restarts), ("log", self.log)):
            if value not in ("", None, []):
                out[key] = value
        if self.pods > 1:
            out["pods"] = self.pods
        return out


@dataclass
class Diagnosis:
    kind: str
    namespace: str
    name: str
    causes: list[Cause] = field(default_factory=list)
    pods: list[str] = field(default_factory=list)  # the pods looked at (a Service: those that back it)
    unreadable: list[str] = field(default_factory=list)  # what could not be read: forbidden, or not fitting its view

    @property
    def display(self) -> str:
        return f"{self.kind} {self.namespace}/{self.name}"

    @property
    def final(self) -> Cause | None:
        return next((c for c in self.causes if c.final), None)

    def short(self) -> str:
        """The first cause's headline, for a progress line or an error line."""
        return self.causes[0].headline() if self.causes else ""

    def lines(self, limit: int = TEXT_CAUSES) -> list[str]:
        out = [f"{self.display}:" + ("" if self.causes else " no cause found in its pods and events")]
        for cause in self.causes[:limit]:
            out.extend(f"  {line}" for line in cause.lines())
        if len(self.causes) > limit:
            out.append(f"  and {len(self.causes) - limit} more cause(s) (-o json lists them)")
        out.extend(f"  could not read: {what}" for what in self.unreadable)
        return out

    def to_dict(self) -> dict:
        out = {"kind": self.kind, "namespace": self.namespace, "name": self.name,
               "causes": [c.to_dict() for c in self.causes]}
        if self.pods:
            out["pods"] = self.pods
        if self.unreadable:
            out["unreadable"] = self.unreadable
        return out


class _Reader:
    """The reads one diagnosis makes; a 403 becomes a note instead of an error (a read-only
    troubleshooter may not list events or read logs), and so does an object that does not fit
    its view, or a log that does not come in time."""

    def __init__(self, cluster: Cluster, namespace: str, logs: bool, explain_log: LogExplainer | None = None):
        self.cluster = cluster
        self.namespace = namespace
        self.logs = logs
        self.explain_log = explain_log
        self.unreadable: list[str] = []

    def _note(self, what: str) -> None:
        if what not in self.unreadable:
            self.unreadable.append(what)

    def list(self, read: Callable[[dict], Any], group: str, version: str, resource: str,
             query: dict | None = None) -> list:
        try:
            items = self.cluster.items(object_path(group, version, resource, self.namespace), query=query)
        except ApiError as exc:
            if exc.status in (401, 403):
                self._note(resource)
                return []
            raise
        skipped: list[str] = []
        found = read_each(read, items, skipped)
        for line in skipped:
            self._note(line)
        return found

    def events(self, uid: str) -> list[Event]:
        """The object's events, newest last."""
        return sorted(self.list(Event.read, "", "v1", "events", {"fieldSelector": f"involvedObject.uid={uid}"}),
                      key=by_time)

    def _log(self, pod: str, container: str, previous: bool) -> tuple[list[str], bool]:
        """(the container's last lines, whether that is its whole log); none unless logs are asked."""
        if not self.logs:
            return [], False
        path = object_path("", "v1", "pods", self.namespace, pod) + "/log"
        query = {"container": container, "tailLines": str(LOG_READ_LINES), **({"previous": "true"} if previous else {})}
        try:
            text = self.cluster.text(path, query=query)
        except ApiError as exc:
            if exc.status in (401, 403):
                self._note("pods/log")
            return [], False  # 400: no previous container (yet), or the node cannot serve logs
        except (Interrupted, WaitTimeout):
            raise  # Ctrl-C, or the command's own deadline: not this log's
        except TrainerctlError as exc:  # endless, dripping, cut off: reported, never fatal
            self._note(f"the {'previous ' if previous else ''}log of Pod {self.namespace}/{pod} container {container}: "
                       f"{exc}")
            return [], False
        return log_lines(text), len(text.splitlines()) < LOG_READ_LINES

    def previous_log(self, pod: str, container: str) -> list[str]:
        lines, whole = self._log(pod, container, True)
        return log_excerpt(lines, whole=whole)

    def log_cause(self, pod: str, container: str, previous: bool) -> LogCause | None:
        """What the caller's reader finds in the container's log (the previous container's, for
        one that crashed); None without a reader, or without logs."""
        if self.explain_log is None or not self.logs:
            return None
        lines, _ = self._log(pod, container, previous)
        return self.explain_log(lines) if lines else None


def recent_log(cluster: Cluster, namespace: str, pod: str, container: str = "",
               lines: int = LOG_READ_LINES) -> tuple[list[str], str]:
    """The last lines a running container logged (what a controller says it is doing now), and
    why they could not be read ("" when they were): a log is a clue, never fatal."""
    query = {"tailLines": str(lines), **({"container": container} if container else {})}
    try:
        text = cluster.text(object_path("", "v1", "pods", namespace, pod) + "/log", query=query)
    except (Interrupted, WaitTimeout):
        raise
    except TrainerctlError as exc:
        return [], f"the log of Pod {namespace}/{pod}: {exc}"
    return log_lines(text), ""


def log_lines(text: str) -> list[str]:
    """A log's lines as a diagnosis quotes them: each one printable, masked and cut (safe_text.clean)."""
    return [clean(line) for line in text.splitlines() if line.strip()]


def log_excerpt(lines: list[str], limit: int = LOG_TAIL_LINES, whole: bool = False) -> list[str]:
    """The last lines of a log, and before them the one line that most likely says what went wrong
    when the tail does not start with it: the log's first line when `whole` (a flag error comes
    first, then a long usage text), else the last error-looking line above the tail."""
    if len(lines) <= limit:
        return lines
    above = lines[:-(limit - 2)]
    if whole and _ERROR_LINE.search(lines[0]):
        head = lines[0]
    else:
        head = next((line for line in reversed(above) if _ERROR_LINE.search(line)), "")
    return [head, "...", *lines[-(limit - 2):]] if head else lines[-limit:]


def _latest(events: list[Event], reason: str, contains: str = "") -> str:
    for event in reversed(events):
        if event.reason == reason and contains in event.message:
            return event.message
    return ""


def selector_query(dep: Deployment) -> str:
    """A Deployment's selector as a labelSelector query string."""
    return dep.selector.query()


# -- pods ------------------------------------------------------------------------------------
def pod_causes(pod: Pod, events: list[Event], previous_log: Callable[[str, str], list[str]],
               image_origins: Mapping[str, str] | None = None,
               log_cause: Callable[[str, str, bool], LogCause | None] | None = None) -> list[Cause]:
    """What keeps one pod from being ready, from its status and its events; `log_cause(pod,
    container, previous)`: what a container's log names (_Reader.log_cause)."""
    where = f"Pod {pod.namespace}/{pod.name}"
    scheduled = condition(pod.conditions, "PodScheduled")
    if scheduled.status == "False":
        message = scheduled.message or _latest(events, "FailedScheduling")
        return [Cause("unschedulable", "FailedScheduling", where, message)]
    if pod.phase == "Failed":
        return [Cause("failed", pod.reason or "Failed", where, pod.message)]
    images = {c.name: c.image for c in (*pod.init_containers, *pod.containers)}
    causes: list[Cause] = []
    for cs in (*pod.init_statuses, *pod.statuses):
        cause = _container_cause(pod, cs, images.get(cs.name, cs.image), events, previous_log, image_origins or {},
                                 log_cause or (lambda pod, container, previous: None))
        if cause is not None:
            causes.append(cause)
    if not causes and not pod.statuses:
        mount = _latest(events, "FailedMount")
        if mount:
            causes.append(Cause("mount", "FailedMount", where, mount))
    return causes


def _container_cause(pod: Pod, cs: ContainerStatus, image: str, events: list[Event],
                     previous_log: Callable[[str, str], list[str]], image_origins: Mapping[str, str],
                     log_cause: Callable[[str, str, bool], LogCause | None]) -> Cause | None:
    where, name = f"Pod {pod.namespace}/{pod.name}", cs.name
    waiting, terminated, running = cs.state.waiting, cs.state.terminated, cs.state.running
    last = cs.last_state.terminated
    restarts = cs.restarts
    reason = waiting.reason if waiting else ""
    if reason in IMAGE_REASONS:
        message = waiting.message or _latest(events, "Failed", "Failed to pull image")
        return Cause("image", reason, where, message, container=name, image=image,
                     image_origin=image_origins.get(image, ""), final=reason == "InvalidImageName")
    if reason in CONFIG_REASONS:
        return Cause("config", reason, where, waiting.message, container=name)
    crashed = terminated if terminated and terminated.exit_code else last
    if reason == "CrashLoopBackOff" or (terminated and terminated.exit_code) or \
            (running and not cs.ready and restarts and last and last.exit_code):
        code = crashed.exit_code if crashed else None
        # The crashed container's log: the previous one while it waits to restart, else its own.
        found = log_cause(pod.name, name, waiting is not None)
        if found is not None:
            return _from_log(found, where, name, exit_code=code, restarts=restarts)
        why = (crashed.reason if crashed else "") or "Error"
        # The container's termination message when it wrote one; its log lines say the rest.
        return Cause("crash", reason or why, where, crashed.message if crashed else "", container=name,
                     exit_code=code, restarts=restarts, log=previous_log(pod.name, name),
                     final=reason == "CrashLoopBackOff" and restarts >= CRASH_LOOP_RESTARTS)
    if reason in ("ContainerCreating", "PodInitializing"):
        mount = _latest(events, "FailedMount")
        return Cause("mount", "FailedMount", where, mount, container=name) if mount else None
    if running and not cs.ready:
        found = log_cause(pod.name, name, False)
        if found is not None:
            return _from_log(found, where, name)
        probe = _latest(events, "Unhealthy", "Readiness probe")
        if probe:
            return Cause("not-ready", "Unhealthy", where, probe, container=name)
    return None


def _from_log(found: LogCause, where: str, container: str, **state: Any) -> Cause:
    return Cause("log", found.reason, where, found.message, container=container, log=[found.line] if found.line else [],
                 final=found.final, **state)


def _merge(causes: list[Cause]) -> list[Cause]:
    """Replicas failing the same way are one cause (with a count), final first."""
    merged: dict[tuple, Cause] = {}
    for cause in causes:
        key = (cause.kind, cause.reason, cause.container, cause.image, cause.exit_code,
               "" if cause.kind in ("crash", "unschedulable", "not-ready") else cause.message)
        if key in merged:
            merged[key].pods += 1
            merged[key].final = merged[key].final or cause.final
        else:
            merged[key] = cause
    return sorted(merged.values(), key=lambda c: not c.final)


# -- Deployments and Services ------------------------------------------------------------------
def _begin(cluster: Cluster, kind: str, resource: tuple[str, str, str], namespace: str, name: str,
           logs: bool, read: Callable[[dict], Any],
           explain_log: LogExplainer | None = None) -> tuple[Diagnosis, _Reader, Any]:
    out = Diagnosis(kind, namespace, name)
    reader = _Reader(cluster, namespace, logs, explain_log)
    obj = cluster.get_or_none(object_path(*resource, namespace, name))
    if obj is None:
        out.causes.append(Cause("missing", "NotFound", out.display, f"the {kind} does not exist"))
        return out, reader, None
    try:
        return out, reader, read(obj)
    except Unreadable as exc:
        out.unreadable.append(str(exc))
        return out, reader, None


def deployment(cluster: Cluster, namespace: str, name: str, *, logs: bool = True,
               image_origins: Mapping[str, str] | None = None, explain_log: LogExplainer | None = None) -> Diagnosis:
    """Why Deployment namespace/name is not rolled out and available (empty causes: none found)."""
    out, read, dep = _begin(cluster, "Deployment", ("apps", "v1", "deployments"), namespace, name, logs,
                            Deployment.read, explain_log)
    if dep is None:
        return out
    causes: list[Cause] = []
    progressing = condition(dep.conditions, "Progressing")
    if progressing.status == "False" and progressing.reason == "ProgressDeadlineExceeded":
        causes.append(Cause("rollout", "ProgressDeadlineExceeded", out.display, progressing.message, final=True))
    selector = selector_query(dep)
    owned = [rs for rs in read.list(ReplicaSet.read, "apps", "v1", "replicasets", {"labelSelector": selector})
             if rs.meta.owned_by(dep.meta.uid)]
    newest = max(owned, key=lambda rs: rs.revision, default=None)
    if newest is not None:
        rs_name = f"ReplicaSet {namespace}/{newest.meta.name}"
        failure = condition(newest.conditions, "ReplicaFailure")
        if failure.status == "True":
            causes.append(Cause("create-failed", failure.reason or "FailedCreate", rs_name, failure.message))
        elif newest.status.replicas < newest.replicas:
            created = _latest(read.events(newest.meta.uid), "FailedCreate")
            if created:
                causes.append(Cause("create-failed", "FailedCreate", rs_name, created))
        pods = [p for p in read.list(Pod.read, "", "v1", "pods", {"labelSelector": selector})
                if p.meta.owned_by(newest.meta.uid) and not p.meta.deleting]
        causes.extend(_pods_causes(read, pods, image_origins, out))
    out.causes = _merge(causes)
    out.unreadable = read.unreadable
    return out


def _pods_causes(read: _Reader, pods: list[Pod], image_origins: Mapping[str, str] | None,
                 out: Diagnosis) -> list[Cause]:
    causes = []
    for pod in sorted(pods, key=lambda p: p.name):
        out.pods.append(pod.name)
        causes.extend(pod_causes(pod, read.events(pod.meta.uid), read.previous_log, image_origins, read.log_cause))
    return causes


def service(cluster: Cluster, namespace: str, name: str, *, logs: bool = True,
            image_origins: Mapping[str, str] | None = None, explain_log: LogExplainer | None = None) -> Diagnosis:
    """Why Service namespace/name has no ready endpoint: the pods that back it and, for each that
    is not ready, why."""
    out, read, svc = _begin(cluster, "Service", ("", "v1", "services"), namespace, name, logs, Service.read,
                            explain_log)
    if svc is None:
        return out
    if not svc.selector:
        out.causes.append(Cause("no-endpoint", "NoSelector", out.display,
                                "the Service has no selector, so nothing publishes its endpoints"))
        return out
    query = ",".join(f"{k}={v}" for k, v in sorted(svc.selector.items()))
    pods = [p for p in read.list(Pod.read, "", "v1", "pods", {"labelSelector": query}) if not p.meta.deleting]
    if not pods:
        out.causes.append(Cause("no-endpoint", "NoPods", out.display, f"no pod matches its selector {query}"))
    causes = _pods_causes(read, pods, image_origins, out)
    if pods and not causes and all(condition(p.conditions, "Ready").status == "True" for p in pods):
        ports = ", ".join(p.target for p in svc.ports)
        causes.append(Cause("no-endpoint", "NoReadyEndpoint", out.display,
                            f"its pods are ready, but no EndpointSlice lists them as ready for target port(s) {ports} "
                            "(a port the pods do not declare, or a mesh sidecar in front of the port)"))
    out.causes.extend(_merge(causes))
    out.unreadable = [*out.unreadable, *read.unreadable]
    return out


def lines(diagnoses: list[Diagnosis], limit: int = TEXT_CAUSES) -> list[str]:
    """Text for several diagnoses: a Service whose pods a Deployment above already explained
    says only which pods back it."""
    out: list[str] = []
    explained: set[str] = set()
    for diag in diagnoses:
        if diag.kind == "Service" and diag.pods and set(diag.pods) <= explained:
            out.append(f"{diag.display}: no ready endpoint; backed by pod(s) {', '.join(diag.pods)} (see above)")
            continue
        out.extend(diag.lines(limit))
        explained.update(diag.pods)
    return out


def cause_lines(cause: dict) -> list[str]:
    """The text of a cause as -o json holds it."""
    return Cause.from_dict(cause).lines()
