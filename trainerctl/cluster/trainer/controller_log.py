"""What Trainer's controller says in its log when it cannot go on, named in one line: the reader
the diagnosis runs over a crashed or not-ready controller's log (manager/diagnose.py LogExplainer)
in install's wait, `status`, `verify` and the support bundle.

Three causes, newest line first, each read from the texts a line holds whatever its format
(zap JSON, klog, plain: manager/log_text.py):

- a stored object it cannot decode: client-go's reflector logs `failed to list *v1alpha1.TrainJob:
  json: cannot unmarshal string into Go struct field Trainer.items.spec.trainer.numProcPerNode of
  type int32`, and the controller never becomes ready. The line names the field, not the object:
  the objects of that kind are listed and those holding that JSON type at that path are named
  (final once one is found: it stays in etcd until someone changes it);
- its configuration rejected: `Unable to load configuration` with `failed to decode config file:
  strict decoding error: unknown field "statusServer"` (a config from another release than the
  image) or `invalid configuration: webhook.port: Invalid value: ...`; the controller exits, so
  this is final;
- a permission it lacks: the API server's `... is forbidden: User "system:serviceaccount:..."
  cannot list resource "..." in API group "..." at the cluster scope` (RBAC drift). A
  SubjectAccessReview asks whether the ServiceAccount still lacks it: final when it does, no
  cause when it no longer does (a binding that had not reached the authorizer yet), named but
  not final when the review cannot be asked.

Every part of a message taken from the log or the server is cut and made printable (safe_text).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Callable, Iterator

from trainerctl.cluster.client.client import Cluster, object_path
from trainerctl.cluster.client.discovery import Discovery, Resource
from trainerctl.cluster.client.views import meta_of, read_each
from trainerctl.cluster.client.views.field_types import shown_value
from trainerctl.cluster.manager.diagnose import LogCause, LogExplainer
from trainerctl.cluster.manager.log_text import texts
from trainerctl.cluster.operations import access
from trainerctl.errors import Interrupted, TrainerctlError, WaitTimeout
from trainerctl.trust.safe_text import clean

UPGRADE_CHECK = "`trainerctl upgrade-check`"
LINE_SHOWN = 400  # of the log text a cause quotes (the error, unwrapped from its line)
NAME_SHOWN = 120  # of each name or field path a message quotes
EXAMPLES = 3  # objects a decode cause names

_DECODE = re.compile(
    r"failed to list (?P<type>\*?(?P<version>\w+)\.(?P<kind>\w+)): json: cannot unmarshal "
    r"(?P<value>string|bool|array|object|number(?: [-+0-9.eE]+)?) into Go struct field "
    r"(?P<struct>\w+)\.(?P<field>[\w.$-]+) of type (?P<gotype>[\w.\[\]*]+)")
_CONFIG = re.compile(r"(?P<op>failed to decode config file|failed to read config file|invalid configuration): "
                     r"(?P<error>.+)")
_UNKNOWN_FIELD = re.compile(r'unknown field "([^"]{1,200})"')
_FORBIDDEN = re.compile(
    r'User "(?P<user>[^"]{1,300})" cannot (?P<verb>[a-z]{1,40}) resource "(?P<resource>[^"]{1,300})" in API group '
    r'"(?P<group>[^"]{0,300})" (?:in the namespace "(?P<namespace>[^"]{1,300})"|at the cluster scope)')


def explainer(cluster: Cluster, trainer_version: str = "") -> LogExplainer:
    """The reader of one controller's log; `trainer_version`: the release it runs, for messages."""
    reader = _Reader(cluster, trainer_version)
    return reader.explain


@dataclass(frozen=True)
class _Rule:
    cues: tuple[str, ...]  # one of them is in the raw line, or the rule is not tried (a cheap filter)
    pattern: re.Pattern
    explain: Callable[["_Reader", re.Match, str], LogCause | None]  # (the match, the text it is in)


class _Reader:
    def __init__(self, cluster: Cluster, trainer_version: str):
        self.cluster = cluster
        self.api = f"the {_v(trainer_version)} API" if trainer_version else "its API"
        self._discovery: Discovery | None = None
        self._reviews: dict[tuple, bool | None] = {}

    def explain(self, lines: list[str]) -> LogCause | None:
        """The newest line that names a cause, as one LogCause; None when none does."""
        tried: set[tuple[str, str]] = set()  # a cause logged again and again is judged once
        self._reviews.clear()  # each look asks afresh: a grant may have arrived since
        for line in reversed(lines):
            rules = [rule for rule in RULES if any(cue in line for cue in rule.cues)]
            for text in reversed(texts(line)) if rules else ():  # the innermost text first: unescaped
                for rule in rules:
                    match = rule.pattern.search(text)
                    if match is None or (rule.pattern.pattern, match.group(0)) in tried:
                        continue
                    tried.add((rule.pattern.pattern, match.group(0)))
                    found = rule.explain(self, match, text)
                    if found is not None:
                        return found
        return None

    # -- a stored object the controller cannot decode --------------------------------------------
    def decode(self, match: re.Match, text: str) -> LogCause | None:
        kind, version, gotype = match["kind"], match["version"], match["gotype"]
        path = match["field"].split(".")
        if path[0] == "items" and len(path) > 1:  # a list's decode: the field of each item
            path = path[1:]
        field = clean(".".join(path), NAME_SHOWN)
        wants = _expected(gotype, match["value"])
        found, more = self._holding(kind, version, path, match["value"])
        if not found:
            return LogCause("CannotDecode", f"the controller cannot read the stored {clean(kind, 60)}s: {field} holds "
                            f"{_a(match['value'])}, {self.api} wants {wants} ({UPGRADE_CHECK} names them)",
                            _cut(text), final=False)
        name, value = found[0]
        others = f" (and {len(found) - 1 + more} more {clean(kind, 60)}(s) like it)" if len(found) + more > 1 else ""
        return LogCause("CannotDecode", f"the controller cannot read {clean(kind, 60)} {name}{others}: {field} is "
                        f"{_shown(value)}, {self.api} wants {wants} ({UPGRADE_CHECK})", _cut(text))

    def _holding(self, kind: str, version: str, path: list[str], value: str) -> tuple[list[tuple[str, Any]], int]:
        """(namespace/name and value of the first objects of `kind` holding a `value`-typed JSON value
        at `path`, how many more do); nothing when they cannot be listed."""
        found: list[tuple[str, Any]] = []
        more = 0
        for res in self._resources(kind, version):
            try:
                items = self.cluster.items(object_path(res.group, res.version, res.resource, None))
            except (Interrupted, WaitTimeout):
                raise
            except TrainerctlError:  # may not list them, or an answer that does not fit: not named
                continue
            for raw in items:
                held = next((v for v in _values(raw, path) if _json_type(v, value)), _NONE)
                if held is _NONE:
                    continue
                metas = read_each(lambda r: meta_of(kind, r), [raw], [])
                if not metas:
                    continue
                if len(found) < EXAMPLES:
                    found.append((clean(metas[0].display, NAME_SHOWN), held))
                else:
                    more += 1
        return found, more

    def _resources(self, kind: str, version: str) -> list[Resource]:
        try:
            if self._discovery is None:
                self._discovery = Discovery(self.cluster)
                self._discovery.refresh()
            return [r for r in self._discovery.all_resources() if r.kind == kind and r.version == version]
        except (Interrupted, WaitTimeout):
            raise
        except TrainerctlError:  # discovery failed: the objects are not named, the field still is
            self._discovery = None
            return []

    # -- its configuration rejected ----------------------------------------------------------------
    def config(self, match: re.Match, text: str) -> LogCause | None:
        error = match["error"]
        unknown = _UNKNOWN_FIELD.findall(error)
        if unknown:
            fields = ", ".join(f'"{clean(f, NAME_SHOWN)}"' for f in unknown[:EXAMPLES])
            more = f" and {len(unknown) - EXAMPLES} more" if len(unknown) > EXAMPLES else ""
            message = (f"the controller rejects its configuration file: unknown field {fields}{more}, which its "
                       "release does not know (are its image and its config from different releases?)")
        elif match["op"] == "failed to read config file":
            message = f"the controller cannot read its configuration file: {clean(error, 300)}"
        else:
            message = f"the controller rejects its configuration: {clean(error, 300)}"
        return LogCause("ConfigRejected", message, _cut(text))

    # -- a permission it lacks ---------------------------------------------------------------------
    def forbidden(self, match: re.Match, text: str) -> LogCause | None:
        user, verb, group = match["user"], match["verb"], match["group"]
        resource, _, subresource = match["resource"].partition("/")
        namespace = match["namespace"] or ""
        key = (user, verb, group, resource, subresource, namespace)
        if key not in self._reviews:
            self._reviews[key] = access.subject_allowed(
                self.cluster, user, access.serviceaccount_groups(user),
                access.Permission(verb, group, resource, namespace), subresource=subresource)
        allowed = self._reviews[key]
        if allowed:
            return None  # it may now: the line is older than the grant (or the binding's arrival)
        what = clean(match["resource"] + (f".{group}" if group else ""), NAME_SHOWN)
        where = f'in namespace {clean(namespace, 80)}' if namespace else "at the cluster scope"
        confirmed = "" if allowed is False else " (the log says so; whether it still does could not be asked)"
        return LogCause("Forbidden", f"the controller may not {verb} {what} {where} (user {clean(user, NAME_SHOWN)}): "
                        f"its RBAC lacks the permission{confirmed}", _cut(text), final=allowed is False)


RULES: tuple[_Rule, ...] = (
    _Rule(("config file", "invalid configuration"), _CONFIG, _Reader.config),
    _Rule(("forbidden",), _FORBIDDEN, _Reader.forbidden),
    _Rule(("cannot unmarshal",), _DECODE, _Reader.decode),
)

_NONE = object()


def _values(data: Any, path: list[str]) -> Iterator[Any]:
    """The values at a Go field path (lists crossed without an index, as Go's decoder names them)."""
    if not path:
        yield data
    elif isinstance(data, list):
        for item in data:
            yield from _values(item, path)
    elif isinstance(data, dict) and data.get(path[0]) is not None:
        yield from _values(data[path[0]], path[1:])


def _json_type(value: Any, described: str) -> bool:
    """Whether a value is of the JSON type Go's decoder described ("string", "number 3000000000")."""
    word, _, literal = described.partition(" ")
    if isinstance(value, bool):
        return word == "bool"
    if isinstance(value, (int, float)):
        if word != "number":
            return False
        try:
            return not literal or float(literal) == value
        except ValueError:
            return False
    return {str: "string", list: "array", dict: "object"}.get(type(value)) == word


def _expected(gotype: str, value: str) -> str:
    base = gotype.lstrip("*")
    if re.fullmatch(r"u?int(8|16|32|64)?", base):
        return f"an integer that fits {base}" if value.startswith("number") else "an integer"
    if re.fullmatch(r"float(32|64)", base):
        return "a number"
    if base == "string":
        return "a string"
    if base == "bool":
        return "true or false"
    if base.startswith("[]"):
        return "a list"
    if base.startswith("map["):
        return "a mapping"
    return f"a {clean(base, 60)}"


def _a(described: str) -> str:
    word = described.split(" ")[0]
    return {"array": "a list", "object": "a mapping", "bool": "true or false"}.get(word, f"a {word}")


def _shown(value: Any) -> str:
    return json.dumps(clean(value, 60), ensure_ascii=False) if isinstance(value, str) else shown_value(value)


def _v(version: str) -> str:
    version = clean(version, 40)
    return version if version.startswith("v") or not (version[:1].isascii() and version[:1].isdigit()) else f"v{version}"


def _cut(text: str) -> str:
    return clean(text, LINE_SHOWN)
