"""Scalars as kustomize's output types them: every object goes through JSON (go-yaml v3 decodes
it, encoding/json writes it, go-yaml v2 reads that back and prints it).

- A plain integer beyond int64 (and, unsigned, beyond uint64) is a float64: 99999999999999999999
  prints as 1e+20; a float whose JSON digits are beyond both prints in %g form too. A float
  beyond float64 (1e400) is no number at all: strconv.ParseFloat fails and it stays a string.
- A replacement writes only a scalar node's text. A node it creates (`options.create`) has no
  tag, so the text is resolved as a plain scalar ("5" is 5, "~" null, "2001-12-14" a time); an
  empty text is null in a created field but "" in a created list element. An existing node keeps
  its tag, and kubectl refuses text that tag cannot decode ("abc" into `replicas: 1`, "5" into
  `paused: false` or a null); a string node takes any text, a float node an integer's.
"""

import re

from tests.support.kustomize_cases import Case, same

K = "kustomization.yaml"

NUMBERS = """
apiVersion: v1
kind: ConfigMap
metadata: {name: numbers}
beyondInt64: 99999999999999999999
uint64: 18446744073709551615
belowInt64: -9223372036854775809
signedUint: +18446744073709551615
hexBeyond: 0xFFFFFFFFFFFFFFFFFF
octalBeyond: 0777777777777777777777777
int64Edge: 9223372036854775808
underscores: 1_000_000_000_000_000_000_000
minInt64: -9223372036854775808
floatInt: 1e20
floatBig: 1e21
long: 123456789012345678901234
overflow: 1e400
negOverflow: -1e400
underflow: 1e-400
quoted: "1e400"
"""

# Source texts (ConfigMap data, all strings) and the tag each resolves to as a plain scalar
# against a typed node (a time only resolves as one into an untagged node: against a tag it is
# a string).
TEXTS = {"int": "5", "word": "abc", "bool": "true", "date": "2001-12-14", "octal": "0o17", "hex": "0x1F",
         "underscored": "1_000", "exp": "1e3", "nan": ".nan", "big": "99999999999999999999", "empty": "",
         "tilde": "~"}
_TAGS = {"int": "int", "word": "str", "bool": "bool", "date": "str", "octal": "int", "hex": "int",
         "underscored": "int", "exp": "float", "nan": "float", "big": "float", "empty": "null", "tilde": "null"}
# Targets: a field path, and the tag of the node there before (None: created by the replacement).
TARGETS = {"int": ("spec.replicas", "int"), "bool": ("spec.paused", "bool"), "null": ("spec.nul", "null"),
           "float": ("spec.flt", "float"), "str": ("spec.strp", "str"), "quoted": ("spec.strq", "str"),
           "newField": ("spec.newField", None), "newNested": ("spec.template.metadata.labels.x", None),
           "element": ("spec.lst.1", "str"), "newElement": ("spec.lst.2", None)}
DEPLOY = """
apiVersion: apps/v1
kind: Deployment
metadata: {name: d}
spec:
  replicas: 1
  paused: false
  nul: null
  flt: 1.5
  strp: x
  strq: "x"
  lst: [a, b]
"""


def _source(texts: dict) -> str:
    return ("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: src}\ndata:\n"
            + "".join(f"  {name}: {text!r}\n".replace("'", '"') for name, text in texts.items()))


def _decodes(text_tag: str, target_tag: str | None) -> bool:
    """Whether go-yaml decodes text of `text_tag` into a node tagged `target_tag`."""
    return target_tag in (None, "str", text_tag) or (target_tag, text_tag) == ("float", "int")


_BEFORE = {"int": "1", "float": "1.5", "str": "x", None: ""}  # the text of a target node before


def _delimited(text: str, before: str, index: int) -> str:
    """The text kustomize writes with `delimiter: '.'` at `index` into a node holding `before`."""
    pieces = before.split(".")
    if index < 0:
        pieces.insert(0, text)
    elif index >= len(pieces):
        pieces.append(text)
    else:
        pieces[index] = text
    return ".".join(pieces)


def _plain_tag(text: str) -> str:
    """go-yaml's tag of a plain scalar, for the texts these cases make (not a general resolver)."""
    if text in ("", "~"):
        return "null"
    if re.fullmatch(r"[-+]?(0x[0-9a-fA-F]+|0o[0-7]+|[0-9][0-9_]*)", text):
        return "int"
    if re.fullmatch(r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?", text):
        return "float"
    return "bool" if text in ("true", "false") else "str"


def _replacement(text: str, target: str, tag: str | None, options: str, index: int | None = None) -> Case:
    path, _ = TARGETS[target]
    files = {K: "resources:\n- src.yaml\n- d.yaml\nreplacements:\n- path: r.yaml\n",
             "src.yaml": _source({"v": TEXTS[text]}), "d.yaml": DEPLOY,
             "r.yaml": "source: {kind: ConfigMap, name: src, fieldPath: data.v}\n"
                       f"targets:\n- select: {{kind: Deployment}}\n  fieldPaths: [{path}]\n  options: {options}\n"}
    text_tag = _TAGS[text] if index is None else _plain_tag(_delimited(TEXTS[text], _BEFORE[tag], index))
    shown = TEXTS[text] if index is None else _delimited(TEXTS[text], _BEFORE[tag], index)
    if text == "nan" and tag in (None, "float"):  # NaN reaches JSON: both refuse
        return Case(files, "refuse", "unsupported value")
    if _decodes(text_tag, tag):
        return same(files)
    return Case(files, "refuse", f"cannot decode !!{text_tag} `{shown}` as a !!{tag}")


CASES: dict[str, Case] = {"numbers-beyond-int64-and-float64": same({K: "resources:\n- n.yaml\n", "n.yaml": NUMBERS})}
for _text in TEXTS:
    for _target, (_path, _tag) in TARGETS.items():
        CASES[f"replace-{_text}-into-{_target}"] = _replacement(_text, _target, _tag, "{create: true}")
for _text in ("int", "word", "empty", "hex"):
    for _target in ("int", "str", "newField", "newElement", "float"):
        for _index in (0, 1, -1):
            CASES[f"replace-{_text}-into-{_target}-delimited-{_index}".replace("--", "-minus")] = _replacement(
                _text, _target, TARGETS[_target][1], f"{{create: true, delimiter: '.', index: {_index}}}", _index)
