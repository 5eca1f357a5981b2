"""ReplacementTransformer: `replacements:` and `kind: ReplacementTransformer`: copy a field of
one resource (or a literal `sourceValue`) into fields of others."""

from __future__ import annotations

import copy
import re

from trainerctl.kustomize import embedded_yaml, schema, yamlread
from trainerctl.kustomize.errors import KustomizeError
from trainerctl.kustomize.resid import ResId
from trainerctl.kustomize.resource import Resource, annotation_text
from trainerctl.kustomize.transformers.selectors import anchored, label_selector, text_values
from trainerctl.kustomize.yamlread import resolve_plain

TYPE_CHECKING = False  # typing costs a tenth of a kustomize run's start-up
if TYPE_CHECKING:
    from typing import Any

KIND = "ReplacementTransformer"
CONFIG = schema.Struct(KIND, {"replacements": schema.List(schema.REPLACEMENT_FIELD)})


def split_field_path(path: str) -> list[str]:
    """kyaml's SmarterPathSplitter: 'a.b\\.c.[name=x.y].[d.e]' -> ['a', 'b.c', '[name=x.y]',
    'd.e']: an escaped dot stays, a bracketed list matcher stays whole, other brackets go."""
    pieces = path.split(".")
    if len(pieces) > 1 and pieces[0] == "":
        pieces = pieces[1:]  # a leading "/" style separator
    joined = [pieces[0]]
    for piece in pieces[1:]:
        if joined[-1].endswith("\\"):
            joined[-1] = joined[-1][:-1] + "." + piece
        else:
            joined.append(piece)
    parts, i = [], 0
    while i < len(joined):
        elem = joined[i]
        if elem.startswith("[") and not elem.endswith("]"):
            bracketed = [elem]
            while i < len(joined) - 1:
                i += 1
                bracketed.append(joined[i])
                if joined[i].endswith("]"):
                    break
            elem = ".".join(bracketed)
            if "=" not in elem:
                elem = elem.strip("[]")
        parts.append(elem)
        i += 1
    return parts


_MATCH = re.compile(r"^\[([^=\]]+)=([^\]]*)\]$")
_PLAIN_WORD = re.compile(r"^[A-Za-z0-9_./-]*\Z")


def _matches(pattern: str, v: Any) -> bool:
    """kyaml's PathMatcher list selector: the pattern is a regular expression searched
    (unanchored) in the element field's YAML text."""
    if v is None or isinstance(v, (dict, list)):
        return False
    text = _scalar_str(v)
    if not (isinstance(v, str) and _PLAIN_WORD.match(v)) or embedded_yaml.tag_of(text) != "!!str":
        text = embedded_yaml.emit_yaml(embedded_yaml.node_of(v)).strip()
    if _PLAIN_WORD.match(pattern):
        return pattern in text
    try:
        return re.search(pattern, text) is not None
    except re.error as exc:
        raise KustomizeError(f"field path selector [{pattern}]: {exc}") from None


FIELD, ELEMENT = "field", "element"  # what a target path created last


def _lookup(node: Any, parts: list[str], create: bool, where: str) -> list[tuple[Any, Any, str]]:
    """(container, key, created) for each place the path reaches; '*' fans out over list
    elements. `created`: the last part was made here, as a FIELD or a list ELEMENT (kyaml's
    PathMatcher gives either node no tag), else ""."""
    results: list[tuple[Any, Any, str]] = []

    def go(cur, i):
        part = parts[i]
        last = i == len(parts) - 1
        m = _MATCH.match(part)
        if isinstance(cur, list):
            if m:
                key, value = m[1], m[2]
                hits = [j for j, el in enumerate(cur)
                        if isinstance(el, dict) and _matches(value, el.get(key))]
                if not hits and create:
                    cur.append({key: value})
                    hits = [len(cur) - 1]
                for j in hits:
                    if last:
                        results.append((cur, j, ""))
                    else:
                        go(cur[j], i + 1)
                return
            if part == "*":
                for j in range(len(cur)):
                    if last:
                        results.append((cur, j, ""))
                    else:
                        go(cur[j], i + 1)
                return
            if part.lstrip("-").isascii() and part.lstrip("-").isdigit():  # as Go's Atoi
                j = int(part)
                created = ""
                if j < 0 or j >= len(cur):
                    if create and j == len(cur):
                        cur.append({} if not last else None)
                        created = ELEMENT
                    else:
                        raise KustomizeError(f"{where}: index {j} out of range in {'.'.join(parts)}")
                if last:
                    results.append((cur, j, created))
                else:
                    go(cur[j], i + 1)
                return
            raise KustomizeError(f"{where}: {part!r} selects in a list; use [key=value] or an index")
        if isinstance(cur, dict):
            if m:
                raise KustomizeError(f"{where}: {part!r} used on a mapping in {'.'.join(parts)}")
            if part == "*":
                for k in list(cur):
                    if last:
                        results.append((cur, k, ""))
                    else:
                        go(cur[k], i + 1)
                return
            if part not in cur or cur[part] is None:
                if not create:
                    return
                if last:
                    results.append((cur, part, "" if part in cur else FIELD))
                    return
                nxt = parts[i + 1]
                cur[part] = [] if (_MATCH.match(nxt) or (nxt.isascii() and nxt.isdigit())) else {}
            if last:
                results.append((cur, part, ""))
            else:
                go(cur[part], i + 1)
            return
        # a scalar on the way: nothing to reach

    go(node, 0)
    return results


def _scalar_str(v: Any) -> str | None:
    if v is None:
        return None
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v) if not isinstance(v, (dict, list)) else None


def _text(v: Any) -> str:
    """A scalar node's text (a mapping or sequence node has none)."""
    if isinstance(v, (dict, list)):
        return ""
    return annotation_text(v)


def _is_selected_by(rid: ResId, sel: dict) -> bool:
    """kyaml's ResId.IsSelectedBy: exact name, namespace compared as effective namespaces."""
    if sel.get("name") and sel["name"] != rid.name:
        return False
    if sel.get("namespace") and ResId(rid.gvk, "", sel["namespace"]).effective_namespace \
            != rid.effective_namespace:
        return False
    return rid.gvk.selected_by(sel.get("group"), sel.get("version"), sel.get("kind"))


def _describe(sel: dict) -> str:
    return ", ".join(f"{k}={v}" for k, v in sel.items() if k != "options") or "(empty selector)"


def _source_value(resources, src: dict, where: str) -> Any:
    matches = [r for r in resources if any(_is_selected_by(i, src) for i in r.all_ids())]
    if not matches:
        raise KustomizeError(f"{where}: nothing selected by source {_describe(src)}")
    if len(matches) > 1:
        raise KustomizeError(f"{where}: multiple matches for source selector {_describe(src)}")
    path = src.get("fieldPath") or "metadata.name"
    # kyaml's PathGetter: exact list selectors, no wildcard, no path into a string.
    _, _, value = embedded_yaml.path_get(matches[0].obj, split_field_path(path))
    if value is embedded_yaml.MISSING or _missing(value):
        raise KustomizeError(f"{where}: fieldPath `{path}` is missing for replacement source "
                             f"{_describe(src)}")
    value = copy.deepcopy(value)
    opts = src.get("options") or {}
    if opts.get("delimiter"):
        if isinstance(value, (dict, list)):
            raise KustomizeError(f"{where}: delimiter option can only be used with scalar nodes")
        pieces = _text(value).split(opts["delimiter"])
        idx = opts.get("index", 0)
        if idx < 0 or idx >= len(pieces):
            raise KustomizeError(f"{where}: options.index {idx} is out of bounds for value "
                                 f"{_text(value)!r}")
        value = pieces[idx] if isinstance(value, str) else _source_piece(pieces[idx], value, where)
    return value


def _missing(v: Any) -> bool:
    """kyaml's IsNilOrEmpty: null, or an empty mapping or sequence."""
    return v is None or v == {} or v == []


def _tag(value: Any) -> str:
    """The go-yaml tag a scalar of the engine's model was read with."""
    if value is None:
        return "!!null"
    if isinstance(value, bool):
        return "!!bool"
    if isinstance(value, int):
        return "!!int"
    return "!!float" if isinstance(value, float) else "!!str"


def _retyped(text: str, like: Any, created: str, where: str) -> Any:
    """`text` written into a scalar node, as kyaml writes it (only the node's text changes)
    and as kustomize's output then decodes it (go-yaml v3 into JSON): a node made by `create`
    has no tag, so the text is resolved as a plain scalar ("5" becomes 5, "~" null); an existing
    node keeps its tag, and text that go-yaml cannot decode as that tag is refused, as kubectl
    refuses it ("abc" into `replicas: 1`). A string node takes any text; an integer widens to a
    float node."""
    value = resolve_plain(text)
    if created:
        # Seen in kubectl: an empty text stays an empty string in a list element it appended,
        # and is null in a field it made.
        return "" if created == ELEMENT and text == "" else value
    tag, got = _tag(like), _tag(value)
    if tag == "!!str":
        return text
    if tag == got or (tag == "!!float" and got == "!!int"):
        return value
    raise KustomizeError(f"{where}: cannot decode {got} `{text}` as a {tag}")


def _source_piece(text: str, like: Any, where: str) -> Any:
    """A piece of a delimited source keeps the source node's tag (kyaml copies the node and sets
    its text); only a mapping or list target takes the node whole, so text its tag cannot decode
    is kept as text: a scalar target takes the text alone anyway."""
    try:
        return _retyped(text, like, "", where)
    except KustomizeError:
        return text


def _set_target(container: Any, key: Any, value: Any, opts: dict, where: str, created: str = "") -> None:
    current = container[key] if isinstance(container, list) else container.get(key)
    if opts.get("delimiter"):
        if isinstance(current, (dict, list)):
            raise KustomizeError(f"{where}: delimiter option can only be used with scalar nodes")
        pieces = _text(current).split(opts["delimiter"]) if current is not None else [""]
        idx = opts.get("index", 0)
        text = _text(value)
        if idx < 0:
            pieces.insert(0, text)
        elif idx >= len(pieces):
            pieces.append(text)
        else:
            pieces[idx] = text
        container[key] = _retyped(opts["delimiter"].join(pieces), current, created, where)
        return
    if not isinstance(value, (dict, list)) and (created or not isinstance(current, (dict, list))):
        # A scalar target keeps its own node: only its text changes.
        container[key] = _retyped(_text(value), current, created, where)
        return
    if current is not None and not isinstance(current, (dict, list)):
        container[key] = _retyped("", current, created, where)  # a mapping's or list's node text
        return
    container[key] = copy.deepcopy(value)


class _TargetSelector:
    def __init__(self, target: dict, where: str):
        self.select = target.get("select") or {}
        self.rejects = target.get("reject") or []
        self.sel_re = self._regexes(self.select, where)
        self.rej_re = [self._regexes(r, where) for r in self.rejects]
        self.where = where

    @staticmethod
    def _regexes(sel: dict, where: str) -> dict:
        return {k: anchored(sel[k], where) for k in ("group", "version", "kind", "name",
                                                       "namespace") if sel.get(k)}

    @staticmethod
    def _matches(res: dict, rid: ResId) -> bool:
        gvk = rid.gvk
        for k, rx in res.items():
            value = getattr(gvk, k) if k in ("group", "version", "kind") else getattr(rid, k)
            if not rx.match(value):
                return False
        return True

    def _labels_match(self, r: Resource, sel: dict) -> bool:
        for key, values in (("labelSelector", r.labels), ("annotationSelector", r.annotations)):
            if sel.get(key) and not label_selector(sel[key], self.where)(text_values(values())):
                return False
        return True

    def selects(self, r: Resource) -> bool:
        if not self._labels_match(r, self.select):
            return False
        for rej in self.rejects:
            if (rej.get("labelSelector") or rej.get("annotationSelector")) \
                    and self._labels_match(r, rej):
                return False
        ids = r.all_ids()
        for rej, rx in zip(self.rejects, self.rej_re):
            if any(rej.get(k) for k in ("group", "version", "kind", "name", "namespace")) \
                    and any(self._matches(rx, i) for i in ids):
                return False
        return any(self._matches(self.sel_re, i) for i in ids)


def configure(cfg: dict, ctx):
    entries = []
    for i, entry in enumerate(cfg.get("replacements") or []):
        where = f"{ctx.where}.replacements[{i}]" if ctx.where.endswith("]") else \
            f"{ctx.where}: replacements[{i}]"
        if entry.get("path"):
            if entry.get("source") or entry.get("targets"):
                raise KustomizeError(f"{where}: cannot specify both path and inline replacement")
            entries.extend(_from_file(entry["path"], ctx.loader))
        else:
            entries.append((entry, where))

    def transform(resmap) -> None:
        resources = resmap.items
        for entry, where in entries:
            if (entry.get("sourceValue") is None and entry.get("source") is None) \
                    or entry.get("targets") is None:
                raise KustomizeError(f"{where}: replacements must specify a source and at least "
                                     f"one target")
            if entry.get("sourceValue") is not None and entry.get("source") is not None:
                raise KustomizeError(f"{where}: value and resource selectors are mutually "
                                     f"exclusive")
            if entry.get("sourceValue") is not None:
                value = entry["sourceValue"]
            else:
                value = _source_value(resources, entry["source"], where)
            for t, target in enumerate(entry["targets"]):
                twhere = f"{where}.targets[{t}]"
                if target.get("select") is None:
                    raise KustomizeError(f"{twhere}: target must specify resources to select")
                selector = _TargetSelector(target, twhere)
                opts = target.get("options") or {}
                paths = target.get("fieldPaths") or ["metadata.name"]
                for r in resources:
                    if not selector.selects(r):
                        continue
                    for fp in paths:
                        parts = split_field_path(fp)
                        if embedded_yaml.set_in_string(r.obj, parts, value, _text(value),
                                                  bool(opts.get("create")), twhere, fp):
                            continue
                        found = _lookup(r.obj, parts, bool(opts.get("create")), twhere)
                        if not found:
                            what = "find or create" if opts.get("create") else "find"
                            raise KustomizeError(
                                f"{twhere}: unable to {what} field {fp!r} in replacement target "
                                f"{r.id}"
                            )
                        for container, key, created in found:
                            _set_target(container, key, value, opts, f"{twhere}: {fp}", created)

    return transform


def _from_file(path: str, loader) -> list:
    source = loader.name(path)
    data = yamlread.load_all(loader.read_text(path), source)
    decoder = schema.Decoder(source, strict=False)
    out = []
    for doc in data:
        items = doc if isinstance(doc, list) else [doc]
        if not isinstance(doc, (list, dict)):
            raise KustomizeError(f"{source}: unsupported replacement type {type(doc).__name__}")
        for i, item in enumerate(items):
            out.append((decoder.decode(item, schema.REPLACEMENT, f"[{i}]") or {},
                        f"{source}: [{i}]"))
    return out
