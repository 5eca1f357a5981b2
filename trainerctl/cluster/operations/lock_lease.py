"""The install lock's Lease as it stands (install_lock.py takes, renews and releases it): its name,
its labels and annotation, its times, and who holds it (LeaseState, for waiting lines and `status`).

Every Lease is read through its view (client/views). A Lease that does not fit (a duration of
"abc", an acquire time without a zone, a list as holder) says nothing about its holder, so it is
held by an unknown holder: a waiting run says so with the unreadable line, and times out like any
other wait (LockTimeout, exit 4, nothing changed). No trainerctl run can renew such a Lease (its
renewal reads the Lease back and loses the lock), so like a dead holder's it is taken over once it
has stayed unchanged for our own DURATION_SECONDS, by an update guarded by its resourceVersion (a
Lease without a readable one is never taken). The answer to our own write must fit (we renew and
release by it): one that does not is views.Unreadable, exit 3. `status` reports the line and goes on.
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass

from trainerctl.cluster.client.client import ApiError, object_path
from trainerctl.cluster.client.views import Lease, Unreadable
from trainerctl.cluster.manager.session import Session
from trainerctl.cluster.operations.lock_holder import Holder
from trainerctl.trust.safe_text import clean
from trainerctl.trust.server_payloads import load_json

NAME = "trainerctl-lock"
MANAGED_BY = ("app.kubernetes.io/managed-by", "trainerctl")
HOLDER_ANNOTATION = "trainerctl.io/lock-holder"
DURATION_SECONDS = 20  # a dead holder blocks others this long at most (client-go: 15)
_MICROTIME = "%Y-%m-%dT%H:%M:%S.%fZ"
_HOLDER_FIELDS = ("user", "host", "command", "token")


@dataclass
class LeaseState:
    """What a Lease says about who holds it (for waiting lines and `status`)."""

    holder: str  # holderIdentity; "" when released
    description: str  # the holder in words (from the annotation, else holderIdentity)
    acquired: _dt.datetime | None
    renewed: _dt.datetime | None
    duration: int
    resource_version: str
    transitions: int = 0
    unreadable: str = ""  # why the Lease says nothing about its holder (unjudged)

    @classmethod
    def unjudged(cls, raw: dict, why: Unreadable) -> "LeaseState":
        """A Lease that does not fit its view: held by an unknown holder for our own duration,
        taken over (guarded by its resourceVersion, when that much is readable) once unchanged
        that long."""
        try:
            version = Lease.read_meta(raw).resource_version
        except Unreadable:
            version = ""
        return cls("?", f"a holder that cannot be read ({why})", None, None, DURATION_SECONDS, version,
                   unreadable=str(why))

    @classmethod
    def of(cls, raw: dict) -> "LeaseState":
        """The state of a Lease as the API answered it; views.Unreadable when it does not fit."""
        lease = Lease.read(raw)
        identity = lease.holder
        description = identity.rsplit(" #", 1)[0]
        try:
            data = load_json(lease.meta.annotations.get(HOLDER_ANNOTATION) or "{}")
        except ValueError:  # server_payloads.Undecodable
            data = None
        # Someone else's Lease of that name, or an edited one, does not fit: holderIdentity still says who.
        if isinstance(data, dict) and all(isinstance(data.get(k), str) for k in _HOLDER_FIELDS) \
                and isinstance(data.get("pid"), int) and isinstance(data.get("ci", ""), str) \
                and data["token"] and identity.endswith("#" + data["token"]):
            description = Holder(data["user"], data["host"], data["pid"], data["command"], data.get("ci", ""),
                                 data["token"]).describe()
        # Server text, shown in every waiting and time-out line: one printable line, cut like any.
        return cls(identity, clean(description), lease.acquired, lease.renewed, lease.duration or DURATION_SECONDS,
                   lease.meta.resource_version, lease.transitions)

    @property
    def held(self) -> bool:
        return bool(self.holder)

    def since(self, now: _dt.datetime | None = None) -> str:
        """'since 2026-08-21T09:40:12Z (35s ago)'; the age is by our clock and only for reading."""
        if self.acquired is None:
            return "since an unknown time"
        age = ((now or utc_now()) - self.acquired).total_seconds()
        return f"since {shown_time(self.acquired)} ({_ago(age)})"

    def to_dict(self) -> dict:
        return {"holder": self.description, "holderIdentity": self.holder,
                "acquireTime": format_time(self.acquired) if self.acquired else "",
                "renewTime": format_time(self.renewed) if self.renewed else "", "leaseDurationSeconds": self.duration}


def utc_now() -> _dt.datetime:
    return _dt.datetime.now(_dt.timezone.utc)


def format_time(t: _dt.datetime) -> str:
    """A MicroTime as the API writes it (UTC)."""
    return t.astimezone(_dt.timezone.utc).strftime(_MICROTIME)


def shown_time(t: _dt.datetime) -> str:
    return t.astimezone(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _ago(seconds: float) -> str:
    seconds = max(0, int(seconds))
    if seconds < 120:
        return f"{seconds}s ago"
    if seconds < 7200:
        return f"{seconds // 60}m ago"
    return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m ago"


def lease_path(namespace: str, name: str = NAME) -> str:
    return object_path("coordination.k8s.io", "v1", "leases", namespace, name)


def read(session: Session, name: str = NAME) -> LeaseState | None:
    """The lock in the session's namespace as it stands (for `status`); None when nobody holds it."""
    try:
        lease = session.cluster.get_or_none(lease_path(session.namespace, name))
    except ApiError as exc:
        if exc.status == 403:
            return None  # may not read Leases: status still reports the rest
        raise
    if lease is None:
        return None
    state = LeaseState.of(lease)  # views.Unreadable: the caller reports it
    return state if state.held else None
