"""Reading YAML with kustomize's exact semantics.

Resources are read as go-yaml v3 reads them (what kustomize parses with): YAML 1.2 booleans
(`yes` stays a string), Go's base-0 integers (`0400` is octal), timestamps that become RFC 3339
strings on the way out, `<<` merge keys, aliases copied. A kustomization file is read as
go-yaml v2 reads it (YAML 1.1 words, a repeated key takes the last value). What kustomize
remembers of the text beyond the value is kept beside it: how a null was written (Mapping),
annotations as text, and the text of labels and data values (Loaded.texts). A resource's
folded (`>`) scalars get the value kustomize prints, which kyaml's write-and-read-back changes
(roundtrip.py). A kustomization file with aliases is held to go-yaml v2's alias ratio, as kubectl
holds it.
"""

from __future__ import annotations

import copy
import math
import re
from collections import namedtuple

import yaml

from trainerctl.kustomize import docsplit, goyaml, roundtrip
from trainerctl.trust.document_bounds import yaml_problem
from trainerctl.kustomize.aliases import (NODE_BUDGET, ExcessiveAliasing, check_alias_budget,
                                          check_alias_ratio, has_anchor, node_count)
from trainerctl.kustomize.errors import KustomizeError
from trainerctl.kustomize.plainstyle import analyze

TYPE_CHECKING = False  # typing costs a tenth of a kustomize run's start-up
if TYPE_CHECKING:
    from typing import Any

_INT_BASE0 = re.compile(
    r"^[-+]?(0[xX][0-9a-fA-F]+|0[oO][0-7]+|0[bB][01]+|0[0-7]*|[1-9][0-9]*)\Z"
)
_YAML_FLOAT = re.compile(r"^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?\Z")
_BASE60 = re.compile(r"^[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?\Z")
_DATE = re.compile(r"^(\d{4})-(\d{1,2})-(\d{1,2})\Z")
_DATETIME = re.compile(
    r"^(\d{4})-(\d{1,2})-(\d{1,2})(?:[Tt]|[ ])(\d{1,2}):(\d{1,2}):(\d{1,2})(\.\d{1,9})?"
    r"(Z|[-+]\d{2}:\d{2})?\Z"
)

_NULLS = frozenset(["", "~", "null", "Null", "NULL"])
_TRUE = frozenset(["true", "True", "TRUE"])
_FALSE = frozenset(["false", "False", "FALSE"])
_SPECIAL_FLOATS = {
    ".nan": math.nan, ".NaN": math.nan, ".NAN": math.nan,
    ".inf": math.inf, ".Inf": math.inf, ".INF": math.inf,
    "+.inf": math.inf, "+.Inf": math.inf, "+.INF": math.inf,
    "-.inf": -math.inf, "-.Inf": -math.inf, "-.INF": -math.inf,
}


def _parse_go_int(text: str) -> int | None:
    """strconv.ParseInt/ParseUint with base 0, after removing underscores."""
    plain = text.replace("_", "")
    if not _INT_BASE0.match(plain):
        return None
    sign = -1 if plain[0] == "-" else 1
    body = plain.lstrip("+-")
    if len(body) > 1 and body[0] == "0" and body[1] in "xX":
        value = int(body[2:], 16)
    elif len(body) > 1 and body[0] == "0" and body[1] in "oO":
        value = int(body[2:], 8)
    elif len(body) > 1 and body[0] == "0" and body[1] in "bB":
        value = int(body[2:], 2)
    elif len(body) > 1 and body[0] == "0":
        value = int(body, 8)
    else:
        value = int(body)
    value *= sign
    # ParseInt's range, then ParseUint's (which takes no sign); beyond both, go-yaml tries a float.
    if -(1 << 63) <= value < (1 << 63) or (value < (1 << 64) and plain[0] not in "+-"):
        return value
    return None


def _go_timestamp(text: str) -> str | None:
    """A YAML timestamp as go-yaml decodes it, printed as Go's JSON encoding of time.Time."""
    m = _DATE.match(text)
    if not m and not _DATETIME.match(text):
        return None
    import datetime  # only for timestamps: rare, and not free to import

    try:
        if m:
            d = datetime.date(int(m[1]), int(m[2]), int(m[3]))
            return d.strftime("%Y-%m-%dT00:00:00Z")
        m = _DATETIME.match(text)
        if not m:
            return None
        dt = datetime.datetime(int(m[1]), int(m[2]), int(m[3]), int(m[4]), int(m[5]), int(m[6]))
    except ValueError:
        return None
    frac = (m[7] or "").rstrip("0")
    if frac == ".":
        frac = ""
    zone = m[8] or "Z"
    if zone == "Z" or m[8] is None:
        zone = "Z"
    elif zone in ("+00:00", "-00:00"):
        zone = "Z"
    return dt.strftime("%Y-%m-%dT%H:%M:%S") + frac + zone


def _resolver(stamp=None):
    """resolve_plain; with `stamp`, a timestamp with a time of day is `stamp(value, text)`."""

    def resolve_plain(text: str) -> Any:
        """The value of an untagged plain scalar under go-yaml v3's rules."""
        if not text:
            return None
        c = text[0]
        if c in "yYnNtTfFoO~":
            if text in _NULLS:
                return None
            if text in _TRUE:
                return True
            if text in _FALSE:
                return False
            return text
        if c == ".":
            if text in _SPECIAL_FLOATS:
                return _SPECIAL_FLOATS[text]
            if re.match(r"^\.[0-9]+([eE][-+]?[0-9]+)?$", text):
                return float(text)
            return text
        if c in "+-0123456789":
            if text in _SPECIAL_FLOATS:
                return _SPECIAL_FLOATS[text]
            if c.isascii() and c.isdigit():
                ts = _go_timestamp(text)
                if ts is not None:
                    return ts if stamp is None or ":" not in text else stamp(ts, text)
            value = _parse_go_int(text)
            if value is not None:
                return value
            plain = text.replace("_", "")
            if _YAML_FLOAT.match(plain):
                value = float(plain)
                # strconv.ParseFloat's range error (1e400): go-yaml keeps the text as a string.
                return text if math.isinf(value) else value
            return text
        if text in _NULLS:
            return None
        return text

    return resolve_plain


resolve_plain = _resolver()


_V2_TRUE = frozenset("y Y yes Yes YES true True TRUE on On ON".split())
_V2_FALSE = frozenset("n N no No NO false False FALSE off Off OFF".split())


def resolve_plain_v2(text: str) -> Any:
    """go-yaml v2 (YAML 1.1): as v3, plus yes/no/on/off/y/n as booleans; a timestamp stays its
    text (v2 decodes one into an interface{} as the string it was)."""
    if text in _V2_TRUE:
        return True
    if text in _V2_FALSE:
        return False
    value = resolve_plain(text)
    return text if value.__class__ is str else value


PLAIN_TAG = "tag:trainerctl,plain"
STR_TAG = "tag:yaml.org,2002:str"
_MAP = "tag:yaml.org,2002:map"
_SEQ = "tag:yaml.org,2002:seq"


class _Composer(yaml.CSafeLoader):
    """libyaml's parser and composer; scalars are resolved by the converter, not by PyYAML."""

    def resolve(self, kind, value, implicit):  # noqa: D401 - PyYAML hook
        # Untagged plain scalars get a private tag so that the converter applies go-yaml v3's
        # rules to them and to nothing else (quoted scalars stay strings).
        if kind is yaml.ScalarNode:
            return PLAIN_TAG if implicit[0] else STR_TAG
        return _MAP if kind is yaml.MappingNode else _SEQ


def compose(text: str) -> yaml.Node | None:
    """The first document of `text` as PyYAML nodes, untagged plain scalars tagged PLAIN_TAG
    and quoted ones STR_TAG; None for no document. Raises yaml.YAMLError."""
    loader = _Composer(text)
    try:
        return loader.get_node() if loader.check_node() else None
    finally:
        loader.dispose()


def _key_string(key: Any, node: yaml.Node) -> str:
    # JSON object keys are strings; kustomize converts every object to JSON.
    if isinstance(key, bool):
        return "true" if key else "false"
    if key is None:
        return "null"
    if isinstance(key, (int, float)):
        return node.value
    raise KustomizeError(f"line {node.start_mark.line + 1}: unsupported mapping key")


_EXPLICIT = {
    "tag:yaml.org,2002:int": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "tag:yaml.org,2002:bool": lambda v: isinstance(v, bool),
    "tag:yaml.org,2002:float": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "tag:yaml.org,2002:null": lambda v: v is None,
}
_MERGE = "<<"
_BLOCK_STYLES = ("|", ">")
_BREAKS = "\n\r\x85\u2028\u2029"
# kustomize (go-yaml v3) refuses documents nested deeper than this.
MAX_DEPTH = 10_000


_OPEN = (None, -1)  # memo marker: this collection is still being converted
class Mapping(dict):
    """A mapping of a resource that kustomize holds in a way a dict does not say. Values written
    as nothing (`key:`, `{key: }`): kustomize keeps such a null's empty text, and that text
    decides what it does with it (kyaml's merge drops it; printed from a flow mapping it is an
    empty string). A key written twice: kyaml reads nodes, so the first is the field (a merge
    reads and sets it), the later ones stay until the object is written out (where go-yaml
    refuses them; annotations are set again first, from the last). Only such mappings are of
    this type."""

    __slots__ = ("bare", "flow", "dups")

    def __init__(self, items=(), bare: frozenset = frozenset(), flow: bool = False,
                 dups: tuple = ()):
        super().__init__(items)
        self.bare = bare  # the keys whose null was written as nothing
        self.flow = flow  # written in flow style ({...})
        self.dups = dups  # ((key, value), ...): the later entries of keys written twice


class Styled(str):
    """A string that a strategic merge left in a node whose style its text would not get: set
    into a field, a value takes the style of the one it replaces (kyaml's FieldSetter). That
    style decides what a later value set there reads back as: a number set where a quoted
    string was is a string. Written out (or through JSON) it is a plain string again."""

    __slots__ = ("quoted",)

    def __new__(cls, value: str, quoted: bool):
        made = super().__new__(cls, value)
        made.quoted = quoted
        return made

    def __deepcopy__(self, memo):
        return self


class _Block(str):
    """A block scalar's value that kyaml's write-and-read-back changes (roundtrip.py), until its
    document knows whether kustomize writes it back: a folded one, or one starting with a tab."""

    __slots__ = ()

    def __deepcopy__(self, memo):
        return self


class _Folded(_Block):
    __slots__ = ()


class _Stamp(str):
    """A timestamp with a time of day, as RFC 3339, keeping its text: written in a flow
    collection go-yaml quotes it (for its colons), and it reads back as that text."""

    def __new__(cls, value: str, text: str):
        made = super().__new__(cls, value)
        made.text = text
        return made

    def __deepcopy__(self, memo):
        return self


def _unmark(value: Any) -> Any:
    """`value` with every _Block a plain string again and every _Stamp its text: go-yaml writes a
    block scalar in a flow collection double-quoted and a timestamp there single-quoted; kustomize
    rebuilds a List's items from JSON, where neither happens (a timestamp stays its text)."""
    if isinstance(value, _Block):
        return str(value)
    if value.__class__ is _Stamp:
        return value.text
    if isinstance(value, dict):
        for k, v in value.items():
            if isinstance(v, (dict, list, _Block, _Stamp)):
                value[k] = _unmark(v)
    elif isinstance(value, list):
        for i, v in enumerate(value):
            if isinstance(v, (dict, list, _Block, _Stamp)):
                value[i] = _unmark(v)
    return value


def _written_back(value: Any, path: str = "") -> None:
    """Give every _Block in the collection `value` the value kustomize prints, or refuse one
    that kubectl fails to write back."""
    items = value.items() if isinstance(value, dict) else enumerate(value)
    for k, v in items:
        if v.__class__ is _Stamp:
            value[k] = str(v)
        elif isinstance(v, _Block):
            if roundtrip.unreadable(v):
                raise KustomizeError(
                    f"{path}{k}: a block scalar whose first line starts with a tab: kubectl writes "
                    "it back with no indentation indicator and then cannot read it (\"found a tab "
                    "character where an indentation space is expected\")")
            value[k] = roundtrip.folded(str(v)) if v.__class__ is _Folded else str(v)
        elif isinstance(v, (dict, list)):
            _written_back(v, f"{path}{k}.")


def _converter(resolve, last_wins: bool, json_keys: bool = False, folds: bool = False,
               flow_questions: bool = False):
    """A function from nodes to plain data. An alias becomes a copy of its anchor's value (as
    kustomize de-anchors), counted against a budget before it is made so that an alias bomb is
    refused early; `<<` merge keys are applied (explicit keys win, then earlier merges).
    `convert.marked` says whether a Mapping was made. With `folds` (a resource, which kyaml
    writes back), a block scalar the round trip may change is a _Block, counted in
    `convert.marks`, except inside flow collections. With `flow_questions` (the text has a
    `?`), each flow collection gets goyaml.check_flow."""
    memo: dict[int, tuple[Any, int]] = {}
    aliased = [0]
    flow_checked: set[int] = set()

    def alias(node, cached):
        value, size = cached
        if size < 0:
            raise KustomizeError(f"line {node.start_mark.line + 1}: anchor value contains itself")
        if size == 0:
            size = node_count(value)
            memo[id(node)] = (value, size)
        aliased[0] += size
        if aliased[0] > NODE_BUDGET:
            raise ExcessiveAliasing(
                f"line {node.start_mark.line + 1}: document contains excessive aliasing "
                f"(aliases expand to more than {NODE_BUDGET} nodes)"
            )
        return copy.deepcopy(value)

    def block(node):
        # Only what the round trip may change is marked: folded values, and literal ones that
        # start with a tab or end in `+` (keep) chomping.
        value = node.value
        if node.style == ">":
            convert.marks += 1
            return _Folded(value)
        if node.style == "|" and value and (value[0] == "\t" or value[-1] in _BREAKS and (
                len(value) == 1 or value[-2] in _BREAKS)):
            convert.marks += 1
            return _Block(value)
        return value

    def scalar(node):
        tag = node.tag
        if tag == PLAIN_TAG:
            return resolve(node.value)
        if tag == STR_TAG or tag not in _EXPLICIT:
            return block(node) if folds and node.style else node.value
        value = resolve(node.value)
        if not _EXPLICIT[tag](value):
            raise KustomizeError(
                f"line {node.start_mark.line + 1}: cannot decode {node.value!r} as {tag[18:]}"
            )
        return float(value) if tag.endswith("float") else value

    ScalarNode, SequenceNode = yaml.ScalarNode, yaml.SequenceNode

    def convert(node):
        if node.__class__ is ScalarNode:
            if node.tag is PLAIN_TAG:
                return resolve(node.value)
            return scalar(node)
        key_id = id(node)
        cached = memo.get(key_id)
        if cached is not None:
            return alias(node, cached)
        memo[key_id] = _OPEN
        if flow_questions and node.flow_style and key_id not in flow_checked:
            goyaml.check_flow(node, flow_checked)
        if node.__class__ is SequenceNode:
            value: Any = [convert(child) for child in node.value]
        else:
            value = mapping(node)
        if convert.marks and node.flow_style:
            value = _unmark(value)
        memo[key_id] = (value, 0)
        return value

    def mapping(node):
        # The hot loop of every load: scalar keys and values are handled here, not by convert.
        result: dict = {}
        merges = None
        bare = dups = None
        for key_node, value_node in node.value:
            if key_node.__class__ is ScalarNode and (key_node.tag is PLAIN_TAG or key_node.tag is STR_TAG):
                if key_node.tag is STR_TAG:
                    key = key_node.value
                elif key_node.value == _MERGE:
                    if merges and folds:
                        raise KustomizeError(f"line {key_node.start_mark.line + 1}: duplicate merge "
                                             "key (kustomize allows one `<<` in a mapping)")
                    merges = (merges or []) + [value_node]
                    continue
                else:
                    key = resolve(key_node.value)
                    if folds and key is not key_node.value:  # not a string, or a timestamp
                        key = _kyaml_key(key, key_node, node is convert.root or (
                            node.flow_style and key.__class__ is _Stamp))
            else:
                key = convert(key_node)
            if key.__class__ is not str:
                if isinstance(key, str):  # a tagged block scalar as a key
                    key = str(key)
                elif folds and key_node.__class__ is ScalarNode:
                    key = _kyaml_key(key, key_node, node is convert.root)
                elif json_keys:
                    key = _json_key(key, key_node)
                elif last_wins and (key is None or key.__class__ is bool):
                    # kubectl fails on such keys later; say why here.
                    raise KustomizeError(
                        f"line {key_node.start_mark.line + 1}: key {key_node.value!r} reads as "
                        f"{'null' if key is None else 'a boolean'} in YAML 1.1; quote it"
                    )
                else:
                    key = _key_string(key, key_node)
            if key in result and not last_wins:
                if not folds:
                    raise KustomizeError(
                        f"line {key_node.start_mark.line + 1}: mapping key {key!r} already defined"
                    )
                dups = (dups or []) + [(key, convert(value_node))]
                continue
            if value_node.__class__ is ScalarNode:
                tag = value_node.tag
                if tag is PLAIN_TAG:
                    value = result[key] = resolve(value_node.value)
                    if value is None and not value_node.value:
                        bare = (bare or set()) | {key}
                    continue
                if tag is STR_TAG:
                    if folds and value_node.style in _BLOCK_STYLES:
                        result[key] = block(value_node)
                    elif folds and value_node.style and not needs_quotes(value_node.value):
                        result[key] = Styled(value_node.value, True)  # quoted without need
                        convert.marked = True
                    else:
                        result[key] = value_node.value
                    continue
            value = result[key] = convert(value_node)
            if value is None and value_node.__class__ is ScalarNode and not value_node.value:
                bare = (bare or set()) | {key}
        for value_node in merges or ():
            sources = value_node.value if value_node.__class__ is SequenceNode else [value_node]
            for source in sources:
                merged = convert(source)
                if not isinstance(merged, dict):
                    raise KustomizeError(
                        f"line {source.start_mark.line + 1}: map merge requires map or sequence "
                        f"of maps as the value"
                    )
                for k, v in merged.items():
                    if k not in result:
                        result[k] = v
                        if k in getattr(merged, "bare", ()):
                            bare = (bare or set()) | {k}
        if bare or dups:
            convert.marked = True
            return Mapping(result, frozenset(bare or ()), bool(node.flow_style), tuple(dups or ()))
        return result

    convert.marked = False
    convert.marks = 0
    convert.root = None  # the document's root mapping, for _kyaml_key
    # The closures refer to each other: what they hold (every collection built, the nodes) lives
    # until the cyclic collector runs, and makes each of its passes longer. Released at once.
    convert.release = memo.clear
    return convert


def _kyaml_key(key: Any, node: yaml.Node, root: bool) -> str:
    """A key that does not read as a string, in a resource: kyaml writes the resource back and
    decodes it into a map of strings, so at the root (or where go-yaml writes it quoted: a
    timestamp with colons in a flow mapping) it is its text; deeper it becomes a non-string key
    that Go's JSON encoder refuses, and a null key fails go-yaml's decoder."""
    text = node.value
    if key is None:
        raise KustomizeError(f"line {node.start_mark.line + 1}: key {text!r} reads as null, which "
                             "kubectl cannot write back; quote it")
    if not root:
        what = "a timestamp" if isinstance(key, str) else f"a {_KEY_KINDS.get(key.__class__, 'non-string')}"
        raise KustomizeError(f"line {node.start_mark.line + 1}: key {text!r} reads as {what}, which "
                             "kubectl cannot write as JSON in a nested mapping; quote it")
    return text


_KEY_KINDS = {bool: "boolean", int: "number", float: "number"}


def _child(node: yaml.Node | None, name: str) -> yaml.Node | None:
    """The mapping value of key `name` in mapping `node`, or None."""
    if node is None or node.__class__ is not yaml.MappingNode:
        return None
    for k, v in node.value:
        if k.__class__ is yaml.ScalarNode and k.value == name:
            return v if v.__class__ is yaml.MappingNode else None
    return None


# The fields kustomize reads as maps of strings (their values' text) when it merges a
# generated object into one read from a file: labels, data, binaryData.
TEXT_FIELDS = (("metadata", "labels"), ("data",), ("binaryData",))


def _source_texts(doc_node: yaml.Node, doc: Any) -> dict | None:
    """Scalars' text where kustomize uses it instead of the value.

    Every annotation becomes a string of its source text (`port: 8080` becomes "8080", `date:
    2001-12-14` stays as written, a mapping or a list ""): annotations are rewritten in place,
    but a null stays one (a patch's deletes the annotation) and its text is returned. For
    TEXT_FIELDS the text of each non-string scalar is returned (of labels, nulls' too: kyaml
    reads a label's text, data's values as values). Texts are {(field, key): (value, text)},
    for a merge or the printed annotations to use while the value is unchanged."""
    if not isinstance(doc, dict) or doc_node.__class__ is not yaml.MappingNode:
        return None
    texts = None
    md = doc.get("metadata")
    ann = md.get("annotations") if isinstance(md, dict) else None
    if isinstance(ann, dict) and ann:
        seen: set = set()
        later = []  # the texts of keys written again
        for k3, v3 in _child(_child(doc_node, "metadata"), "annotations").value:
            if k3.__class__ is not yaml.ScalarNode:
                continue
            if k3.value in seen:
                later.append((k3.value, v3.value if v3.__class__ is yaml.ScalarNode else ""))
                continue
            seen.add(k3.value)
            if v3.__class__ is yaml.ScalarNode and v3.tag == PLAIN_TAG and k3.value in ann:
                if ann[k3.value] is None:
                    texts = texts or {}
                    texts[("annotations", k3.value)] = (None, v3.value)
                else:
                    ann[k3.value] = v3.value
        for k3, v3 in ann.items():
            if isinstance(v3, (dict, list)):
                ann[k3] = ""  # kustomize reads annotations as strings: a collection is none
        if later and isinstance(ann, Mapping):
            ann.dups = tuple(later)
    for path in TEXT_FIELDS:
        node: yaml.Node | None = doc_node
        value: Any = doc
        for name in path:
            node = _child(node, name)
            value = value.get(name) if isinstance(value, dict) else None
        if node is None or not isinstance(value, dict):
            continue
        for k, v in node.value:
            if k.__class__ is yaml.ScalarNode and v.__class__ is yaml.ScalarNode \
                    and v.tag == PLAIN_TAG and k.value in value:
                current = value[k.value]
                if current != v.value and (current is not None or path[-1] == "labels"):
                    texts = texts or {}
                    texts[(path[-1], k.value)] = (current, v.value)
    return texts


_nest_raised = False


def _raise_nest_limit() -> bool:
    """libyaml stops at 1000 levels of nesting; kustomize allows 10000. The limit is a global
    of the libyaml linked into PyYAML's extension, set through its exported setter."""
    global _nest_raised
    if _nest_raised:
        return False
    try:
        import ctypes

        from yaml import _yaml

        ctypes.CDLL(_yaml.__file__).yaml_set_max_nest_level(MAX_DEPTH)
    except (ImportError, OSError, AttributeError):
        return False
    _nest_raised = True
    return True


def load_all(text: str | bytes, source: str = "<input>", *, yaml11: bool = False,
             raw_annotations: bool = False) -> list[Any]:
    """Every document in `text`; empty documents are dropped as kustomize does.

    `yaml11` reads as kustomize reads a kustomization file (go-yaml v2: `yes`/`on` are booleans
    and a repeated key takes the last value); otherwise as it reads resources (go-yaml v3).
    """
    return [d.doc for d in load_documents(text, source, yaml11=yaml11,
                                          raw_annotations=raw_annotations)]


def load_as_json(text: str | bytes, source: str = "<input>") -> Any:
    """The first document as sigs.k8s.io/yaml's YAMLToJSON reads it (kustomize's way into a
    JSON patch): go-yaml v2 values, keys made strings (`true`, `1`), a null key refused."""
    try:
        docs = _load_all(text, resolve_plain_v2, True, False, json_keys=True)
    except KustomizeError as exc:
        raise type(exc)(f"{source}: {exc}") from None
    except yaml.YAMLError as exc:
        raise KustomizeError(f"{source}: not valid YAML: {yaml_problem(exc)}") from None
    return docs[0].doc if docs else None


def _json_key(key: Any, node: yaml.Node) -> str:
    if key is True or key is False:
        return "true" if key else "false"
    if isinstance(key, int):
        return str(key)
    if isinstance(key, float):
        return _go_float32_g(key)
    raise KustomizeError(f"line {node.start_mark.line + 1}: unsupported map key {node.value!r}")


def _go_float32_g(f: float) -> str:
    """strconv.FormatFloat(f, 'g', -1, 32): the shortest text that reads back as the float32."""
    import struct

    if math.isnan(f):
        return ".nan"
    if math.isinf(f):
        return ".inf" if f > 0 else "-.inf"
    f32 = struct.unpack("f", struct.pack("f", f))[0]
    for digits in range(1, 10):
        text = f"{f32:.{digits}g}"
        if struct.unpack("f", struct.pack("f", float(text)))[0] == f32:
            return text
    return f"{f32:g}"


# A document read by load_documents: the value, whether it holds a Mapping (a null written as
# nothing), and its _source_texts (for resources).
Loaded = namedtuple("Loaded", ["doc", "marked", "texts"])


def load_documents(text: str | bytes, source: str = "<input>", *, yaml11: bool = False,
                   raw_annotations: bool = False) -> list[Loaded]:
    """load_all, each document with what kustomize remembers of its text (`raw_annotations`:
    read as a resource, with annotations as text and the texts of _source_texts)."""
    resolve = resolve_plain_v2 if yaml11 else resolve_plain
    while True:
        try:
            return _load_all(text, resolve, yaml11, raw_annotations)
        except KustomizeError as exc:
            raise type(exc)(f"{source}: {exc}") from None
        except yaml.MarkedYAMLError as exc:
            problem = exc.problem or exc.context or "invalid YAML"
            if "nesting depth" in problem and _raise_nest_limit():
                continue
            mark = exc.problem_mark or exc.context_mark
            where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark else ""
            if "nesting depth" in problem:
                problem = f"exceeded max depth of {MAX_DEPTH}"
            raise KustomizeError(f"{source}: not valid YAML: {where}{problem}") from None
        except yaml.YAMLError as exc:  # the reader's: a character a YAML stream may not hold
            raise KustomizeError(f"{source}: not valid YAML: {yaml_problem(exc)}") from None


def _load_all(text, resolve, last_wins: bool, raw_annotations: bool,
              json_keys: bool = False) -> list[Any]:
    """The documents of `text`: a resource file (`raw_annotations`) as kyaml reads it (see
    _load_resources); otherwise libyaml's stream, held to go-yaml v2's alias ratio for a v2 read
    (`last_wins`)."""
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise KustomizeError(f"not valid UTF-8 at byte {exc.start}") from None
    if raw_annotations:
        return _load_resources(text, resolve)
    nodes, text = goyaml.compose(_loader, text, False)
    aliases = has_anchor(text)
    docs = []
    for node in nodes:
        if aliases:
            # go-yaml v2 (kubectl's reader of these files) has its ratio; else our budget
            check_alias_ratio(node, PLAIN_TAG) if last_wins else check_alias_budget(node)
        convert = _converter(resolve, last_wins, json_keys, flow_questions="?" in text)
        doc = convert(node)
        convert.release()
        if doc is not None:
            docs.append(Loaded(doc, convert.marked, None))
    return docs


def _loader(text) -> _Composer:
    loader = _Composer(text)
    # Path resolvers are unused; C builtins make libyaml's per-node callbacks almost free.
    loader.descend_resolver = slice
    loader.ascend_resolver = tuple
    return loader


def _load_resources(text: str, resolve) -> list[Loaded]:
    """A resource file as kyaml's ByteReader reads it: split first (docsplit), the first
    document of each part, its block scalars as kyaml writes them back (roundtrip)."""
    parts = docsplit.split(text)
    docs = []
    for part, line0 in parts:
        try:
            loaded = _load_part(part, resolve, len(parts) == 1)
        except yaml.MarkedYAMLError as exc:
            if not line0:
                raise
            raise yaml.MarkedYAMLError(exc.context, _shifted(exc.context_mark, line0), exc.problem,
                                       _shifted(exc.problem_mark, line0)) from None
        except KustomizeError as exc:
            raise type(exc)(_LINE.sub(lambda m: f"line {int(m[1]) + line0}", str(exc), 1)) \
                from None
        if loaded is not None:
            docs.append(loaded)
    return docs


_LINE = re.compile(r"^line (\d+)")
def _shifted(mark, lines: int):
    # Marks of a part, as lines of the file.
    return None if mark is None else yaml.Mark(mark.name, mark.index, mark.line + lines,
                                               mark.column, None, None)


def _load_part(part: str, resolve, alone: bool) -> Loaded | None:
    nodes, part = goyaml.compose(_loader, part, True, v3=True)
    if not nodes:
        return None
    node = nodes[0]

    def stamp(value: str, text: str) -> _Stamp:
        convert.marks += 1  # settled with the block scalars
        return _Stamp(value, text)

    anchors = has_anchor(part)
    if anchors:
        check_alias_budget(node)
    convert = _converter(_resolver(stamp), False, folds=True, flow_questions="?" in part)
    convert.root = node
    doc = convert(node)
    if anchors and isinstance(doc, (dict, list)):
        _copied_into_flow(node, doc, False)
    texts = _source_texts(node, doc)
    if convert.marks:
        _settle_blocks(doc, node, part, alone)
    convert.root = None
    convert.release()
    return None if doc is None else Loaded(doc, convert.marked, texts)


def _copied_into_flow(node: yaml.Node, value: Any, flow: bool) -> None:
    """A null written as nothing that an alias copies into a flow collection: kyaml writes it
    there as '', an empty string (resource.py does the same for a flow mapping's own, at the
    end, as a strategic merge still treats those as nulls)."""
    if node.__class__ is yaml.SequenceNode:
        inner = flow or bool(node.flow_style)
        for i, child in enumerate(node.value):
            item = value[i] if i < len(value) else None
            if child.__class__ is yaml.ScalarNode:
                if inner and item is None and child.tag is PLAIN_TAG and not child.value:
                    value[i] = ""
            elif isinstance(item, (dict, list)):
                _copied_into_flow(child, item, inner)
    elif node.__class__ is yaml.MappingNode and isinstance(value, dict):
        inner = flow or bool(node.flow_style)
        if inner and isinstance(value, Mapping):
            value.flow = True
        for key_node, value_node in node.value:
            if key_node.__class__ is yaml.ScalarNode and value_node.__class__ is not yaml.ScalarNode:
                item = value.get(key_node.value)
                if isinstance(item, (dict, list)):
                    _copied_into_flow(value_node, item, inner)


def _settle_blocks(doc: Any, node: yaml.Node, part: str, alone: bool) -> None:
    """Block scalars as kustomize prints them. kyaml writes each resource back; but kustomize
    rebuilds the items of a `*List` from JSON, without styles, unless the List is the file's only
    document and its kind `List` (kyaml unwraps those items as they are)."""
    kind = doc.get("kind") if isinstance(doc, dict) else None
    if isinstance(kind, str) and kind.endswith("List") and "items" in doc:
        if not (alone and kind in ("List", "ResourceList")):
            _unmark(doc)
            return
        _written_back(doc)
        return
    if not isinstance(doc, (dict, list)):
        return
    md = doc.get("metadata") if isinstance(doc, dict) else None
    if isinstance(md, dict) and isinstance(md.get("annotations"), dict):
        # kustomize sets annotations again from their text: new nodes, no round trip.
        _unmark(md["annotations"])
    where, last = _last_value(doc)
    kept = isinstance(last, _Block) and roundtrip.keeps_trailing_breaks(
        roundtrip.folded(str(last)) if last.__class__ is _Folded else str(last))
    _written_back(doc)
    if kept and _comment_after(part, node):
        # go-yaml writes a comment after the document's last node with an empty line before it
        # when that node ends at column 0, which a `+` block scalar then reads as its own.
        where[0][where[1]] += "\n"


def _last_value(doc: Any) -> tuple[tuple[Any, Any], Any]:
    """((collection, key), value) of what kyaml writes last in `doc` (merged keys come after a
    mapping's own, as here)."""
    place = (None, None)
    value = doc
    while isinstance(value, (dict, list)) and value:
        key = next(reversed(value)) if isinstance(value, dict) else len(value) - 1
        place, value = (value, key), value[key]
    return place, value


def _comment_after(part: str, root: yaml.Node) -> bool:
    """Whether a comment follows the last thing the first document of `part` holds (its end
    found from libyaml's events: a block collection ends only where the next token begins)."""
    end = 0
    flows: list[bool] = []
    for event in yaml.parse(part, Loader=yaml.CSafeLoader):
        cls = event.__class__
        if cls is yaml.DocumentEndEvent:
            break
        if cls in (yaml.MappingStartEvent, yaml.SequenceStartEvent):
            flows.append(bool(event.flow_style))
        elif cls in (yaml.MappingEndEvent, yaml.SequenceEndEvent):
            if not flows.pop():
                continue
        elif cls not in (yaml.ScalarEvent, yaml.AliasEvent):
            continue
        end = max(end, event.end_mark.index)
    for line in part[end:].splitlines():
        stripped = line.strip(" \t")
        if stripped.startswith("#"):
            return True
        if stripped and stripped != "...":
            return False
    return False


def load(text: str | bytes, source: str = "<input>", *, yaml11: bool = False) -> Any:
    docs = load_all(text, source, yaml11=yaml11)
    if len(docs) > 1:
        raise KustomizeError(f"{source}: expected one YAML document, found {len(docs)}")
    return docs[0] if docs else None


_V2_MAP_HINT = frozenset("yYnNtTfFoO~")
_V2_BOOL_NULL = frozenset(
    "y Y yes Yes YES true True TRUE on On ON n N no No NO false False FALSE off Off OFF "
    "~ null Null NULL .nan .NaN .NAN .inf .Inf .INF +.inf +.Inf +.INF -.inf -.Inf -.INF".split()
)
_GO_FLOAT = re.compile(r"^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?\Z")


def needs_quotes(text: str) -> bool:
    """Whether go-yaml writes the string `text` quoted (or as a block): plain, it would read
    back as something else, or it cannot be plain."""
    if not text or "\n" in text:
        return True
    if resolves_to_non_string_v2(text) or not isinstance(resolve_plain(text), str):
        return True
    return not analyze(text).block_plain


def resolves_to_non_string_v2(s: str) -> bool:
    """go-yaml v2 `resolve("", s)` gives a tag other than !!str (or a base-60 float)."""
    if s == "":
        return True
    c = s[0]
    if c in _V2_MAP_HINT or c == ".":
        if s in _V2_BOOL_NULL:
            return True
        if c == ".":
            return bool(_GO_FLOAT.match(s))
        return False
    if c in "+-0123456789":
        if s in _V2_BOOL_NULL:
            return True
        if c.isascii() and c.isdigit() and (_DATE.match(s) or _DATETIME.match(s)) and _go_timestamp(s):
            return True
        plain = s.replace("_", "")
        if _parse_go_int(s) is not None:
            return True
        if _YAML_FLOAT.match(plain) and not math.isinf(float(plain)):
            return True
        if plain.startswith(("0b", "-0b")):
            return bool(re.match(r"^-?0b[01]+$", plain))
        if ":" in s and _BASE60.match(s):
            return True
    return False
