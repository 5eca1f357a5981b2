"""Every field a typed view reads from a server object refuses every wrong JSON type: generated
from the views themselves, not written field by field.

Each view is run on its well-formed sample (tests/engine/test_server_views.py SAMPLES) with a
recording Cursor: every typed read (string, integer, boolean, time, mapping, list, ...) is noted
with where it is in the object and what it declared (required, bounds, a name rule). Then, for
each field so found, the sample is read again with that one field replaced by each value of a
wrong JSON type for it (the strings "false" and "true" where a bool or a number is read, numbers,
lists, objects, numbers past the bounds, 10^400, infinity, a time without its zone, null where the
field is required), and the view must refuse it: `Unreadable` naming that field (or, in a view
that skips the part a field is in, the part's line naming it). A field a new view reads is tested
the day it is written; every place that opens a server object with Cursor.of must be reached.
"""

from __future__ import annotations

import copy
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import pytest

import trainerctl
from tests.engine.test_server_views import SAMPLES
from trainerctl.cluster.client.views import VIEWS, Lease, Unreadable, WebhookConfiguration
from trainerctl.cluster.client.views import field_types
from trainerctl.cluster.client.views.field_types import Cursor
from trainerctl.cluster.trainer.go_operator import TrainerCR
from trainerctl.cluster.trainer.verify.runtimes import Runtime
from trainerctl.cluster.trainer.verify.views import TrainJob, meta
from trainerctl.trust import server_payloads

NS = "opendatahub"
INF = json.loads("1e400")


def _helm(kind: str) -> Callable[[Any], Any]:
    """A Helm record and the release it holds, as install reads both."""
    def read(raw):
        record = VIEWS[kind](raw)
        return record.decoded() if record is not None else None
    return read


def _proved_by_the_one_delete(raw):
    """The live object the one delete proves ownership on: what it read, or the Outcome that
    refuses it (an object that does not fit is refused, its line the Outcome's reason)."""
    from trainerctl.cluster.manager import delete

    target = delete.Target("", "v1", "configmaps", True, NS, "c", "ConfigMap")
    stop, meta, _ = delete._read(None, target, delete.Proof("the test", uid="u"), raw)
    return stop if stop is not None and stop.why.startswith("unreadable ") else meta


@dataclass
class Lines:
    """What a reader that goes on past an object gives instead of raising: its lines."""

    unreadable: list[str]


_CRD = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition", "metadata": {"name": "xs.g"},
        "spec": {"group": "g", "names": {"kind": "X", "plural": "xs"}, "scope": "Namespaced",
                 "versions": [{"name": "v1", "served": True, "storage": True,
                               "schema": {"openAPIV3Schema": {"type": "object"}}}]}}


def _checked_by_upgrade_check(raw):
    """A stored object upgrade-check validates against the target's schema: its metadata by the
    view (one that does not fit is a finding naming it, and the object is not checked)."""
    from trainerctl.upgrade.stored import check_objects

    findings, _ = check_objects([_CRD], [_CRD], {"xs.g": [raw]}, lambda obj: False)
    return Lines([f.detail for f in findings if f.detail.startswith("unreadable ")])


def _upgrade_state_of(raw):
    """A TrainJob's state as upgrade-check's migration says it; one that does not fit is
    'unknown', which the reach test only needs to see read (its fields: Condition's, a bool)."""
    from trainerctl.upgrade.trainer_migration import state_of

    return state_of(raw)


# The client's views, the release inside a Helm record, the Trainer objects verify reads back, the
# metadata the one delete proves on, and the objects upgrade-check reads through the views.
READERS: dict[str, Callable[[Any], Any]] = {
    **VIEWS, "HelmRecord": _helm("HelmRecord"), "HelmRecord (ConfigMap)": _helm("HelmRecord (ConfigMap)"),
    "Lease (metadata)": Lease.read_meta, "TrainJob": TrainJob.read, "Job (metadata)": lambda raw: meta("Job", raw),
    "ClusterTrainingRuntime": Runtime.read, "Trainer (the Go operator's CR)": TrainerCR.read,
    "ValidatingWebhookConfiguration (strict)": lambda raw: WebhookConfiguration.read(raw, strict=True),
    "an object the one delete proves": _proved_by_the_one_delete,
    "an object upgrade-check validates": _checked_by_upgrade_check,
}
# Readers that map a refusal to a value of their own (a state "unknown"): reached by the reach
# test; the fields they read are the views' (Condition, booleans), given every wrong type above.
REACHED_ONLY: dict[str, Callable[[Any], Any]] = {"TrainJob (upgrade-check's state)": _upgrade_state_of}
TEMPLATE = {"metadata": {"labels": {"a": "b"}, "annotations": {"c": "d"}},
            "spec": {"containers": [{"name": "c", "image": "busybox"}], "initContainers": [{"name": "i"}]}}
EXTRA_SAMPLES = {
    "an object upgrade-check validates": {"apiVersion": "g/v1", "kind": "X", "metadata": {
        "name": "x", "namespace": NS, "uid": "u", "labels": {"a": "b"}, "ownerReferences": [{"kind": "K", "uid": "o"}]}},
    "TrainJob (upgrade-check's state)": {"metadata": {"name": "t", "namespace": NS}, "spec": {"suspend": True},
                                         "status": {"conditions": [{"type": "Complete", "status": "False"}]}},
    "an object the one delete proves": {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {
        "name": "c", "namespace": NS, "uid": "u", "resourceVersion": "4", "labels": {"a": "b"},
        "annotations": {"c": "d"}, "finalizers": ["x/y"], "ownerReferences": [{"kind": "K", "name": "n", "uid": "o"}],
        "creationTimestamp": "2026-01-01T00:00:00Z"}},
    "ValidatingWebhookConfiguration (strict)": SAMPLES["ValidatingWebhookConfiguration"],
    "Trainer (the Go operator's CR)": {"metadata": {
        "name": "default-trainer", "uid": "u", "resourceVersion": "3", "finalizers": ["x/cleanup"],
        "deletionTimestamp": "2026-01-01T00:00:00Z", "ownerReferences": [
            {"kind": "DataScienceCluster", "name": "default-dsc", "uid": "d", "controller": True}]},
        "spec": {"appNamespace": "opendatahub"}},
    "Lease (metadata)": SAMPLES["Lease"],
    "TrainJob": {"metadata": {"name": "t", "namespace": NS, "uid": "u"}, "spec": {"runtimeRef": {
        "name": "torch", "kind": "ClusterTrainingRuntime", "apiGroup": "trainer.kubeflow.org"}},
                 "status": {"conditions": [{"type": "Complete", "status": "True", "message": "done"}]}},
    "Job (metadata)": {"metadata": {"name": "j", "namespace": NS, "uid": "u", "labels": {"a": "b"}}},
    "ClusterTrainingRuntime": {"metadata": {"name": "torch", "labels": {"trainer.kubeflow.org/framework": "torch"}},
                               "spec": {"template": {"spec": {"replicatedJobs": [
                                   {"name": "node", "template": {"spec": {"template": TEMPLATE}}}]}}}},
}


def sample(kind: str) -> Any:
    return copy.deepcopy(EXTRA_SAMPLES[kind] if kind in EXTRA_SAMPLES else SAMPLES[kind])


# -- the recording Cursor ---------------------------------------------------------------------------
@dataclass
class Read:
    """One typed read: the mapping it read from, the key, the accessor and its declaration."""

    data: dict
    key: str
    where: str
    how: str
    options: dict


_ACCESSORS = ("string", "integer", "int_or_string", "boolean", "time", "micro_time", "mapping", "mappings",
              "items", "strings", "string_map")


class Recording:
    """Cursor's typed accessors and Cursor.of, wrapped: the outermost call of each is noted
    (micro_time calls time, int_or_string calls integer: one read each)."""

    def __init__(self, monkeypatch):
        self.reads: list[Read] = []
        self.opened: set[tuple[str, int]] = set()
        self._depth = 0
        for name in _ACCESSORS:
            monkeypatch.setattr(Cursor, name, self._wrap(name, getattr(Cursor, name)))
        original_of = Cursor.of.__func__

        def of(cls, kind, raw, *args):
            import sys

            caller = sys._getframe(1)
            self.opened.add((caller.f_code.co_filename, caller.f_lineno))
            return original_of(cls, kind, raw, *args)

        monkeypatch.setattr(Cursor, "of", classmethod(of))
        # A payload decoded twice (a Helm release, the inventory's JSON) is the same object, so a
        # field replaced inside it is what the second read sees.
        self._decoded: dict = {}
        cache = self._decoded

        def cached(data, limit="decoded"):
            key = (bytes(data) if isinstance(data, (bytes, bytearray)) else data, limit)
            if key not in cache:
                cache[key] = server_payloads.load_json(data, limit)
            return cache[key]

        for module in ("helm_record", "inventory"):
            monkeypatch.setattr(f"trainerctl.cluster.client.views.{module}.load_json", cached)

    def _wrap(self, name: str, method):
        recording = self

        def wrapper(cursor: Cursor, key, *args, **kwargs):
            if name == "mapping" and cursor.data.get(key) is None:
                # An absent mapping is read as empty: made present here, so the fields read
                # inside it are in the object and can be replaced there.
                cursor.data[key] = {}
            if recording._depth == 0:
                options = dict(kwargs)
                if name in ("integer", "int_or_string"):
                    options.update(zip(("low", "high", "default"), args))
                recording.reads.append(Read(cursor.data, key, cursor.where(key), name, options))
            recording._depth += 1
            try:
                return method(cursor, key, *args, **kwargs)
            finally:
                recording._depth -= 1
        return wrapper

    def run(self, kind: str, raw: Any) -> list[Read]:
        """The reads of the view on `raw`, a fresh object (its payloads decoded afresh)."""
        self.reads = []
        self._decoded.clear()
        READERS[kind](raw)
        return list(self.reads)


# -- the wrong values for each declared type --------------------------------------------------------
NOT_STRINGS = [True, False, 0, 1, 2.5, [], ["x"], {}, {"a": "b"}]
NOT_BOOLS = ["false", "true", "False", 0, 1, [], [True], {}]
NOT_COLLECTIONS = ["x", "false", 0, 1, True]


def wrong_values(read: Read) -> list[Any]:
    """Values of a wrong JSON type (or out of the declared bounds) for what `read` declared."""
    how, o = read.how, read.options
    if how == "string":
        out = list(NOT_STRINGS)
        if o.get("required"):
            out += [None, ""]
        if o.get("rule") is not None:
            out += ["../x", "UPPER"]
        return out
    if how in ("integer", "int_or_string"):
        low, high = o["low"], o["high"]
        out = [True, False, 2.5, INF, -INF, [], [1], {}, {"n": 1}, low - 1, high + 1, 10 ** 400]
        return out if how == "int_or_string" else out + ["5", "false", "true", str(low)]
    if how == "boolean":
        return NOT_BOOLS
    if how in ("time", "micro_time"):
        return [12345, True, [], {}, "2026-01-01T00:00:00", "2026-01-01 00:00:00Z", "yesterday"]
    if how == "mapping":
        return [*NOT_COLLECTIONS, [], [{"a": "b"}]]
    if how in ("mappings", "items"):
        return [*NOT_COLLECTIONS, {}, {"a": {}}]
    if how == "strings":
        return [*NOT_COLLECTIONS, {}, [1], [True], [["x"]], [{"a": "b"}]]
    if how == "string_map":
        return [*NOT_COLLECTIONS, [], ["a"], {"a": 1}, {"a": True}, {"a": ["b"]}, {"a": {"b": "c"}}]
    raise AssertionError(f"no wrong values for {how}")


def _names_field(exc_or_line: Unreadable | str, where: str) -> bool:
    field = exc_or_line.field if isinstance(exc_or_line, Unreadable) else exc_or_line
    return field == where or field.startswith((where + "[", where + "."))


def _refused(kind: str, raw: Any, where: str) -> str:
    """'' when reading `raw` refuses naming `where`; else what happened instead."""
    try:
        view = READERS[kind](raw)
    except Unreadable as exc:
        return "" if _names_field(exc, where) else f"Unreadable names {exc.field!r}: {exc}"
    # A view that skips the part a field is in names it there; the one delete names it as its reason.
    skipped = getattr(view, "unreadable", ()) or ([view.why] if getattr(view, "why", "") else [])
    if any(f": {where}: expected" in line or f": {where}[" in line or f": {where}." in line for line in skipped):
        return ""
    return f"accepted it ({type(view).__name__})"


# -- the tests ------------------------------------------------------------------------------------------
def _fields(kind: str, monkeypatch) -> list[Read]:
    return Recording(monkeypatch).run(kind, sample(kind))


@pytest.mark.parametrize("kind", sorted(READERS))
def test_every_field_a_view_reads_refuses_every_wrong_type(kind, monkeypatch):
    recording = Recording(monkeypatch)
    reads = recording.run(kind, sample(kind))
    assert reads, f"{kind}: the view read no field"
    problems = []
    for i, read in enumerate(reads):
        for bad in wrong_values(read):
            raw = sample(kind)
            found = recording.run(kind, raw)  # the same reads, on this copy: the i-th is the same field
            target = found[i]
            assert (target.where, target.how) == (read.where, read.how)
            target.data[target.key] = copy.deepcopy(bad)
            problem = _refused(kind, raw, read.where)
            if problem:
                problems.append(f"{kind} {read.where} ({read.how}) = {field_types.shown_value(bad)}: {problem}")
    assert not problems, "\n".join(problems[:40])


@pytest.mark.parametrize("kind", sorted(READERS))
def test_a_null_field_is_read_as_absent_or_refused_by_name(kind, monkeypatch):
    """JSON null is absent (the API's Go decoder reads it so): the view reads its default, or the
    field is required and the view names it; never another field, never another exception."""
    recording = Recording(monkeypatch)
    reads = recording.run(kind, sample(kind))
    for i, read in enumerate(reads):
        raw = sample(kind)
        target = recording.run(kind, raw)[i]
        target.data[target.key] = None
        try:
            READERS[kind](raw)
        except Unreadable as exc:
            assert _names_field(exc, read.where), (kind, read.where, str(exc))


def test_every_cursor_opened_on_a_server_object_is_reached(monkeypatch):
    """Each place that opens a server object with Cursor.of is one of the views above, so no
    view escapes the generated tests."""
    recording = Recording(monkeypatch)
    for kind in READERS:
        recording.run(kind, sample(kind))
    for kind, read in REACHED_ONLY.items():
        read(sample(kind))
    root = Path(trainerctl.__file__).resolve().parent
    sites = {(str(path), n) for path in root.rglob("*.py")
             for n, line in enumerate(path.read_text().splitlines(), 1)
             if re.search(r"\bCursor\.of\(", line) and "def of" not in line}
    reached = {(str(Path(f).resolve()), n) for f, n in recording.opened}
    assert sites and not sites - reached, sorted(sites - reached)


def test_the_recording_sees_the_declarations(monkeypatch):
    """What the generation relies on: a Lease's duration is an integer 1..2^31-1, its holder a
    string; a Pod's container name a required Kubernetes name."""
    lease = {(r.where, r.how): r.options for r in _fields("Lease", monkeypatch)}
    assert lease[("spec.leaseDurationSeconds", "integer")]["low"] == 1
    assert ("spec.holderIdentity", "string") in lease and ("spec.acquireTime", "micro_time") in lease
    pod = {(r.where, r.how): r.options for r in _fields("Pod", monkeypatch)}
    assert pod[("spec.containers[0].name", "string")]["required"] is True
