"""Hypothesis strategies for the patch-sequence fuzzer (test_kustomize_patch_differential):
a resource and a sequence of strategic merge and JSON 6902 patches over it, written out as a
kustomization.

Resources are Deployment-, CRD-, ConfigMap- and custom-kind-shaped (the custom kind embeds a
Deployment by apiVersion and kind, whose schema kyaml then uses). Their lists merge by `name`,
`containerPort` + `protocol`, `mountPath` and `uid`, or not at all (args, tolerations,
versions), or as primitives (finalizers); values come from small pools, so elements share keys
(duplicates) and patches meet what they patch. Maps hold nulls in every spelling (Null), empty
values and empty collections.

A strategic merge patch is a random part of the same shape, with nulls (deletions), `$patch`
directives on maps, list elements and whole lists, `$setElementOrder/…`, `$retainKeys` and
`$deleteFromPrimitiveList/…`. A JSON 6902 patch adds (also `…/-`, duplicating an element),
removes, replaces, copies, moves and tests at paths of the resource as generated.
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass

from hypothesis import strategies as st


class Null:
    """A null, written as `text` (`null`, `~`, `Null`, or nothing)."""

    __slots__ = ("text",)

    def __init__(self, text: str):
        self.text = text

    def __repr__(self) -> str:
        return f"Null({self.text!r})"

    def __eq__(self, other) -> bool:
        return isinstance(other, Null) and other.text == self.text

    __hash__ = None


NULL = st.sampled_from([Null("null"), Null("~"), Null(""), Null("Null")])


class Flow(dict):
    """A map of scalars written in flow style (`{a: 1, b: }`)."""


class Dup(dict):
    """A map of non-null scalars written with its first key twice. (A null written twice in
    annotations that a merge uncovers and a JSON patch then spells is not followed: the reader
    keeps the text of a later annotation, not its null.)"""


# -- the shape of resources ---------------------------------------------------------------------

@dataclass(frozen=True)
class Scalar:
    values: tuple


@dataclass(frozen=True)
class Map:
    fields: tuple  # (name, spec), ...
    required: tuple = ()
    likely: tuple = ()  # there three times in four (the rest: one time in two)


@dataclass(frozen=True)
class Free:
    """A map of free keys (labels, annotations, data)."""
    keys: tuple
    values: tuple


@dataclass(frozen=True)
class Keyed:
    """A list that merges by `keys` (the first is the merge key)."""
    keys: tuple
    element: Map


@dataclass(frozen=True)
class Plain:
    """A list that does not merge."""
    element: object


@dataclass(frozen=True)
class Prim:
    """A list of scalars that merges (finalizers)."""
    values: tuple


WORD = Scalar(("a", "web", "x", "v1", "true", "1", "", "null", "a b", "x: y", "0x1F"))
BOOL = Scalar((True, False, "true"))
INT = Scalar((0, 1, 3, "3"))
LABELS = Free(("app", "tier", "team"), ("web", "db", "", "1"))
ANNOTATIONS = Free(("cert-manager.io/inject-ca-from", "note", "x.io/y"),
                   ("ns/cert", "", "1.50", "true", "a: b"))
FINALIZERS = Prim(("a.io/f", "b.io/g", "x"))
OWNER = Map((("uid", Scalar(("u1", "u2"))), ("kind", WORD), ("name", WORD)), ("uid",))
METADATA = Map((("labels", LABELS), ("annotations", ANNOTATIONS), ("finalizers", FINALIZERS),
                 ("ownerReferences", Keyed(("uid",), OWNER))), likely=("labels", "annotations"))
ENV = Map((("name", Scalar(("METRICS_ADDR", "ENABLE_LEADER_ELECTION", "LOG"))), ("value", WORD),
           ("valueFrom", Map((("fieldRef", Map((("fieldPath", WORD),))),)))), ("name",))
PORT = Map((("containerPort", Scalar((8080, 8443, 9090, "8080"))), ("protocol", Scalar(("TCP", "UDP"))),
            ("name", WORD)), ("containerPort",))
MOUNT = Map((("mountPath", Scalar(("/etc/a", "/var/b", "/tmp"))), ("name", Scalar(("certs", "config"))),
             ("readOnly", BOOL)), ("mountPath",))
CONTAINER = Map((
    ("name", Scalar(("manager", "proxy", "init"))), ("image", Scalar(("img:1", "img:2", "other"))),
    ("args", Plain(WORD)), ("env", Keyed(("name",), ENV)),
    ("ports", Keyed(("containerPort", "protocol"), PORT)), ("volumeMounts", Keyed(("mountPath",), MOUNT)),
    ("resources", Map((("limits", Free(("cpu", "memory"), ("1", "2Gi", ""))),))),
), ("name",), ("env", "ports", "volumeMounts"))
VOLUME = Map((("name", Scalar(("certs", "config", "data"))), ("emptyDir", Map((("medium", WORD),))),
              ("configMap", Map((("name", WORD),)))), ("name",))
TOLERATION = Map((("key", WORD), ("operator", Scalar(("Exists", "Equal"))), ("value", WORD)))
POD = Map((
    ("containers", Keyed(("name",), CONTAINER)), ("initContainers", Keyed(("name",), CONTAINER)),
    ("volumes", Keyed(("name",), VOLUME)), ("tolerations", Plain(TOLERATION)),
    ("nodeSelector", LABELS), ("serviceAccountName", WORD),
), ("containers",), ("volumes",))
DEPLOYMENT_SPEC = Map((
    ("replicas", INT), ("paused", BOOL), ("selector", Map((("matchLabels", LABELS),))),
    ("strategy", Map((("type", Scalar(("Recreate", "RollingUpdate"))),))),
    ("template", Map((("metadata", Map((("labels", LABELS), ("annotations", ANNOTATIONS)))),
                      ("spec", POD)), ("spec",))),
), ("template",))
CRD_SPEC = Map((
    ("group", Scalar(("example.com",))), ("scope", Scalar(("Namespaced", "Cluster"))),
    ("names", Map((("kind", WORD), ("plural", WORD), ("shortNames", Plain(WORD))))),
    ("versions", Plain(Map((("name", Scalar(("v1", "v1beta1"))), ("served", BOOL), ("storage", BOOL))))),
    ("conversion", Map((("strategy", Scalar(("Webhook", "None"))),
                        ("webhook", Map((("clientConfig", Map((("service", Map((
                            ("name", WORD), ("namespace", WORD), ("path", WORD)))),))),
                            ("conversionReviewVersions", Plain(WORD)))))))),
), likely=("names", "versions"))
KINDS = {
    "Deployment": ("apps/v1", (("spec", DEPLOYMENT_SPEC),)),
    "CustomResourceDefinition": ("apiextensions.k8s.io/v1", (("spec", CRD_SPEC),)),
    "ConfigMap": ("v1", (("data", Free(("a.conf", "b", "KEY"), ("v", "", "1", "null"))),
                         ("immutable", BOOL))),
    # No schema of its own: its embedded Deployment (apiVersion and kind) brings one.
    "Thing": ("example.com/v1", (("spec", Map((
        ("template", Map((("apiVersion", Scalar(("apps/v1",))), ("kind", Scalar(("Deployment",))),
                          ("spec", DEPLOYMENT_SPEC)), ("apiVersion", "kind"), ("spec",))),
        ("items", Plain(Map((("name", WORD), ("value", WORD))))),
    ), likely=("template",))),)),
}


def _odds(n: int, of: int):
    """True n times in `of` (False for the simplest draw, which hypothesis favours)."""
    return st.integers(0, of - 1).map(lambda i: i >= of - n)


# -- resources ----------------------------------------------------------------------------------

@functools.cache
def value(spec, depth: int = 0):
    """A value of `spec` as a resource holds it: now and then a null or an empty one."""
    empty = st.just({}) if isinstance(spec, (Map, Free)) else \
        st.just([]) if isinstance(spec, (Keyed, Plain, Prim)) else st.just("")
    usual = _value(spec, depth)
    return st.one_of(*[usual] * 12, NULL, NULL, empty)


@functools.cache
def _value(spec, depth: int):
    if isinstance(spec, Scalar):
        return st.sampled_from(spec.values)
    if isinstance(spec, Free):
        return st.tuples(st.dictionaries(st.sampled_from(spec.keys),
                                         st.sampled_from(spec.values) | NULL, min_size=1, max_size=3),
                         st.integers(0, 39)).map(
            lambda t: t[0] if not t[0] or t[1] < 28 else Flow(t[0]) if t[1] < 39
            else Dup(t[0]) if not any(isinstance(v, Null) for v in t[0].values()) else t[0])
    if isinstance(spec, Map):
        return _map(spec, depth)
    if isinstance(spec, Keyed):
        return st.lists(_element(spec.element, depth), min_size=1, max_size=4)
    if isinstance(spec, Plain):
        return st.lists(_value(spec.element, depth + 1) | NULL, min_size=1, max_size=3)
    if isinstance(spec, Prim):
        return st.lists(st.sampled_from(spec.values), min_size=1, max_size=4)
    raise TypeError(spec)


@functools.cache
def _map(spec: Map, depth: int):
    return _fields(spec, spec.required, depth, lambda s: _value(s, depth + 1),
                   lambda s: value(s, depth + 1))


_SKIP = object()


def _fields(spec: Map, required: tuple, depth: int, of_required, of_other):
    """A map of `spec`'s fields: `required` ones always, likely ones mostly, others maybe."""
    always = {n: of_required(s) for n, s in spec.fields if n in required}
    for n, s in spec.fields:
        if n in spec.likely and n not in required:
            other = of_other(s)
            always[n] = st.one_of(other, other, other, st.just(_SKIP))
    optional = {n: of_other(s) for n, s in spec.fields if n not in required and n not in spec.likely}
    return st.fixed_dictionaries(always, optional=optional).map(
        lambda m: {k: v for k, v in m.items() if v is not _SKIP})


@functools.cache
def _element(spec: Map, depth: int):
    """A list element: now and then without its key, or a null."""
    whole = _map(spec, depth + 1)
    keyless = st.fixed_dictionaries({}, optional={n: value(s, depth + 1) for n, s in spec.fields
                                                  if n not in spec.required})
    return st.one_of(whole, whole, whole, whole, whole, whole, whole, whole, keyless, NULL)


@st.composite
def resource(draw, kind: str):
    api, fields = KINDS[kind]
    obj = {"apiVersion": api, "kind": kind, "metadata": draw(_map(METADATA, 0))}
    obj.update(draw(st.fixed_dictionaries({n: _value(s, 1) for n, s in fields})))
    return obj


# -- strategic merge patches --------------------------------------------------------------------

DIRECTIVE = st.sampled_from(["delete", "replace", "merge", "delete", "replace", "bogus"])


@functools.cache
def patch_value(spec, depth: int = 0):
    """A value of `spec` as a patch writes it: now and then a null (a deletion)."""
    usual = _patch(spec, depth)
    return st.one_of(*[usual] * 6, NULL)


@functools.cache
def _patch(spec, depth: int):
    if isinstance(spec, (Scalar, Plain, Prim)):
        base = _value(spec, depth)
        if isinstance(spec, Prim):
            return st.tuples(base, _odds(1, 8), DIRECTIVE).map(
                lambda t: t[0] + [{"$patch": t[2]}] if t[1] else t[0])
        return base
    if isinstance(spec, Free):
        return st.tuples(_value(spec, depth), _odds(1, 10), DIRECTIVE).map(
            lambda t: {**t[0], "$patch": t[2]} if t[1] else t[0])
    if isinstance(spec, Map):
        return _patch_map(spec, depth)
    if isinstance(spec, Keyed):
        return _patch_list(spec, depth)
    raise TypeError(spec)


@st.composite
def _patch_map(draw, spec: Map, depth: int, required: tuple = ()):
    out = draw(_fields(spec, required, depth, lambda s: _value(s, depth + 1),
                       lambda s: patch_value(s, depth + 1)))
    if draw(_odds(1, 6)):
        out["$patch"] = draw(DIRECTIVE)
    for name, s in spec.fields:
        if isinstance(s, Keyed) and draw(_odds(1, 8)):
            key = s.keys[0]
            out[f"$setElementOrder/{name}"] = [
                {key: v} for v in draw(st.lists(st.sampled_from(dict(s.element.fields)[key].values),
                                                max_size=3))]
        if isinstance(s, Prim) and draw(_odds(1, 4)):
            out[f"$deleteFromPrimitiveList/{name}"] = draw(st.lists(st.sampled_from(s.values),
                                                                    max_size=2))
    if draw(_odds(1, 12)):
        out["$retainKeys"] = draw(st.lists(st.sampled_from([n for n, _ in spec.fields]), max_size=2))
    return out


@functools.cache
def _patch_elements(spec: Keyed, depth: int):
    keyed = _patch_map(spec.element, depth + 1, spec.element.required)
    return st.lists(st.one_of(keyed, keyed, keyed.map(lambda m: {**m, "$patch": "delete"}),
                              _patch_map(spec.element, depth + 1)),  # without its key
                    min_size=1, max_size=3)


@st.composite
def _patch_list(draw, spec: Keyed, depth: int):
    items = draw(_patch_elements(spec, depth))
    if draw(_odds(1, 5)):
        items.insert(draw(st.integers(0, len(items))), {"$patch": draw(DIRECTIVE)})
    return items


@st.composite
def sm_patch(draw, kind: str):
    """The body of a strategic merge patch of a `kind` (metadata.name is set when written)."""
    api, fields = KINDS[kind]
    body = {"apiVersion": api, "kind": kind, "metadata": draw(_patch_map(METADATA, 0))}
    body.update(draw(_fields(Map(fields, likely=tuple(n for n, _ in fields)), (), 0,
                             lambda s: _value(s, 1), lambda s: patch_value(s, 1))))
    if draw(_odds(1, 25)):
        body["$patch"] = draw(st.sampled_from(["delete", "replace"]))
    return body


# -- JSON 6902 patches --------------------------------------------------------------------------

def _plain(v):
    """A generated value as JSON data."""
    if isinstance(v, Null):
        return None
    if isinstance(v, dict):
        return {k: _plain(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_plain(x) for x in v]
    return v


def _paths(v, here: str = ""):
    """(path, value) of every node under the document root, and the places to add to."""
    out, adds = [], []
    if isinstance(v, dict):
        for k, x in v.items():
            p = f"{here}/{k.replace('~', '~0').replace('/', '~1')}"
            out.append((p, x))
            sub, sub_adds = _paths(x, p)
            out += sub
            adds += sub_adds
        adds += [(f"{here}/{k}", None) for k in ("added", "note")]
    elif isinstance(v, list):
        for i, x in enumerate(v):
            p = f"{here}/{i}"
            out.append((p, x))
            sub, sub_adds = _paths(x, p)
            out += sub
            adds += sub_adds
        adds.append((f"{here}/-", v[0] if v else None))
        adds.append((f"{here}/0", v[0] if v else None))
    return out, adds


SCALAR_JSON = st.sampled_from(["v", "", "1", 1, True, None])
JSON_VALUE = st.one_of(SCALAR_JSON, st.just({"name": "METRICS_ADDR", "value": "9"}), st.just({}),
                       st.just([]))


@st.composite
def json_patch(draw, obj: dict):
    """JSON 6902 operations at paths of `obj`."""
    data = _plain(obj)
    paths, adds = _paths(data)
    # The object keeps its identity (a JSON patch that takes its name is refused by both).
    paths = [p for p in paths if p[0] != "/metadata"
             and not p[0].startswith(("/apiVersion", "/kind", "/metadata/name"))]
    ops = []
    for _ in range(draw(st.integers(1, 3))):
        op = draw(st.sampled_from(["add", "add", "remove", "replace", "copy", "move", "test"]))
        if op == "add" and adds:
            where, like = draw(st.sampled_from(adds))
            # Adding a copy of a list's first element (changed or not) makes duplicates; into
            # a list of maps mostly maps go, sometimes a scalar (which kubectl's name references
            # refuse to walk through, as trainerctl's do).
            like_it = st.one_of(st.just(like), st.just(like).map(_changed))
            if _in_map_list(where):
                a_map = like_it if isinstance(like, dict) else st.just({"name": "LOG"})
                new = draw(st.one_of(a_map, a_map, a_map, SCALAR_JSON))
            else:
                new = draw(st.one_of(JSON_VALUE, like_it))
            ops.append({"op": "add", "path": where, "value": new})
        elif op in ("remove", "replace", "test") and paths:
            where, old = draw(st.sampled_from(paths))
            if op == "remove":
                ops.append({"op": "remove", "path": where})
            elif op == "test":
                ops.append({"op": "test", "path": where, "value": old})
            else:
                # mostly of the same kind; a map or list turned scalar sometimes (name
                # references refuse to walk through it)
                new = st.just(old).map(_changed)
                same_kind = isinstance(old, (dict, list)) or _in_map_list(where)
                ops.append({"op": "replace", "path": where,
                            "value": draw(st.one_of(new, new, new, st.just(None), SCALAR_JSON) if same_kind
                                          else st.one_of(SCALAR_JSON, new))})
        elif op in ("copy", "move") and paths and adds:
            source = draw(st.sampled_from(paths))[0]
            keys = [a for a, _ in adds if not a.endswith(("/-", "/0"))]  # (into a map: see add)
            ops.append({"op": op, "from": source, "path": draw(st.sampled_from(keys or ["/note"]))})
    return ops or [{"op": "add", "path": "/metadata/labels", "value": {"app": "web"}}]


# The lists of maps (by their field names): mostly maps, or nulls, go into them.
MAP_LISTS = frozenset(["containers", "initContainers", "env", "ports", "volumeMounts", "volumes",
                       "ownerReferences", "tolerations", "versions", "items"])


def _in_map_list(path: str) -> bool:
    """Whether `path` names an element (or the end) of one of the MAP_LISTS."""
    parts = path.split("/")
    return len(parts) > 2 and parts[-2] in MAP_LISTS and (parts[-1] == "-" or parts[-1].isdigit())


def _changed(v):
    """`v` changed a little, of the same kind throughout (its first scalar field after the
    key, in a map)."""
    if isinstance(v, dict):
        for k in list(v)[1:]:
            if isinstance(v[k], str):
                return {**v, k: v[k] + "-2"}
        return v
    if isinstance(v, str):
        return v + "-2"
    return v


# -- examples -----------------------------------------------------------------------------------

KIND = st.sampled_from(["Deployment", "Deployment", "Deployment", "CustomResourceDefinition",
                        "ConfigMap", "Thing"])
TARGETS = st.sampled_from(["id", "id", "name", "kind", "labels", "kind+name"])


@st.composite
def example(draw):
    """(resources, patches): resources as (kind, object); patches as ("sm", target, body,
    legacy) or ("json", target, ops, legacy, as_json_text); a target names a resource by index;
    `legacy` puts a patch in patchesStrategicMerge or patchesJson6902 (applied before and after
    `patches`)."""
    kinds = [draw(KIND)]
    if draw(_odds(1, 4)):
        kinds.append(draw(KIND))
    resources = [(k, draw(resource(k))) for k in kinds]
    patches = []
    for _ in range(draw(st.integers(1, 4))):
        which = draw(st.integers(0, len(resources) - 1))
        kind, obj = resources[which]
        if draw(_odds(1, 3)):
            target = draw(TARGETS.filter(lambda t: t != "id"))
            patches.append(("json", (target, which), draw(json_patch(obj)), draw(_odds(1, 8)),
                            draw(st.booleans())))
        else:
            target = draw(TARGETS)
            patches.append(("sm", (target, which), draw(sm_patch(kind)),
                            target == "id" and draw(_odds(1, 6))))
    return resources, patches


# -- writing ------------------------------------------------------------------------------------

_PLAIN = re.compile(r"[A-Za-z][A-Za-z0-9_./-]*\Z")
_NOT_PLAIN = {"true", "false", "null", "yes", "no", "on", "off", "y", "n", "True", "False", "Null",
              "NULL", "Yes", "No", "On", "Off", "Y", "N", "TRUE", "FALSE"}


def _scalar(v) -> str:
    if isinstance(v, Null):
        return v.text
    if v is True:
        return "true"
    if v is False:
        return "false"
    if v is None:
        return "null"
    if isinstance(v, (int, float)):
        return json.dumps(v)
    if _PLAIN.match(v) and v not in _NOT_PLAIN:
        return v
    return json.dumps(v)


def _key(k: str) -> str:
    return k if re.match(r"[$A-Za-z][A-Za-z0-9_./$-]*\Z", k) else json.dumps(k)


def emit(v, indent: int = 0) -> list[str]:
    """Block-style YAML lines of a map or list (nulls as their Null spells them)."""
    pad = " " * indent
    lines = []
    if isinstance(v, dict):
        for k, x in v.items():
            head = f"{pad}{_key(k)}:"
            if isinstance(x, Flow):
                items = ", ".join(f"{_key(fk)}: {_scalar(fv)}" for fk, fv in x.items())
                lines.append(f"{head} {{{items}}}")
            elif isinstance(x, Dup):
                lines.append(head)
                lines += [f"{pad}  {_key(fk)}: {_scalar(fv)}" for fk, fv in [*x.items(), next(iter(x.items()))]]
            elif isinstance(x, (dict, list)) and x:
                lines.append(head)
                lines += emit(x, indent + 2)
            elif isinstance(x, (dict, list)):
                lines.append(f"{head} {'{}' if isinstance(x, dict) else '[]'}")
            else:
                text = _scalar(x)
                lines.append(f"{head} {text}" if text else head)
    else:
        for x in v:
            if isinstance(x, dict) and x:
                sub = emit(x, indent + 2)
                lines.append(f"{pad}- {sub[0].lstrip()}")
                lines += sub[1:]
            elif isinstance(x, list) and x:
                lines.append(f"{pad}-")
                lines += emit(x, indent + 2)
            elif isinstance(x, (dict, list)):
                lines.append(f"{pad}- {'{}' if isinstance(x, dict) else '[]'}")
            else:
                text = _scalar(x)
                lines.append(f"{pad}- {text}" if text else f"{pad}-")
    return lines


def _named(obj: dict, name: str) -> dict:
    out = dict(obj)
    md = out.get("metadata")
    out["metadata"] = {**(md if isinstance(md, dict) else {}), "name": name}
    return out


def _target(ref: tuple, names: list[str], obj: dict) -> dict | None:
    how, index = ref
    if how == "id":
        return None
    name, kind = names[index], obj["kind"]
    return {"name": {"name": name}, "kind": {"kind": kind}, "labels": {"labelSelector": "app=web"},
            "kind+name": {"kind": kind, "name": name}}[how]


def files(ex, prefix: str) -> dict[str, str]:
    """The files of one example: its kustomization, r.yaml and one file per patch."""
    resources, patches = ex
    names = [f"{prefix}-{i}" for i in range(len(resources))]
    out = {"r.yaml": "---\n".join("\n".join(emit(_named(obj, n))) + "\n"
                                  for (_, obj), n in zip(resources, names))}
    fields: dict[str, list[str]] = {"patchesStrategicMerge": [], "patches": [], "patchesJson6902": []}
    for i, p in enumerate(patches):
        ref = p[1]
        obj = resources[ref[1]][1]
        target = _target(ref, names, obj)
        if p[0] == "sm":
            body = _named(p[2], names[ref[1]] if target is None else "any")
            out[f"p{i}.yaml"] = "\n".join(emit(body)) + "\n"
            field = "patchesStrategicMerge" if p[3] else "patches"
        else:
            out[f"p{i}.yaml"] = (json.dumps(p[2]) if p[4] else "\n".join(emit(p[2]))) + "\n"
            field = "patchesJson6902" if p[3] else "patches"
            if p[3]:  # its target needs a name
                target = {"kind": obj["kind"], "name": names[ref[1]]}
        if field == "patchesStrategicMerge":
            fields[field].append(f"- p{i}.yaml")
        else:
            fields[field].append(f"- path: p{i}.yaml")
            if target is not None:
                fields[field].append(f"  target: {json.dumps(target)}")
    kust = ["resources:", "- r.yaml"]
    for field, lines in fields.items():
        if lines:
            kust += [f"{field}:", *lines]
    out["kustomization.yaml"] = "\n".join(kust) + "\n"
    return out
