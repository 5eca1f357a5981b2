"""One command at a time per namespace: a coordination.k8s.io Lease every changing command holds.

CI steps collide (two merges in quick succession, a retried job beside the original). Without a
lock both runs apply, both prune what the other just applied, and both report success. The lock
is the usual Kubernetes one, as controllers use for leader election:

- Taking it: create the Lease, or update one that is released or expired. Every update carries
  the resourceVersion it was computed from, so of two runs taking it at once the server lets
  exactly one win (409 Conflict for the other, which then reads again).
- Holding it: a thread renews it every `renew_every` seconds while the command runs.
- Expiry: a holder that died (kill -9, a lost runner) stops renewing. A waiter takes the Lease once
  it has seen it unchanged for the holder's whole `leaseDurationSeconds`, measured on its own
  clock, so the clocks of two machines are never compared (client-go's leader election does the
  same).
- Releasing it: deleting the Lease, guarded by its resourceVersion, when the command ends, Ctrl-C
  and SIGTERM included (they unwind through the context manager).

Who holds it is lock_holder.py; the Lease as read, for waiting lines and `status`, lock_lease.py.
"""

from __future__ import annotations

import re
import threading
import time
from dataclasses import dataclass
from typing import Callable

from trainerctl.cluster.operations.access import Need, Permission
from trainerctl.cluster.client.client import ApiError, Cluster, object_path
from trainerctl.cluster.client.views import Lease, Unreadable
from trainerctl.cluster.client.views.field_types import INT32
from trainerctl.cluster.manager.delete import Proof, Target, delete
from trainerctl.cluster.operations.lock_holder import Holder, holder_from_env
from trainerctl.cluster.operations.lock_lease import (DURATION_SECONDS, HOLDER_ANNOTATION, MANAGED_BY, NAME, LeaseState,
                                                      format_time, lease_path, shown_time, utc_now)
from trainerctl.cluster.manager.session import Session
from trainerctl.errors import TrainerctlError, WaitTimeout

RENEW_EVERY = 5.0  # several renewals fit in a duration, so a slow API server does not lose the lock
POLL_EVERY = 1.0
REPORT_EVERY = 30.0  # a waiting run says it is still waiting this often
LOCK_DOC = "docs/lock.md#one-run-at-a-time-the-install-lock"


class LockTimeout(WaitTimeout):
    """Nobody changed anything: the holder kept the lock for the whole --lock-timeout."""


class LockLost(TrainerctlError):
    """Another run took the Lease from us (our renewals stopped reaching the API server)."""


def _held_by(state: LeaseState) -> str:
    """Who holds it, as said after the Lease's name."""
    if state.unreadable:
        return f", which cannot be read ({state.unreadable})"
    return f" held by {state.description} {state.since()}"


def _waiting_for(state: LeaseState) -> str:
    if state.unreadable:
        taken = f"taken over once unchanged for {state.duration}s" if state.resource_version else "never taken over"
        return f"it cannot be read ({state.unreadable}), so its holder is unknown ({taken})"
    return f"held by {state.description} {state.since()}"


def _what_to_do(state: LeaseState) -> str:
    if state.unreadable:
        return f"if no run holds it, delete the Lease: {LOCK_DOC}"
    return "wait longer with --lock-timeout"


class LockError(TrainerctlError):
    """The lock could not be taken; `status` is the API server's answer (403: not allowed)."""

    def __init__(self, message: str, status: int):
        super().__init__(message)
        self.status = status


def access_needs(namespace: str, name: str = NAME) -> list[Need]:
    """What taking, renewing and releasing the lock asks of the API server."""
    why = f"the install lock (Lease {namespace}/{name})"
    return [*(Need(Permission(verb, "coordination.k8s.io", "leases", namespace), why)
              for verb in ("get", "create", "update", "delete")),
            Need(Permission("create", "", "namespaces"), f"{why}, on a first install")]


@dataclass
class Acquired:
    """How the lock was taken, for the run's report."""

    waited_seconds: float = 0.0
    waited_for: str = ""  # who held it while we waited
    took_over_from: str = ""  # an expired holder we replaced
    acquire_time: str = ""  # when we took it (our clock), as written into the Lease

    def to_dict(self) -> dict:
        out = {"acquireTime": self.acquire_time, "waitedSeconds": round(self.waited_seconds, 3)}
        if self.waited_for:
            out["waitedFor"] = self.waited_for
        if self.took_over_from:
            out["tookOverFrom"] = self.took_over_from
        return out


class Lock:
    """`with Lock(...).acquire(...)` holds the namespace's install lock for the block.

    `check()` raises LockLost once the renewal thread found the Lease taken by someone else; the
    command calls it before each step that writes, so a run that lost the lock stops instead of
    writing beside the new holder.
    """

    def __init__(self, cluster: Cluster, namespace: str, holder: Holder, *, name: str = NAME,
                 duration: int = DURATION_SECONDS, renew_every: float = RENEW_EVERY, poll_every: float = POLL_EVERY,
                 report_every: float = REPORT_EVERY, on_message: Callable[[str], None] | None = None,
                 ensure_namespace: Callable[[], bool] | None = None, field_manager: str):
        self.cluster = cluster
        self.namespace = namespace
        self.name = name
        self.holder = holder
        self.duration = duration
        self.renew_every = renew_every
        self.poll_every = poll_every
        self.report_every = report_every
        self.on_message = on_message or (lambda _line: None)
        self.ensure_namespace = ensure_namespace
        self.field_manager = field_manager
        self.path = lease_path(namespace, name)
        self.acquired = Acquired()
        self._rv = ""
        self._last: dict | None = None  # the Lease as our last write (or read of it as ours) left it
        self._state_lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._lost = ""
        self.unlocked = False  # the namespace does not exist and we were not to create it
        self.created_namespace = False  # we created the namespace to hold the lock in
        self._acquire_time = ""
        self._transitions = 0

    @property
    def display(self) -> str:
        return f"Lease {self.namespace}/{self.name}"

    # -- taking it ---------------------------------------------------------------------
    def acquire(self, timeout: float) -> "Lock":
        """Take the lock, waiting up to `timeout` seconds (0: try once). Raises LockTimeout (also
        for a Lease it cannot read), and views.Unreadable (exit 3) for an answer to our own write
        it cannot read."""
        try:
            return self._acquire(timeout)
        except KeyboardInterrupt:
            self._let_go()
            raise
        except Unreadable as exc:
            raise exc.hinted("the install lock cannot be held by it, so this run stopped before changing anything; "
                             f"the Lease expires by itself ({LOCK_DOC})") from None

    def _let_go(self) -> None:
        """Interrupted while taking the lock: our create (or take-over) may have gone through
        before the caller could hold it (the signal came in between, or before its answer was
        read), so a Lease naming us is deleted now instead of being left to expire."""
        try:
            with self._state_lock:
                ours = bool(self._rv)
            if not ours:
                self.cluster.resume()
                current = self.cluster.get_or_none(self.path)
                if current is None:
                    return
                lease = Lease.read(current)
                if lease.holder != self.holder.identity:
                    return
                with self._state_lock:
                    self._rv, self._last = lease.version(), current
            self.release()
        except TrainerctlError:
            pass  # the Lease expires by itself, and the next run says so

    def _acquire(self, timeout: float) -> "Lock":
        started = time.monotonic()
        deadline = started + timeout
        observed: tuple[str, float] | None = None  # (resourceVersion, when we first saw it)
        last_said: tuple[str, float] | None = None
        # Create first: the Lease is deleted at every release, so it is usually absent, and the
        # create is the atomic test (409 when it exists): one round trip where a read, then a
        # create, took two. Only when it exists is it read and judged.
        created = self._create()
        while not created:
            lease = self.cluster.get_or_none(self.path)
            if lease is None:
                if self._create():
                    break
                continue
            try:
                state = LeaseState.of(lease)
            except Unreadable as exc:
                state = LeaseState.unjudged(lease, exc)
            now = time.monotonic()
            if observed is None or observed[0] != state.resource_version or not state.resource_version:
                observed = (state.resource_version, now)  # without a version, no change can be seen (or guarded)
            expired = now - observed[1] >= state.duration
            if (not state.held or expired) and state.resource_version:
                if self._take(state, expired=state.held):
                    break
                continue
            if now >= deadline:
                raise LockTimeout(f"timed out after {timeout:g}s waiting for the install lock ({self.display})"
                                  f"{_held_by(state)}; nothing was changed ({_what_to_do(state)})")
            self.acquired.waited_for = state.description
            if last_said is None or last_said[0] != state.holder or now - last_said[1] >= self.report_every:
                left = deadline - now
                self.on_message(f"waiting for the install lock ({self.display}): {_waiting_for(state)}; waiting up to "
                                f"{left:.0f}s more")
                last_said = (state.holder, now)
            time.sleep(max(0.0, min(self.poll_every, deadline - now, observed[1] + state.duration - now)) or 0.05)
        self.acquired.waited_seconds = time.monotonic() - started
        if self.unlocked:
            return self
        if self.acquired.waited_for and not self.acquired.took_over_from:
            self.on_message(f"took the install lock after waiting {self.acquired.waited_seconds:.0f}s for "
                            f"{self.acquired.waited_for}")
        self._start_renewing()
        return self

    def _body(self, acquire_time: str, transitions: int, rv: str = "") -> dict:
        meta = {"name": self.name, "namespace": self.namespace,
                "labels": {MANAGED_BY[0]: MANAGED_BY[1]},
                "annotations": {HOLDER_ANNOTATION: self.holder.annotation()}}
        if rv:
            meta["resourceVersion"] = rv
        return {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": meta,
                "spec": {"holderIdentity": self.holder.identity, "leaseDurationSeconds": self.duration,
                         "acquireTime": acquire_time, "renewTime": format_time(utc_now()),
                         "leaseTransitions": transitions}}

    def _create(self) -> bool:
        """True when our create won (or there is nothing to lock); False when someone else's did."""
        acquire_time = format_time(utc_now())
        collection = self.path.rsplit("/", 1)[0]
        for attempt in range(2):
            try:
                out = self.cluster.request("POST", collection, body=self._body(acquire_time, 0),
                                           query={"fieldManager": self.field_manager})
            except ApiError as exc:
                if exc.status == 409:
                    return False
                if exc.status == 404 and attempt == 0 and self.ensure_namespace is not None:
                    # A first install: the namespace comes first, then the lock in it.
                    self.created_namespace = bool(self.ensure_namespace())
                    continue
                if exc.status == 404 and self.ensure_namespace is None:
                    # No namespace, so no run can hold a lock in it either (it would have made it).
                    self.unlocked = True
                    return True
                raise LockError(f"cannot take the install lock ({self.display}): {exc}", exc.status) from None
            self._hold(out, acquire_time)
            return True
        return False

    def _take(self, state: LeaseState, *, expired: bool) -> bool:
        """Update a released or expired Lease, guarded by the resourceVersion we judged."""
        acquire_time = format_time(utc_now())
        transitions = min(state.transitions + (1 if state.held else 0), INT32)
        body = self._body(acquire_time, transitions, state.resource_version)
        try:
            out = self.cluster.request("PUT", self.path, body=body, query={"fieldManager": self.field_manager})
        except ApiError as exc:
            if exc.status in (404, 409):
                return False  # released (deleted) or taken meanwhile: judge again
            raise LockError(f"cannot take the install lock ({self.display}): {exc}", exc.status) from None
        if expired and state.unreadable:
            self.acquired.took_over_from = state.description
            self.on_message(f"took over the install lock ({self.display}): it could not be read ({state.unreadable}) "
                            f"and stayed unchanged for {state.duration}s as watched from here, so no run renews it")
        elif expired:
            last = shown_time(state.renewed) if state.renewed else "an unknown time"
            self.acquired.took_over_from = state.description
            self.on_message(f"took over the install lock ({self.display}) from {state.description}: it held it "
                            f"{state.since()} and stopped renewing it (last renewed {last}; not renewed for "
                            f"{state.duration}s as watched from here), so that run is gone")
        self._hold(out, acquire_time)
        return True

    def _hold(self, raw: dict, acquire_time: str) -> None:
        """Remember the Lease our write made. An answer we cannot read (no resourceVersion, say)
        leaves a Lease nobody can renew or release safely: it expires by itself, and this run
        stops with the unreadable line (exit 3)."""
        lease = Lease.read(raw)
        rv = lease.version()
        self.acquired.acquire_time = acquire_time
        with self._state_lock:
            self._rv, self._last = rv, raw
            self._acquire_time = acquire_time
            self._transitions = lease.transitions

    # -- holding it --------------------------------------------------------------------
    def _start_renewing(self) -> None:
        self._stop.clear()
        self._thread = threading.Thread(target=self._renew_loop, name="trainerctl-lock-renewal", daemon=True)
        self._thread.start()

    def _renew_loop(self) -> None:
        interval = self.renew_every
        while not self._stop.wait(interval):
            try:
                interval = self.renew_every if self.renew() else min(1.0, self.renew_every)
            except Exception:  # noqa: BLE001 - the API server may be briefly unreachable; retry soon
                interval = min(1.0, self.renew_every)
            if self._lost:
                return

    def renew(self) -> bool:
        """One renewal; False when it did not go through (retried sooner). Notes that the lock is
        lost when someone else holds the Lease now."""
        with self._state_lock:
            rv, acquire_time = self._rv, self._acquire_time
        for _ in range(2):
            body = self._body(acquire_time, self._transitions, rv)
            try:
                out = self.cluster.request("PUT", self.path, body=body, query={"fieldManager": self.field_manager})
            except ApiError as exc:
                if exc.status not in (404, 409):
                    return False
                current = self.cluster.get_or_none(self.path)
                if current is None:
                    self._lost = "the Lease was deleted"
                    return False
                try:
                    state = LeaseState.of(current)
                    rv = Lease.read(current).version()
                except Unreadable as exc:  # edited by someone: we can no longer tell that it is ours
                    self._lost = f"the Lease no longer fits ({exc})"
                    return False
                if state.holder != self.holder.identity:
                    self._lost = f"{state.description} holds it now"
                    return False
                continue  # ours still; our last write's answer was lost
            with self._state_lock:
                self._rv, self._last = Lease.read(out).version(), out
            return True
        return False

    def check(self) -> None:
        """Raise LockLost when another run holds the lock now; call before each writing step."""
        if self._lost:
            raise LockLost(f"lost the install lock ({self.display}): {self._lost}; this run's renewals did not "
                           f"reach the API server in time, so it stopped before writing more; re-run to converge")

    # -- releasing it ------------------------------------------------------------------
    def release(self) -> None:
        if self.unlocked:
            return
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=10)
            self._thread = None
        if self._lost:
            return
        # Interrupted (Ctrl-C, SIGTERM): requests in flight were aborted, but the release must
        # still go out, or the next run waits out the whole lease.
        self.cluster.resume()
        with self._state_lock:
            last = self._last
        try:
            target = Target("coordination.k8s.io", "v1", "leases", True, self.namespace, self.name, "Lease")
            delete(self.cluster, target, self._proof(), known=last)
        except ApiError:
            raise  # the server refused (403, 500): said, as every other answer of it
        except TrainerctlError:
            pass  # unreachable now: the Lease expires by itself, and the next run says so

    def _proof(self) -> Proof:
        """Our Lease: our label, its name and namespace, and this run as its holder."""
        def holder(meta, raw: dict) -> str:
            try:
                return "" if Lease.read(raw).holder == self.holder.identity else "another run holds it now"
            except Unreadable as exc:
                return str(exc)

        return Proof("this run's install lock", label=MANAGED_BY[0], value=MANAGED_BY[1], namespace=self.namespace,
                     name=re.compile(re.escape(self.name)), rule=holder, whole=True)

    def __enter__(self) -> "Lock":
        return self

    def __exit__(self, *exc) -> None:
        self.release()


def create_namespace(session: Session) -> bool:
    """The session's namespace, which a first install's lock goes into (bare: the install labels it
    later); True when this call created it."""
    cluster, namespace, field_manager = session.cluster, session.namespace, session.field_manager
    body = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}}
    try:
        cluster.request("POST", object_path("", "v1", "namespaces", None), body=body,
                        query={"fieldManager": field_manager})
        return True
    except ApiError as exc:
        if exc.status != 409:
            raise LockError(f"cannot create namespace {namespace} for the install lock: {exc}", exc.status) from None
        return False


def take(session: Session, command: str, *, timeout: float, on_message: Callable[[str], None] | None = None,
         create_missing_namespace: bool = True) -> Lock:
    """The install lock of the session's namespace for one command run, taken (use it as a context
    manager to release it)."""
    ensure = (lambda: create_namespace(session)) if create_missing_namespace else None
    return Lock(session.cluster, session.namespace, holder_from_env(command), on_message=on_message,
                ensure_namespace=ensure, field_manager=session.field_manager).acquire(timeout)
