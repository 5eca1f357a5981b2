"""YAML or JSON held in a string field, edited by a replacement target whose field path runs
through the string (kustomize v5.8's setValueInStructuredData).

kustomize parses the first scalar the path reaches (go-yaml v3), follows the rest of the path
inside it (creating fields if asked), sets the value, and writes the string back: as Go's
encoding/json when it began with `{` or `[` (keys sorted; indented by two spaces when the
original had a line break and a double space), otherwise as kyaml writes YAML (two-space
indent, sequences not indented under their key, styles and key order kept).

`set_in_string` returns DONE, or UNCHANGED where kustomize ends up editing a copy and leaves the
field as it was (its JSON re-encoding failed), or None where the path does not run through a
string holding a mapping or list (the caller's ordinary path handling then reports the error
kustomize reports). YAML kustomize would rewrite in ways not reproduced here (comments,
anchors, tags, block scalars, multi-line scalars) is refused by name.
"""

from __future__ import annotations

import copy
import re

from trainerctl.kustomize import gojson, yamlemit, yamlread
from trainerctl.kustomize.errors import KustomizeError
from trainerctl.kustomize.resource import annotation_text

TYPE_CHECKING = False  # typing costs a tenth of a kustomize run's start-up
if TYPE_CHECKING:
    from typing import Any

DONE, UNCHANGED = "done", "unchanged"
MISSING = object()


class Node:
    """A go-yaml v3 node: kind "scalar" | "map" | "seq"; a short tag ("!!str", "" when none);
    a scalar's text, a mapping's [key, value] pairs or a sequence's items; the scalar style
    ("" plain, "'" or '"') or whether a collection is in flow style."""

    __slots__ = ("kind", "tag", "value", "style", "flow")

    def __init__(self, kind: str, tag: str = "", value: Any = "", style: str = "",
                 flow: bool = False):
        self.kind, self.tag, self.value, self.style, self.flow = kind, tag, value, style, flow

    def replace_with(self, other: "Node") -> None:
        other = copy.deepcopy(other)
        self.kind, self.tag, self.value, self.style, self.flow = \
            other.kind, other.tag, other.value, other.style, other.flow

    def get(self, key: str) -> "Node | None":
        for k, v in self.value:
            if k.kind == "scalar" and k.value == key:
                return v
        return None


class _Unsupported(Exception):
    """Input kustomize would rewrite in a way trainerctl does not reproduce."""


# --------------------------------------------------------------------------- entry point

def set_in_string(obj: dict, parts: list[str], value: Any, text: str, create: bool,
                  where: str, fp: str) -> str | None:
    """kustomize's setValueInStructuredData on a resource `obj` (a dict tree)."""
    if len(parts) < 2:
        return None
    for i in range(1, len(parts)):
        container, key, found = path_get(obj, parts[:i])
        if found is MISSING or isinstance(found, (dict, list)):
            continue
        if found is None:
            if create:
                # kustomize reads the null's text ("", "null" or "~"), which decides between
                # an error and no change; the loaded object no longer has it.
                raise KustomizeError(f"{where}: field path {fp!r} runs through the null at "
                                     f"{'.'.join(parts[:i])!r}; kustomize's result depends on "
                                     f"how that null is spelled, which trainerctl does not keep")
            return None
        if not isinstance(found, str):
            return None  # a number or boolean holds no mapping: kustomize's path error
        root = _parse(found)
        if root is None:
            return None  # not YAML: kustomize's path error
        if root.kind == "scalar":
            if root.tag == "!!null" and found.strip() and create:
                return UNCHANGED  # kustomize sets a field on a copy of the null
            return None
        try:
            return _edit(container, key, found, root, parts[i:], value, text, create)
        except _Unsupported as exc:
            raise KustomizeError(f"{where}: field path {fp!r} edits the YAML held in "
                                 f"{'.'.join(parts[:i])!r}, which {exc}; trainerctl does not "
                                 f"reproduce how kustomize rewrites it") from None
    return None


def _edit(container, key, original: str, root: Node, rest: list[str], value: Any,
          text: str, create: bool) -> str | None:
    targets = _match(root, rest, create)
    if not targets:
        return None  # nothing there: kustomize's "unable to find field" from the path
    as_json = original.strip()[:1] in ("{", "[")
    if not as_json:
        _check_yaml(original)
    for t in targets:
        if t.kind == "scalar":
            t.value = text
        else:
            if not as_json:
                raise _Unsupported("would have a mapping or list replaced by the value")
            t.replace_with(node_of(value))
    if as_json:
        try:
            data = _python(root)
        except _Unencodable:
            return UNCHANGED  # kustomize's re-encoding fails and it edits a copy instead
        pretty = "\n" in original and "  " in original
        new = gojson.dumps(data, pretty)
    else:
        new = emit_yaml(root).strip()
    container[key] = new
    return DONE


# --------------------------------------------------------------------------- the resource side

def path_get(obj: Any, parts: list[str]) -> tuple[Any, Any, Any]:
    """kyaml's PathGetter without create: (container, key, value), value MISSING when absent
    or the path cannot be followed."""
    cur: Any = obj
    container: Any = None
    key: Any = None
    for part in parts:
        container = cur
        if part.lstrip("-").isascii() and part.lstrip("-").isdigit() and part != "-" and not part.startswith("+"):
            idx = int(part)
            if idx < 0 or not isinstance(cur, list) or idx >= len(cur):
                return None, None, MISSING
            key = idx
        elif part == "-":
            if not isinstance(cur, list) or not cur:
                return None, None, MISSING
            key = len(cur) - 1
        elif part == "*":
            return None, None, MISSING
        elif part.startswith("[") and part.endswith("]") and "=" in part:
            name, _, want = part[1:-1].partition("=")
            if not isinstance(cur, list):
                return None, None, MISSING
            key = next((j for j, el in enumerate(cur)
                        if (el if not name else el.get(name) if isinstance(el, dict) else None)
                        is not None and _text(el if not name else el.get(name)) == want), None)
            if key is None:
                return None, None, MISSING
        else:
            if cur is None:
                return None, None, MISSING
            if not isinstance(cur, dict) or part not in cur:
                return None, None, MISSING
            key = part
        cur = container[key]
    return container, key, cur


def _text(v: Any) -> str:
    return "" if isinstance(v, (dict, list)) else annotation_text(v)


# --------------------------------------------------------------------------- parsing

_TIMESTAMP_HINT = re.compile(r"^\d{4}-")


def tag_of(plain: str) -> str:
    """go-yaml v3's implicit tag of a plain scalar."""
    value = yamlread.resolve_plain(plain)
    if value is None:
        return "!!null"
    if isinstance(value, bool):
        return "!!bool"
    if isinstance(value, int):
        return "!!int"
    if isinstance(value, float):
        return "!!float"
    if value != plain and _TIMESTAMP_HINT.match(plain):
        return "!!timestamp"
    return "!!str"


def _parse(text: str) -> Node | None:
    """The first document of `text` as go-yaml v3 nodes, or None when it is not YAML."""
    import yaml

    try:
        node = yamlread.compose(text)
    except yaml.YAMLError:
        return None
    if node is None:
        return None
    try:
        return _convert(node, {})
    except _Unsupported:
        return None


def _convert(node, seen: dict) -> Node:
    import yaml

    if id(node) in seen:
        return seen[id(node)]
    if isinstance(node, yaml.ScalarNode):
        if node.tag == yamlread.PLAIN_TAG:
            out = Node("scalar", tag_of(node.value), node.value, "")
        else:
            tag = "!!str" if node.tag == yamlread.STR_TAG else \
                node.tag.replace("tag:yaml.org,2002:", "!!")
            style = node.style if node.style in ("'", '"') else ""
            out = Node("scalar", tag, node.value, style)
        seen[id(node)] = out
        return out
    if isinstance(node, yaml.MappingNode):
        out = Node("map", "!!map", [], flow=bool(node.flow_style))
        seen[id(node)] = out
        out.value = [[_convert(k, seen), _convert(v, seen)] for k, v in node.value]
        return out
    out = Node("seq", "!!seq", [], flow=bool(node.flow_style))
    seen[id(node)] = out
    out.value = [_convert(v, seen) for v in node.value]
    return out


def _check_yaml(text: str) -> None:
    """Refuse YAML whose rewriting by kyaml is not reproduced here."""
    import yaml

    spans = []
    docs = 0
    try:
        for token in yaml.scan(text, Loader=yaml.CSafeLoader):
            if isinstance(token, (yaml.AnchorToken, yaml.AliasToken)):
                raise _Unsupported("uses anchors or aliases")
            if isinstance(token, yaml.TagToken):
                raise _Unsupported("has explicit tags")
            if isinstance(token, yaml.DirectiveToken):
                raise _Unsupported("has a directive")
            if isinstance(token, yaml.DocumentStartToken):
                docs += 1
            if isinstance(token, yaml.ScalarToken):
                if token.style in ("|", ">"):
                    raise _Unsupported("has a block scalar")
                if token.start_mark.line != token.end_mark.line:
                    raise _Unsupported("has a scalar over several lines")
                spans.append((token.start_mark.index, token.end_mark.index))
    except yaml.YAMLError:
        raise _Unsupported("is not a single YAML document") from None
    if docs > 1:
        raise _Unsupported("has several documents")
    for m in re.finditer(r"(?:^|(?<=[ \t\n]))#", text):
        if not any(a <= m.start() < b for a, b in spans):
            raise _Unsupported("has comments")


# --------------------------------------------------------------------------- kyaml's PathMatcher

def _kind_for(next_part: str, last_kind: str) -> str:
    if not next_part:
        return last_kind
    if next_part.startswith("[") and next_part.endswith("]") and "=" in next_part:
        return "seq"
    if next_part.isascii() and next_part.isdigit():
        return "seq"
    return "map"


def _match(node: Node, path: list[str], create: bool, last_kind: str = "scalar") -> list[Node]:
    """The nodes `path` reaches (kyaml's PathMatcher, Create when `create`)."""
    if not path:
        return [node]
    part, rest = path[0], path[1:]
    nxt = rest[0] if rest else ""
    if part.isascii() and part.isdigit():  # strconv.Atoi: ASCII digits only
        if node.kind != "seq":
            return []
        idx = int(part)
        if idx == len(node.value) and create:
            node.value.append(_empty(_kind_for(nxt, last_kind)))
        if idx >= len(node.value):
            return []
        return _match(node.value[idx], rest, create, last_kind)
    if part.startswith("[") and part.endswith("]") and "=" in part:
        if node.kind != "seq":
            return []
        name, _, pattern = part[1:-1].partition("=")
        try:
            rx = re.compile(pattern)
        except re.error:
            raise _Unsupported(f"would be matched by the bad pattern {pattern!r}") from None
        out: list[Node] = []
        for el in node.value:
            field = el if not name else el.get(name) if el.kind == "map" else None
            if field is not None and rx.search(emit_yaml(field).strip()):
                out.extend([el] if not name else _match(el, rest, create, last_kind))
        if out or not create:
            return out
        value = Node("scalar", "", pattern)
        node.value.append(value if not name else Node("map", "", [[Node("scalar", "", name),
                                                                      value]]))
        return _match(node, path, create, last_kind)
    if part == "*":
        if node.kind != "seq":
            return []
        return [m for el in node.value for m in _match(el, rest, create, last_kind)]
    if node.kind == "scalar" and node.tag == "!!null":
        if create:
            raise _Unsupported("has a null where the path continues")
        return []
    if node.kind != "map":
        return []
    field = node.get(part)
    if field is None:
        if not create:
            return []
        field = _empty(_kind_for(nxt, last_kind))
        node.value.append([Node("scalar", "!!str", part), field])
    if field.kind == "scalar" and rest:
        raise _Unsupported("holds YAML in a string again")
    return _match(field, rest, create, last_kind)


def _empty(kind: str) -> Node:
    return Node(kind, "", [] if kind != "scalar" else "")


def node_of(value: Any) -> Node:
    """A resource value as a node (its tag from its type)."""
    if isinstance(value, dict):
        return Node("map", "!!map", [[node_of(k), node_of(v)] for k, v in value.items()])
    if isinstance(value, list):
        return Node("seq", "!!seq", [node_of(v) for v in value])
    if value is None:
        return Node("scalar", "!!null", "null")
    if isinstance(value, str):
        return Node("scalar", "!!str", value)
    text = _text(value)
    return Node("scalar", tag_of(text), text)


# --------------------------------------------------------------------------- JSON, as Go writes it

class _Unencodable(Exception):
    pass


def _python(node: Node) -> Any:
    """What go-yaml v3 decodes the node into (interface{}), ready for encoding/json."""
    if node.kind == "map":
        out = {}
        for k, v in node.value:
            key = _python(k)
            if not isinstance(key, str):
                raise _Unencodable  # map[interface{}]interface{}: encoding/json refuses it
            out[key] = _python(v)
        return out
    if node.kind == "seq":
        return [_python(v) for v in node.value]
    text, tag = node.value, node.tag or tag_of(node.value)
    if tag in ("!!str", "!!timestamp", "!!binary"):
        return text
    if tag == "!!null":
        if tag_of(text) != "!!null":
            raise _Unencodable  # `!!null text` does not decode
        return None
    value = yamlread.resolve_plain(text)
    if tag == "!!bool" and isinstance(value, bool):
        return value
    if tag == "!!int" and isinstance(value, int) and not isinstance(value, bool):
        if not -(2 ** 63) <= value < 2 ** 64:
            raise _Unencodable
        return value
    if tag == "!!float" and isinstance(value, (int, float)) and not isinstance(value, bool):
        value = float(value)
        if value != value or value in (float("inf"), float("-inf")):
            raise _Unencodable
        return value
    raise _Unencodable  # an explicit tag the text does not satisfy: decoding fails


# --------------------------------------------------------------------------- YAML, as kyaml writes it

_FLOW_INDICATOR = re.compile(r"[,?\[\]{}]|:")


def _scalar(w, node: Node, indent: int, key: bool, flow: bool) -> None:
    """A scalar as go-yaml v3's encoder and libyaml's style rules write it."""
    value, tag, style = node.value, node.tag, node.style
    explicit = ""
    if tag and not (tag == "!!str" and style):
        resolved = tag_of(value)
        if resolved != tag:
            if tag == "!!str":
                style = style or '"'
            else:
                explicit = tag
    if "\n" in value and not style:
        raise _Unsupported("would get a multi-line value")
    a = yamlemit.analyze(value)
    if style == "":
        plain = a.block_plain and not (flow and _FLOW_INDICATOR.search(value))
        if not plain or (not value and (flow or key)):
            style = "'"
    if style == "'" and (not a.single or ((flow or key) and a.multiline)):
        style = '"'
    if explicit:
        w.write(explicit + (" " if value or style else ""))
    # kyaml's encoder has no line width: nothing is folded.
    if style == "":
        yamlemit.write_plain(w, value, indent, False)
    elif style == "'":
        yamlemit.write_single(w, value, indent, False)
    else:
        yamlemit.write_double(w, value, indent, False)


def _flow(w, node: Node, indent: int) -> None:
    if node.kind == "scalar":
        _scalar(w, node, indent, key=False, flow=True)
        return
    opening, closing = ("{", "}") if node.kind == "map" else ("[", "]")
    w.write(opening)
    for i, item in enumerate(node.value):
        if i:
            w.write(", ")
        if node.kind == "map":
            _scalar(w, _key(item[0]), indent, key=True, flow=True)
            w.write(":")
            if not (item[1].kind == "scalar" and item[1].value == "" and not item[1].style
                    and item[1].tag in ("!!null", "")):
                w.write(" ")
            _flow(w, item[1], indent)
        else:
            _flow(w, item, indent)
    w.write(closing)


def _key(node: Node) -> Node:
    if node.kind != "scalar":
        raise _Unsupported("has a mapping or list as a key")
    if len(node.value) > 128:
        raise _Unsupported("has a key over 128 characters")  # written as "? key"
    return node


def _value(w, node: Node, indent: int, in_mapping: bool) -> None:
    """`node` after a "key:" (in_mapping) or a "-" indicator at `indent`."""
    if node.kind == "map" and node.value and not node.flow:
        if in_mapping:
            _block_map(w, node, indent + 2, first_inline=False)
        else:
            w.write(" ")
            _block_map(w, node, indent + 2, first_inline=True)
    elif node.kind == "seq" and node.value and not node.flow:
        if in_mapping:
            _block_seq(w, node, indent, first_inline=False)  # not indented under its key
        else:
            w.write(" ")
            _block_seq(w, node, indent + 2, first_inline=True)
    elif node.kind == "scalar":
        if node.value == "" and not node.style and node.tag in ("!!null", ""):
            return  # "key:" with nothing after it
        w.write(" ")
        _scalar(w, node, indent + 2, key=False, flow=False)
    else:
        w.write(" ")
        _flow(w, node, indent + 2)


def _block_map(w, node: Node, indent: int, first_inline: bool) -> None:
    for i, (k, v) in enumerate(node.value):
        if i or not first_inline:
            w.newline(indent)
        _scalar(w, _key(k), indent, key=True, flow=False)
        w.write(":")
        _value(w, v, indent, in_mapping=True)


def _block_seq(w, node: Node, indent: int, first_inline: bool) -> None:
    for i, item in enumerate(node.value):
        if i or not first_inline:
            w.newline(indent)
        w.write("-")
        _value(w, item, indent, in_mapping=False)


def emit_yaml(node: Node) -> str:
    """One document as kyaml's String() writes it (indent 2, compact sequences)."""
    w = yamlemit.Writer()
    if node.kind == "map" and node.value and not node.flow:
        _block_map(w, node, 0, first_inline=True)
    elif node.kind == "seq" and node.value and not node.flow:
        _block_seq(w, node, 0, first_inline=True)
    elif node.kind == "scalar":
        _scalar(w, node, 0, key=False, flow=False)
    else:
        _flow(w, node, 0)
    return "".join(w.out) + "\n"
