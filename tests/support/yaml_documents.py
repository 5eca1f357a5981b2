"""Hypothesis strategies for YAML documents as people write them, and as they go wrong.

A document is built as a small tree (tuples below) and then written out as text, so that
hypothesis shrinks a failing document by its structure. It covers every scalar style (plain,
single- and double-quoted with escapes and line folding, literal and folded block scalars with
indentation indicators, chomping, more-indented, tab-led, empty and space-only lines), comments
(own line at several columns, after values, after a block scalar's header and after its last
line), anchors, aliases and `<<` merges, block and flow collections (compact and indented
sequences), and keys of several kinds. Nearly every document is valid YAML; the few that are not
are there on purpose (a tab where indentation is expected, a comment that ends a block scalar).

Trees:
    ("plain", words, lines)        words joined by spaces; `lines` > 1 continues on more lines
    ("single", text) / ("double", text)   text: chars, "\\n" for a line break in the source
    ("block", style, chomp, indicator, lines, header_comment)   lines: (extra indent, text)
    ("map", entries, flow) / ("seq", items, flow, indented)
    ("anchor", node) / ("alias", n) / ("comment", text, column)   n picks an earlier anchor
An entry is (key, node), ("<<", n) for a merge, or a comment.
"""

from __future__ import annotations

import re

from hypothesis import strategies as st

# -- scalars --------------------------------------------------------------------------------------
WORDS = st.sampled_from([
    "a", "b", "word", "x-y", "path/to", "k8s.io", "v1", "=", "<<", "1", "0", "-1", "007", "0o17",
    "0x1F", "1_000", "1e3", "1.0", ".5", "-.inf", ".NaN", "2001-12-14", "2001-12-14T21:59:43.10-05:00",
    "12:30:00", "yes", "No", "on", "OFF", "y", "~", "null", "Null", "true", "False", "é", "中文",
    "a:b", "a#b", "-x", "?x", "x,y", "x]", "<x>", "x'y", 'x"y', "😀", "\u00a0x", "x%", "x@", "x`",
])
_CHARS = st.sampled_from(list("aZ09 -_:#,.?'\"\\/[]{}&*!|>%@`é中") + ["\t", "  ", "😀", "\u2028", "\x85"])
_TEXT = st.lists(_CHARS | WORDS, max_size=8).map("".join)
_ESCAPES = st.sampled_from(["\\n", "\\t", "\\\\", '\\"', "\\x41", "\\u00e9", "\\U0001F600", "\\0", "\\e",
                            "\\N", "\\_", "\\L", "\\P", "\\ ", "\\/", "\\r", "\\a", "\\\t"])

plain = st.tuples(st.just("plain"), st.lists(WORDS, min_size=1, max_size=4),
                  st.integers(1, 3) | st.just(1))
single = st.tuples(st.just("single"), st.lists(_TEXT | st.just("\n") | st.just("\n\n"), max_size=5)
                   .map("".join))
# Double-quoted text is kept escaped: its own quotes and backslashes escaped, plus escapes.
double = st.tuples(st.just("double"), st.lists(
    _TEXT.map(lambda t: t.replace("\\", "\\\\").replace('"', '\\"')) | _ESCAPES | st.just("\n")
    | st.just("\\\n"), max_size=6).map("".join))

_LINE_TEXT = st.sampled_from(["a", "b c", "x  y", "#c", "- d", "k: v", "w " * 30 + "end", "e ", "f\t",
                              "'q'", '"d"', "...", "---", "%x", "é", "😀"]) | _TEXT
_BLOCK_LINES = {
    "same": st.tuples(st.just(0), _LINE_TEXT),  # at the content's indentation
    "more": st.tuples(st.sampled_from([1, 2, 4]), _LINE_TEXT),  # more indented
    "tab": st.tuples(st.just(0), _LINE_TEXT.map(lambda t: "\t" + t)),  # tab-led
    "empty": st.tuples(st.just(-1), st.just("")),
    "spaces": st.tuples(st.just(-2), st.integers(1, 6).map(lambda n: " " * n)),  # only spaces
}
_BLOCK_LINE = st.sampled_from(["same"] * 6 + ["more"] * 2 + ["empty"] * 2 + ["tab", "spaces"]).flatmap(
    _BLOCK_LINES.__getitem__)
block = st.tuples(st.just("block"), st.sampled_from("|>"), st.sampled_from(["", "-", "+"]),
                  st.sampled_from([0, 0, 0, 1, 2, 3]), st.lists(_BLOCK_LINE, max_size=7),
                  st.booleans())
scalars = st.one_of(plain, single, double, block, block)
flow_scalars = st.one_of(plain, single, double)

# -- keys -----------------------------------------------------------------------------------------
_KEY_KINDS = {
    "plain": st.sampled_from(["a", "key", "x-y", "x.y/z", "Key_1", "data", "spec", "é"]).map(lambda k: ("plain", k)),
    "special": st.sampled_from(["yes", "on", "1", "0x10", "1.5", "2001-12-14", "null", "~", "true"]).map(
        lambda k: ("plain", k)),
    "quoted": st.tuples(st.sampled_from(["single", "double"]), _TEXT),
    "long": st.just(("long", "k" * 130)),
}
# Weighted by a uniform draw (one_of leans to its first branches): mostly plain keys.
KEYS = st.sampled_from(["plain"] * 24 + ["quoted"] * 6 + ["special", "long"]).flatmap(_KEY_KINDS.__getitem__)


# -- collections ----------------------------------------------------------------------------------
def _comment():
    # No line break inside: "\x85" and "\u2028" end a comment line in both readers.
    return st.tuples(st.just("comment"), _TEXT.map(lambda t: re.sub("[\n\x85\u2028]", " ", t)),
                     st.sampled_from([-2, 0, 0, 2, 4]))


def _collections(children):
    entry = st.tuples(KEYS, children) | st.tuples(st.just("<<"), st.integers(0, 9)) | _comment()
    maps = st.tuples(st.just("map"), st.lists(entry, max_size=5), st.just(False))
    seqs = st.tuples(st.just("seq"), st.lists(children | _comment(), max_size=4), st.just(False),
                     st.booleans())
    flow_entry = st.tuples(KEYS, _flow_values)
    flow_maps = st.tuples(st.just("map"), st.lists(flow_entry, max_size=4), st.just(True))
    flow_seqs = st.tuples(st.just("seq"), st.lists(_flow_values, max_size=4), st.just(True),
                          st.just(False))
    return st.one_of(maps, seqs, flow_maps, flow_seqs)


_aliases = st.tuples(st.just("alias"), st.integers(0, 9))
_flow_values = st.recursive(
    flow_scalars | _aliases,
    lambda inner: st.tuples(st.just("seq"), st.lists(inner, max_size=3), st.just(True), st.just(False))
    | st.tuples(st.just("map"), st.lists(st.tuples(KEYS, inner), max_size=3), st.just(True)),
    max_leaves=5)
values = st.recursive(
    scalars | _aliases,
    lambda inner: _collections(inner) | st.tuples(st.just("anchor"), inner),
    max_leaves=14)

# A resource: its spec, more top-level fields, annotations, and what follows its last line.
resources = st.fixed_dictionaries({
    "spec": values,
    "top": st.lists(st.tuples(KEYS, values) | _comment(), max_size=3),
    "annotations": st.lists(scalars, max_size=3),
    "tail": st.sampled_from(["", "", "", "# end\n", "\n# end\n", "  # end\n", "...\n", "...\n# after\n"]),
})


# -- writing --------------------------------------------------------------------------------------
class Writer:
    """Writes trees as YAML text, naming anchors in document order (an alias names one of the
    anchors written before it, or is written as a plain word when there is none)."""

    def __init__(self) -> None:
        self.anchors: list[tuple[str, str]] = []  # (name, kind)

    # A value after "key:" or "- " at a collection indented `n`: (inline text, lines below).
    def value(self, node, n: int, flow: bool = False, in_seq: bool = False) -> tuple[str, list[str]]:
        kind = node[0]
        if kind == "anchor":
            inner = node[1]
            if inner[0] in ("anchor", "alias"):
                return self.value(inner, n, flow, in_seq)
            name = f"a{len(self.anchors)}"
            inline, lines = self.value(inner, n, flow, in_seq)
            self.anchors.append((name, "map" if inner[0] == "map" else inner[0]))
            return f" &{name}{inline}", lines
        if kind == "alias":
            if not self.anchors:
                return " x", []
            return f" *{self.anchors[node[1] % len(self.anchors)][0]}", []
        if kind == "map":
            if node[2] or flow:
                return " " + self.flow(node), []
            lines = self.block_map(node[1], n + 2)
            return ("", lines) if lines else (" {}", [])
        if kind == "seq":
            if node[2] or flow:
                return " " + self.flow(node), []
            # Under a key a sequence may stay at the key's column; under a dash it may not.
            lines = self.block_seq(node[1], n + 2 if node[3] or in_seq else n)
            return ("", lines) if lines else (" []", [])
        if kind == "block":
            if flow:
                return " " + self.quoted("double", "block"), []
            return self.block_scalar(node, n)
        return self.scalar(node, n, flow)

    def scalar(self, node, n: int, flow: bool) -> tuple[str, list[str]]:
        kind = node[0]
        if kind == "plain":
            words = [w for w in node[1] if not flow or not any(c in w for c in ",[]{}")]
            if flow and len(words) > 1:
                words = [w for w in words if "?" not in w] + [w for w in words if "?" in w][:1]
            words = words or ["w"]
            if flow or node[2] == 1 or len(words) == 1:
                return " " + " ".join(words), []
            cut = max(1, len(words) // node[2])
            rest = [" " * (n + 2) + " ".join(words[i:i + cut]) for i in range(cut, len(words), cut)]
            return " " + " ".join(words[:cut]), rest
        text = node[1]
        if flow:
            text = text.replace("\\\n", "").replace("\n", " ")
        quote = self.quoted(kind, text)
        first, *more = quote.split("\n")
        return " " + first, [(" " * (n + 2) + line) if line else "" for line in more]

    @staticmethod
    def quoted(kind: str, text: str) -> str:
        """`text` in quotes: single-quoted from raw text, double-quoted from escaped text."""
        if kind == "single":
            return "'" + text.replace("'", "''") + "'"
        return '"' + text + '"'

    def block_scalar(self, node, n: int) -> tuple[str, list[str]]:
        _, style, chomp, indicator, lines, header_comment = node
        head = style + (f"{indicator}{chomp}" if indicator else chomp)
        if header_comment:
            head += " # h"
        base = n + (indicator or 2)
        out = []
        if not indicator and lines and lines[0][1].startswith("\t") and len(lines) > 1:
            lines = lines[1:] + lines[:1]
        for extra, text in lines:
            if extra == -1:
                out.append("")
            elif extra == -2:
                out.append(text)
            else:
                out.append(" " * (base + extra) + text)
        return " " + head, out

    def flow(self, node) -> str:
        if node[0] == "seq":
            return "[" + ", ".join(self.value(v, 0, True)[0].strip() for v in node[1]) + "]"
        parts = []
        for i, (key, value) in enumerate(node[1]):
            parts.append(f"{self.key(key, i, True)}:{self.value(value, 0, True)[0] or ' '}")
        return "{" + ", ".join(parts) + "}"

    def key(self, key, i: int, flow: bool = False) -> str:
        kind, text = key
        if kind == "plain":
            return text if text in ("yes", "on", "1", "0x10", "1.5", "2001-12-14", "null", "~", "true") \
                else f"{text}{i}"
        if kind == "long":
            return f"{text}{i}"
        text = f"{text}{i}".replace("\n", " ")
        if kind == "double":
            text = text.replace("\\", "\\\\").replace('"', '\\"')
        return self.quoted(kind, text)

    def block_map(self, entries, n: int) -> list[str]:
        out: list[str] = []
        for i, entry in enumerate(entries):
            if entry[0] == "comment":
                out.append(" " * max(0, n + entry[2]) + "# " + entry[1])
                continue
            if entry[0] == "<<":
                maps = [a for a, k in self.anchors if k == "map"]
                if maps:
                    out.append(" " * n + f"<<: *{maps[entry[1] % len(maps)]}")
                continue
            key, value = entry
            inline, lines = self.value(value, n)
            out.append(" " * n + self.key(key, i) + ":" + inline)
            out.extend(lines)
        return out

    def block_seq(self, items, n: int) -> list[str]:
        out: list[str] = []
        for item in items:
            if item[0] == "comment":
                out.append(" " * max(0, n + item[2]) + "# " + item[1])
                continue
            inline, lines = self.value(item, n, in_seq=True)
            if not inline and lines and lines[0].startswith(" " * (n + 2)) and \
                    not lines[0][n + 2:].startswith((" ", "#")):
                # A block collection starts on the dash's line: "- key: v" / "- - x".
                out.append(" " * n + "- " + lines[0][n + 2:])
                out.extend(lines[1:])
            else:
                out.append(" " * n + "-" + inline)
                out.extend(lines)
        return out

    def resource(self, name: str, r: dict) -> str:
        lines = ["apiVersion: example.com/v1", "kind: Thing", "metadata:", f"  name: {name}"]
        if r["annotations"]:
            lines.append("  annotations:")
            for i, node in enumerate(r["annotations"]):
                inline, more = self.value(node, 4)
                lines.append(f"    note{i}:{inline}")
                lines.extend(more)
        inline, more = self.value(r["spec"], 0)
        lines.append("spec:" + inline)
        lines.extend(more)
        lines.extend(self.block_map(r["top"], 0))
        return "\n".join(lines) + "\n" + r["tail"]


def resource_text(name: str, r: dict) -> str:
    return Writer().resource(name, r)


def resource_file(name: str, docs: list[dict], separators: list[str]) -> str:
    """Several resources in one file, joined by the given separators ("---", "--- # c", ...)."""
    out = []
    for i, doc in enumerate(docs):
        if i:
            out.append(separators[(i - 1) % len(separators)] + "\n")
        out.append(resource_text(f"{name}-{i}", doc))
    return "".join(out)


SEPARATORS = st.lists(st.sampled_from(["---"] * 16 + ["--- # c", "---   ", "---\n...", "---\n---", "--- x"]),
                      min_size=1, max_size=3)


# -- kustomization fields -------------------------------------------------------------------------
def _prefixed(node, prefix: str):
    """A scalar tree whose value starts with `prefix` (a literal's "key=")."""
    kind = node[0]
    if kind == "plain":
        return ("plain", [prefix + node[1][0]] + list(node[1][1:]), node[2])
    if kind in ("single", "double"):
        return (kind, prefix + node[1])
    _, style, chomp, indicator, lines, header_comment = node
    lines = [(0, prefix)] + list(lines)
    return ("block", style, chomp, indicator, lines, header_comment)


# Fields of a kustomization whose values are read as YAML: annotation values, a name prefix,
# generator literals, and an inline strategic merge patch (YAML in a YAML string).
kustomizations = st.fixed_dictionaries({
    "annotations": st.lists(scalars, max_size=2),
    "prefix": st.none() | flow_scalars,
    "literals": st.lists(scalars, max_size=3),
    "patch": st.none() | resources,
})

# In block style: kyaml prints what a patch merges into a flow mapping in flow style (a null written
# as nothing as "", a folded scalar as it is), which trainerctl does not follow (docs/kustomize.md).
TARGET = "apiVersion: example.com/v1\nkind: Thing\nmetadata:\n  name: t\nspec:\n  a: 1\n  b: [x]\n"


def kustomization_text(k: dict, resources: list[str]) -> str:
    """A kustomization of `resources` (one holds TARGET, which the patch patches)."""
    w = Writer()
    lines = ["resources:"] + [f"- {r}" for r in resources]
    if k["annotations"]:
        lines.append("commonAnnotations:")
        for i, node in enumerate(k["annotations"]):
            inline, more = w.value(node, 2)
            lines.append(f"  c{i}:{inline}")
            lines.extend(more)
    if k["prefix"] is not None:
        inline, more = w.value(_prefixed(k["prefix"], "p"), 0)
        lines.append("namePrefix:" + inline)
        lines.extend(more)
    if k["literals"]:
        lines += ["configMapGenerator:", "- name: gen", "  literals:"]
        for i, node in enumerate(k["literals"]):
            inline, more = w.value(_prefixed(node, f"k{i}="), 2, in_seq=True)
            lines.append("  -" + inline)
            lines.extend(more)
    if k["patch"] is not None:
        # The spec goes under a new key: the target's spec is a mapping, which kustomize will not
        # merge with anything else (tested apart, in tests/support/kustomize_cases/yamlsyntax.py).
        patch = Writer().resource("t", dict(k["patch"], spec=("map", [(("plain", "p"), k["patch"]["spec"])], False)))
        lines += ["patches:", "- patch: |-"]
        lines += [("    " + line) if line else "" for line in patch.rstrip("\n").split("\n")]
    return "\n".join(lines) + "\n"
