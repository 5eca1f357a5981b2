"""YAML in and out, with kustomize's exact semantics.

Reading follows go-yaml v3 (what kustomize parses with): YAML 1.2 booleans (`yes` stays a string),
Go's base-0 integers (`0400` is octal), timestamps that become RFC 3339 strings on the way out.

Writing follows what `kustomize build` prints: each object goes through JSON and then go-yaml v2,
so keys are sorted with go-yaml's "natural" order, strings that would read back as something else
are double-quoted, multi-line strings are literal blocks and long plain scalars fold at 80 columns.
The emitter is our own because libyaml's style choices, reached through PyYAML, differ in the
details (quote characters, implicit resolution) from go-yaml v2's.
"""

from __future__ import annotations

import copy
import datetime
import math
import re
from typing import Any, NamedTuple

import yaml

from trainerctl.kustomize.errors import KustomizeError

# ---------------------------------------------------------------- reading

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
    return sign * value


def _go_timestamp(text: str) -> str | None:
    """A YAML timestamp as go-yaml decodes it, printed as Go's JSON encoding of time.Time."""
    m = _DATE.match(text)
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
        if c.isdigit():
            ts = _go_timestamp(text)
            if ts is not None:
                return ts
        value = _parse_go_int(text)
        if value is not None:
            return value
        plain = text.replace("_", "")
        if _YAML_FLOAT.match(plain):
            return float(plain)
        return text
    if text in _NULLS:
        return None
    return text


_V2_TRUE = frozenset("y Y yes Yes YES true True TRUE on On ON".split())
_V2_FALSE = frozenset("n N no No NO false False FALSE off Off OFF".split())


def resolve_plain_v2(text: str) -> Any:
    """go-yaml v2 (YAML 1.1): as v3, plus yes/no/on/off/y/n as booleans."""
    if text in _V2_TRUE:
        return True
    if text in _V2_FALSE:
        return False
    return resolve_plain(text)


_PLAIN_TAG = "tag:trainerctl,plain"
_STR = "tag:yaml.org,2002:str"
_MAP = "tag:yaml.org,2002:map"
_SEQ = "tag:yaml.org,2002:seq"


class _Loader(yaml.CSafeLoader):
    """libyaml's parser and composer; scalars are resolved by `_to_python`, not by PyYAML."""

    def resolve(self, kind, value, implicit):  # noqa: D401 - PyYAML hook
        # Untagged plain scalars get a private tag so that `_to_python` applies go-yaml v3's
        # rules to them and to nothing else (quoted scalars stay strings).
        if kind is yaml.ScalarNode:
            return _PLAIN_TAG if implicit[0] else _STR
        return _MAP if kind is yaml.MappingNode else _SEQ


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
# kustomize (go-yaml v3) refuses documents nested deeper than this.
MAX_DEPTH = 10_000


_OPEN = (None, -1)  # memo marker: this collection is still being converted
# The most nodes aliases may expand to in one document (JSON 6902 copies share the bound).
NODE_BUDGET = 1_000_000


def node_count(value: Any) -> int:
    """How many nodes (maps, lists, scalars) `value` holds."""
    if isinstance(value, dict):
        return 1 + sum(node_count(v) for v in value.values())
    if isinstance(value, list):
        return 1 + sum(node_count(v) for v in value)
    return 1


class Mapping(dict):
    """A mapping with values written as nothing (`key:`, `{key: }`): kustomize keeps such a
    null's empty text, and that text decides what it does with it (kyaml's merge drops it;
    printed from a flow mapping it is an empty string). Only such mappings are of this type."""

    __slots__ = ("bare", "flow")

    def __init__(self, items=(), bare: frozenset = frozenset(), flow: bool = False):
        super().__init__(items)
        self.bare = bare  # the keys whose null was written as nothing
        self.flow = flow  # written in flow style ({...})


def _converter(resolve, last_wins: bool, json_keys: bool = False):
    """A function from nodes to plain data. An alias becomes a copy of its anchor's value (as
    kustomize de-anchors), counted against a budget before it is made so that an alias bomb is
    refused early; `<<` merge keys are applied (explicit keys win, then earlier merges).
    `convert.marked` says whether a Mapping was made."""
    memo: dict[int, tuple[Any, int]] = {}
    aliased = [0]

    def alias(node, cached):
        value, size = cached
        if size < 0:
            raise KustomizeError(f"line {node.start_mark.line + 1}: anchor value contains itself")
        if size == 0:
            size = node_count(value)
            memo[id(node)] = (value, size)
        aliased[0] += size
        if aliased[0] > NODE_BUDGET:
            raise KustomizeError(
                f"line {node.start_mark.line + 1}: document contains excessive aliasing "
                f"(aliases expand to more than {NODE_BUDGET} nodes)"
            )
        return copy.deepcopy(value)

    def scalar(node):
        tag = node.tag
        if tag == _PLAIN_TAG:
            return resolve(node.value)
        if tag == _STR or tag not in _EXPLICIT:
            return node.value
        value = resolve(node.value)
        if not _EXPLICIT[tag](value):
            raise KustomizeError(
                f"line {node.start_mark.line + 1}: cannot decode {node.value!r} as {tag[18:]}"
            )
        return float(value) if tag.endswith("float") else value

    ScalarNode, SequenceNode = yaml.ScalarNode, yaml.SequenceNode

    def convert(node):
        if node.__class__ is ScalarNode:
            if node.tag == _PLAIN_TAG:
                return resolve(node.value)
            return scalar(node)
        key_id = id(node)
        cached = memo.get(key_id)
        if cached is not None:
            return alias(node, cached)
        memo[key_id] = _OPEN
        if node.__class__ is SequenceNode:
            value: Any = [convert(child) for child in node.value]
        else:
            value = mapping(node)
        memo[key_id] = (value, 0)
        return value

    def mapping(node):
        result: dict = {}
        merges = None
        bare = None
        for key_node, value_node in node.value:
            if key_node.__class__ is ScalarNode and key_node.tag in (_STR, _PLAIN_TAG):
                if key_node.tag == _STR:
                    key = key_node.value
                elif key_node.value == _MERGE:
                    merges = (merges or []) + [value_node]
                    continue
                else:
                    key = resolve(key_node.value)
            else:
                key = convert(key_node)
            if key.__class__ is not str:
                if json_keys:
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
                raise KustomizeError(
                    f"line {key_node.start_mark.line + 1}: mapping key {key!r} already defined"
                )
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
        if bare:
            convert.marked = True
            return Mapping(result, frozenset(bare), bool(node.flow_style))
        return result

    convert.marked = False
    return convert


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
    2001-12-14` stays as written): annotations are rewritten in place. For TEXT_FIELDS the
    text of each non-string scalar is returned, {(field, key): (value, text)}, for a merge to
    use while the value is unchanged."""
    if not isinstance(doc, dict) or doc_node.__class__ is not yaml.MappingNode:
        return None
    md = doc.get("metadata")
    ann = md.get("annotations") if isinstance(md, dict) else None
    if isinstance(ann, dict) and ann:
        for k3, v3 in _child(_child(doc_node, "metadata"), "annotations").value:
            if k3.__class__ is yaml.ScalarNode and v3.__class__ is yaml.ScalarNode \
                    and v3.tag == _PLAIN_TAG and k3.value in ann:
                ann[k3.value] = v3.value
    texts = None
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
                    and v.tag == _PLAIN_TAG and k.value in value:
                current = value[k.value]
                if current is not None and current != v.value:
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
        raise KustomizeError(f"{source}: {exc}") from None
    except yaml.YAMLError as exc:
        raise KustomizeError(f"{source}: not valid YAML: {exc}") from None
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


class Loaded(NamedTuple):
    doc: Any
    marked: bool  # holds a Mapping (a null written as nothing)
    texts: dict | None  # _source_texts, for resources


def load_documents(text: str | bytes, source: str = "<input>", *, yaml11: bool = False,
                   raw_annotations: bool = False) -> list[Loaded]:
    """load_all, each document with what kustomize remembers of its text (`raw_annotations`:
    read as a resource, with annotations as text and the texts of _source_texts)."""
    resolve = resolve_plain_v2 if yaml11 else resolve_plain
    while True:
        try:
            return _load_all(text, resolve, yaml11, raw_annotations)
        except KustomizeError as exc:
            raise KustomizeError(f"{source}: {exc}") from None
        except yaml.MarkedYAMLError as exc:
            problem = exc.problem or str(exc)
            if "nesting depth" in problem and _raise_nest_limit():
                continue
            mark = exc.problem_mark or exc.context_mark
            where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark else ""
            if "nesting depth" in problem:
                problem = f"exceeded max depth of {MAX_DEPTH}"
            raise KustomizeError(f"{source}: not valid YAML: {where}{problem}") from None
        except yaml.YAMLError as exc:
            raise KustomizeError(f"{source}: not valid YAML: {exc}") from None


def _load_all(text, resolve, last_wins: bool, raw_annotations: bool,
              json_keys: bool = False) -> list[Any]:
    loader = _Loader(text)
    # Path resolvers are unused; C builtins make libyaml's per-node callbacks almost free.
    loader.descend_resolver = slice
    loader.ascend_resolver = tuple
    try:
        docs = []
        while loader.check_node():
            node = loader.get_node()
            convert = _converter(resolve, last_wins, json_keys)
            doc = convert(node)
            texts = _source_texts(node, doc) if raw_annotations else None
            if doc is not None:
                docs.append(Loaded(doc, convert.marked, texts))
    finally:
        loader.dispose()
    return docs


def load(text: str | bytes, source: str = "<input>", *, yaml11: bool = False) -> Any:
    docs = load_all(text, source, yaml11=yaml11)
    if len(docs) > 1:
        raise KustomizeError(f"{source}: expected one YAML document, found {len(docs)}")
    return docs[0] if docs else None


# ---------------------------------------------------------------- writing

_V2_MAP_HINT = frozenset("yYnNtTfFoO~")
_V2_BOOL_NULL = frozenset(
    "y Y yes Yes YES true True TRUE on On ON n N no No NO false False FALSE off Off OFF "
    "~ null Null NULL .nan .NaN .NAN .inf .Inf .INF +.inf +.Inf +.INF -.inf -.Inf -.INF".split()
)
_GO_FLOAT = re.compile(r"^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?\Z")


def _v2_resolves_to_non_string(s: str) -> bool:
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
        if c.isdigit() and (_DATE.match(s) or _DATETIME.match(s)) and _go_timestamp(s):
            return True
        plain = s.replace("_", "")
        if _INT_BASE0.match(plain):
            return True
        if _YAML_FLOAT.match(plain):
            return True
        if plain.startswith(("0b", "-0b")):
            return bool(re.match(r"^-?0b[01]+$", plain))
        if ":" in s and _BASE60.match(s):
            return True
    return False


_BREAKS = "\r\n\x85\u2028\u2029"
_BLANKZ = " \t\r\n\x85\u2028\u2029"


class _Analysis:
    __slots__ = ("multiline", "block_plain", "single", "block")

    def __init__(self, multiline: bool, block_plain: bool, single: bool, block: bool):
        self.multiline = multiline
        self.block_plain = block_plain
        self.single = single
        self.block = block


_NONPRINTABLE = re.compile("[^\n\x20-\x7e\xa0-\ud7ff\ue000-\ufefe\uff00-\ufffd]")
_ANY_BREAK = re.compile("[\r\n\x85\u2028\u2029]")
_BREAK_SPACE = re.compile("[\r\n\x85\u2028\u2029] ")
_SPACE_BREAK = re.compile(" [\r\n\x85\u2028\u2029]")
# ':' followed by white space or the end, or '#' preceded by white space (not at the start).
_INNER_INDICATOR = re.compile("(?<=.):(?=[ \t\r\n\x85\u2028\u2029]|$)|[ \t\r\n\x85\u2028\u2029]#", re.S)


def _analyze(value: str) -> _Analysis:
    """libyaml's yaml_emitter_analyze_scalar, for block context, done with regexes."""
    if not value:
        return _Analysis(False, True, True, False)
    first = value[0]
    after_first_ws = len(value) == 1 or value[1] in _BLANKZ
    block_indicators = (
        value.startswith(("---", "..."))
        or first in "#,[]{}&*!|>'\"%@`"
        or (first in "?:-" and after_first_ws)
        or _INNER_INDICATOR.search(value) is not None
    )
    special = _NONPRINTABLE.search(value) is not None
    line_breaks = _ANY_BREAK.search(value) is not None
    last = value[-1]
    block_plain = single = block = True
    if first == " " or last == " " or first in _BREAKS or last in _BREAKS:
        block_plain = False
    if last == " ":
        block = False
    if line_breaks:
        block_plain = False
        if _BREAK_SPACE.search(value):
            single = False
        if _SPACE_BREAK.search(value):
            single = block = False
    if special:
        block_plain = single = block = False
    if block_indicators:
        block_plain = False
    return _Analysis(line_breaks, block_plain, single, block)


def _is_printable(ch: str) -> bool:
    return _NONPRINTABLE.match(ch) is None


_ESCAPES = {
    "\0": "0", "\a": "a", "\b": "b", "\t": "t", "\n": "n", "\v": "v", "\f": "f",
    "\r": "r", "\x1b": "e", '"': '"', "\\": "\\", "\x85": "N", "\xa0": "_",
    "\u2028": "L", "\u2029": "P",
}

WIDTH = 80


class _Writer:
    """Block-style emitter state: the output pieces and the current column."""

    __slots__ = ("out", "column")

    def __init__(self) -> None:
        self.out: list[str] = []
        self.column = 0

    def write(self, text: str) -> None:
        self.out.append(text)
        self.column += len(text)

    def newline(self, indent: int) -> None:
        self.out.append("\n" + " " * indent)
        self.column = indent


def _write_plain(w: _Writer, value: str, indent: int, allow_breaks: bool) -> None:
    if not allow_breaks or w.column + len(value) <= WIDTH or " " not in value:
        w.write(value)
        return
    spaces = False
    n = len(value)
    start = 0
    i = 0
    # Fold at a single space once past the width, as libyaml does.
    while i < n:
        ch = value[i]
        if ch == " ":
            if (
                not spaces
                and w.column + (i - start) > WIDTH
                and i + 1 < n
                and value[i + 1] != " "
            ):
                w.write(value[start:i])
                w.newline(indent)
                start = i + 1
            spaces = True
        else:
            spaces = False
        i += 1
    w.write(value[start:])


def _write_single(w: _Writer, value: str, indent: int, allow_breaks: bool) -> None:
    w.write("'")
    spaces = False
    n = len(value)
    buf: list[str] = []
    for i, ch in enumerate(value):
        if ch == " ":
            if (
                allow_breaks
                and not spaces
                and w.column + len("".join(buf)) > WIDTH
                and i != 0
                and i != n - 1
                and value[i + 1] != " "
            ):
                w.write("".join(buf))
                buf = []
                w.newline(indent)
            else:
                buf.append(ch)
            spaces = True
        else:
            buf.append("''" if ch == "'" else ch)
            spaces = False
    w.write("".join(buf))
    w.write("'")


def _escape(ch: str) -> str:
    if ch in _ESCAPES:
        return "\\" + _ESCAPES[ch]
    o = ord(ch)
    if o <= 0xFF:
        return "\\x%02X" % o
    if o <= 0xFFFF:
        return "\\u%04X" % o
    return "\\U%08X" % o


def _write_double(w: _Writer, value: str, indent: int, allow_breaks: bool) -> None:
    w.write('"')
    spaces = False
    n = len(value)
    buf: list[str] = []
    col = w.column
    for i, ch in enumerate(value):
        if not _is_printable(ch) or ch in '"\\' or ch in _BREAKS or ch == "\ufeff":
            e = _escape(ch)
            buf.append(e)
            col += len(e)
            spaces = False
        elif ch == " ":
            if allow_breaks and not spaces and col > WIDTH and i != 0 and i != n - 1:
                w.write("".join(buf))
                buf = []
                w.newline(indent)
                col = indent
                if value[i + 1] == " ":
                    buf.append("\\")
                    col += 1
            else:
                buf.append(ch)
                col += 1
            spaces = True
        else:
            buf.append(ch)
            col += 1
            spaces = False
    w.write("".join(buf))
    w.write('"')


def _write_literal(w: _Writer, value: str, indent: int) -> None:
    hints = "|"
    if value[0] in " \n\x85\u2028\u2029":
        hints += "2"
    if value[-1] not in _BREAKS:
        hints += "-"
    elif len(value) == 1 or value[-2] in _BREAKS:
        hints += "+"
    pad = " " * indent
    parts = []
    for line in value.split("\n"):
        parts.append(pad + line if line else "")
    text = "\n".join(parts)
    # A trailing break is left to whatever comes next, which starts with a line break anyway.
    if text.endswith("\n"):
        text = text[:-1]
    w.out.append(hints + "\n" + text)
    w.column = indent + 1  # never at line start: the next key or item begins a new line


def _go_float(f: float) -> str:
    """A float64 as kustomize prints it: JSON (integral values become ints), then Go's %g."""
    if math.isnan(f) or math.isinf(f):
        raise KustomizeError(f"json: unsupported value: {f}")
    from decimal import Decimal

    if f == int(f) and abs(f) < 1e21:
        # Go writes the shortest digits that read back as f, then zeros: beyond 2**53 that is
        # not int(f) (1.2345678901234567e19 is 12345678901234567000, not ...168).
        return f"{Decimal(repr(f)):f}" if abs(f) > 2 ** 53 else str(int(f))

    sign, digit_tuple, dexp = Decimal(repr(f)).as_tuple()
    digits = "".join(map(str, digit_tuple)).rstrip("0") or "0"
    dexp += len("".join(map(str, digit_tuple))) - len(digits)
    dp = len(digits) + dexp
    exp = dp - 1
    minus = "-" if sign else ""
    if exp < -4 or exp >= 6:  # strconv.FormatFloat(f, 'g', -1, 64) with shortest digits
        mant = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
        return f"{minus}{mant}e{'-' if exp < 0 else '+'}{abs(exp):02d}"
    if dp <= 0:
        return f"{minus}0.{'0' * -dp}{digits}"
    if dp >= len(digits):
        return minus + digits + "0" * (dp - len(digits))
    return f"{minus}{digits[:dp]}.{digits[dp:]}"


def _scalar_text(value: Any) -> str | None:
    """Text of a non-string scalar, or None when `value` is a string."""
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return _go_float(value)
    return None


def _style(s: str, key: bool) -> str:
    """go-yaml v2's requested style, then libyaml's downgrade: '' plain, "'", '"' or '|'."""
    a = _analyze(s)
    if "\n" in s and not key:
        style = "|"
    elif _v2_resolves_to_non_string(s):
        style = '"'
    else:
        style = ""
    if key and a.multiline:
        style = '"'
    if style == "" and (not a.block_plain or (not s and key)):
        style = "'"
    if style == "'" and not a.single:
        style = '"'
    if style == "|" and not a.block:
        style = '"'
    return style


_value_styles: dict[str, str] = {}


def _write_string(w: _Writer, s: str, indent: int, key: bool) -> None:
    if key:
        style = _style(s, True)
    else:
        style = _value_styles.get(s)
        if style is None:
            style = _style(s, False)
            if len(_value_styles) < 200000:
                _value_styles[s] = style
    if style == "":
        _write_plain(w, s, indent, not key)
    elif style == "'":
        _write_single(w, s, indent, not key)
    elif style == '"':
        _write_double(w, s, indent, not key)
    else:
        _write_literal(w, s, indent)


def _key_less_sorted(keys: list[str]) -> list[str]:
    import functools

    return sorted(keys, key=functools.cmp_to_key(_go_key_cmp))


def _go_key_cmp(a: str, b: str) -> int:
    """go-yaml v2's keyList.Less for string keys, as a cmp function."""
    if a == b:
        return 0
    return -1 if _go_key_less(a, b) else 1


def _go_key_less(a: str, b: str) -> bool:
    la, lb = len(a), len(b)
    i = 0
    while i < la and i < lb:
        ca, cb = a[i], b[i]
        if ca == cb:
            i += 1
            continue
        al, bl = ca.isalpha(), cb.isalpha()
        if al and bl:
            return ca < cb
        if al or bl:
            return bl
        an = bn = 0
        if ca == "0" or cb == "0":
            j = i - 1
            while j >= 0 and a[j].isdigit():
                if a[j] != "0":
                    an = bn = 1
                    break
                j -= 1
        ai = i
        while ai < la and a[ai].isdigit():
            an = an * 10 + int(a[ai])
            ai += 1
        bi = i
        while bi < lb and b[bi].isdigit():
            bn = bn * 10 + int(b[bi])
            bi += 1
        if an != bn:
            return an < bn
        if ai != bi:
            return ai < bi
        return ca < cb
    return la < lb


_SIMPLE_KEY = re.compile(r"^[a-z][a-zA-Z]*\Z")
_sorted_cache: dict[tuple, list[str]] = {}


def _sorted_keys(d: dict) -> list[str]:
    keys = tuple(d)
    cached = _sorted_cache.get(keys)
    if cached is None:
        # Lower-initial keys of letters only sort like plain strings; others need go-yaml's order.
        if all(_SIMPLE_KEY.match(k) for k in keys):
            cached = sorted(keys)
        else:
            cached = _key_less_sorted(list(keys))
        if len(_sorted_cache) < 50000:
            _sorted_cache[keys] = cached
    return cached


# Plain keys that need no analysis: the overwhelmingly common case in Kubernetes objects.
_PLAIN_SAFE = re.compile(r"^[A-Za-z_/][A-Za-z0-9_./-]*\Z")
_key_cache: dict[str, str] = {}


def _key_text(k: str) -> str:
    cached = _key_cache.get(k)
    if cached is not None:
        return cached
    if _PLAIN_SAFE.match(k) and not _v2_resolves_to_non_string(k) and len(k) <= 128:
        text = k
    else:
        w = _Writer()
        _write_string(w, k, 0, key=True)
        text = "".join(w.out)
    _key_cache[k] = text
    return text


def _emit_mapping(w: _Writer, d: dict, indent: int, first_inline: bool) -> None:
    """A block mapping whose keys start at column `indent`.

    `first_inline` means the cursor already sits where the first key goes (after "- ").
    """
    out = w.out
    first = True
    for k in _sorted_keys(d):
        if not (first and first_inline):
            out.append("\n" + " " * indent)
        first = False
        kt = _key_text(k)
        out.append(kt)
        out.append(":")
        w.column = indent + len(kt) + 1
        _emit_value(w, d[k], indent, in_mapping=True)


def _emit_sequence(w: _Writer, seq: list, indent: int, first_inline: bool) -> None:
    out = w.out
    first = True
    for item in seq:
        if not (first and first_inline):
            out.append("\n" + " " * indent)
        first = False
        out.append("-")
        w.column = indent + 1
        _emit_value(w, item, indent, in_mapping=False)


def _emit_value(w: _Writer, v: Any, indent: int, in_mapping: bool) -> None:
    """Emit `v` after a "key:" (in_mapping) or a "-" indicator at `indent`."""
    out = w.out
    if isinstance(v, dict):
        if not v:
            out.append(" {}")
            w.column += 3
        elif in_mapping:
            _emit_mapping(w, v, indent + 2, first_inline=False)
        else:
            out.append(" ")
            w.column += 1
            _emit_mapping(w, v, indent + 2, first_inline=True)
    elif isinstance(v, list):
        if not v:
            out.append(" []")
            w.column += 3
        elif in_mapping:
            # Sequences inside mappings are not indented (libyaml's "indentless" sequences).
            _emit_sequence(w, v, indent, first_inline=False)
        else:
            out.append(" ")
            w.column += 1
            _emit_sequence(w, v, indent + 2, first_inline=True)
    elif isinstance(v, str):
        out.append(" ")
        w.column += 1
        if _PLAIN_SAFE.match(v) and len(v) + w.column <= WIDTH:
            if _v2_resolves_to_non_string(v):
                _write_string(w, v, indent + 2, key=False)
            else:
                out.append(v)
                w.column += len(v)
        else:
            _write_string(w, v, indent + 2, key=False)
    else:
        text = _scalar_text(v)
        if text is None:
            raise KustomizeError(f"cannot encode value of type {type(v).__name__}")
        out.append(" " + text)
        w.column += 1 + len(text)


def dump(obj: Any) -> str:
    """One document, exactly as `kustomize build` prints it (ends with a newline)."""
    w = _Writer()
    if isinstance(obj, dict) and obj:
        _emit_mapping(w, obj, 0, first_inline=True)
    elif isinstance(obj, list) and obj:
        _emit_sequence(w, obj, 0, first_inline=True)
    elif isinstance(obj, str):
        _write_string(w, obj, 0, key=False)
    elif isinstance(obj, dict):
        w.write("{}")
    elif isinstance(obj, list):
        w.write("[]")
    else:
        w.write(_scalar_text(obj) or "")
    text = "".join(w.out)
    return text + "\n" if not text.endswith("\n") else text


def dump_all(objs: list[Any]) -> str:
    """Documents joined by `---` lines, as kustomize writes a ResMap."""
    return "---\n".join(dump(o) for o in objs)
