"""A YAML stream of objects (`-f FILE`) read through the parse cache, one entry per document.

A rendered file is megabytes of CRDs and always holds a Secret (the webhook's certificate). As
one entry nothing of it could be kept, since no Secret is ever stored (parsed_cache.Storable);
kept per document, everything but the Secret reads back as JSON at a fraction of a parse's cost,
and the Secret is parsed again every time. Reading the file is then no longer most of a no-op
`install -f` (docs/benchmarks.md).

The stream is cut where its documents start: at each line that begins with `---` followed by a
blank or the line's end. In a stream the reader accepts, that is where a document begins (a
document marker at the start of a line ends any scalar but one at the document's top level, and
a quoted or flow scalar across it is an error). What the cut could misread is read whole,
without the cache: a directive (`%`), a document end (`...`), a carriage return, a byte-order
mark, a part that is not one mapping (a top-level block scalar), and any part that does not read
(the whole stream's reader then says what is wrong, with the stream's own line numbers). Each
part is read as the whole stream is (yamlread.load_all), so the documents are the same.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from trainerctl.kustomize import aliases, goyaml, roundtrip, yamlread
from trainerctl.kustomize.cachedread import code_tag
from trainerctl.kustomize.errors import KustomizeError
from trainerctl.parsed_cache import ParsedCache, Storable, secret_at_top

# Below this many characters a part costs about what a cache lookup costs: parsed, not stored.
MIN_CHARS = 4096
# Documents kept (by last use): a few renders' CRDs.
KEEP = 200
_FORMAT = "stream-documents/1"
_EXACT = (str, int, float, bool, type(None))


def stream_cache(cache_dir: str | Path) -> ParsedCache:
    """The parses of `-f` files' documents, under trainerctl's cache dir `cache_dir`."""
    return ParsedCache(Path(cache_dir) / "parsed", KEEP)


def load_all(text: str, source: str, cache: ParsedCache | None) -> list[Any]:
    """yamlread.load_all(text, source), each large document from `cache` when it has it."""
    parts = _parts(text) if cache is not None and len(text) >= MIN_CHARS else None
    if parts is None:
        return yamlread.load_all(text, source)
    tag = code_tag(_FORMAT, yamlread.__file__, aliases.__file__, goyaml.__file__, roundtrip.__file__, __file__)
    docs: list[Any] = []
    for part in parts:
        read = _read(part, cache, tag)
        if read is None:
            return yamlread.load_all(text, source)
        docs.extend(read)
    return docs


def _parts(text: str) -> list[str] | None:
    """The stream cut where its documents start; None when the cut could misread it. (str.find,
    not a multi-line regular expression: this runs over megabytes on every read.)"""
    if "\r" in text or text.startswith(("\ufeff", "%", "...")) or "\n%" in text or "\n..." in text:
        return None
    bounds = [0]
    at = text.find("\n---")
    while at >= 0:
        if text[at + 4:at + 5] in ("", " ", "\t", "\n"):
            bounds.append(at + 1)
        at = text.find("\n---", at + 4)
    bounds.append(len(text))
    return [text[a:b] for a, b in zip(bounds, bounds[1:])]


def _read(part: str, cache: ParsedCache, tag: str) -> list[Any] | None:
    """The part's documents (none, or one mapping), or None when it must be read with the stream."""
    key = None
    if len(part) >= MIN_CHARS:
        key = ParsedCache.key(part.encode("utf-8", "surrogatepass"), tag)
        stored = cache.get(key)
        if _one_mapping(stored) and not secret_at_top(stored):
            return stored
        if stored is not None:
            cache.drop(key)  # not what this module writes
    try:
        docs = yamlread.load_all(part, "")
    except (KustomizeError, yaml.YAMLError, RecursionError):
        return None
    if not (docs == [] or _one_mapping(docs)):
        return None
    if key is not None and docs and _json_exact(docs):
        cache.put(key, Storable.documents(docs))  # refuses a Secret
    return docs


def _one_mapping(docs: Any) -> bool:
    return isinstance(docs, list) and len(docs) == 1 and isinstance(docs[0], dict)


def _json_exact(value: Any) -> bool:
    """Whether JSON gives `value` back as it is: string keys, finite numbers, nothing but JSON's
    types (a YAML integer key would come back a string)."""
    stack = [value]
    while stack:
        item = stack.pop()
        kind = type(item)
        if kind is dict:
            if any(type(k) is not str for k in item):
                return False
            stack.extend(item.values())
        elif kind is list:
            stack.extend(item)
        elif kind not in _EXACT or (kind is float and (item != item or item in (float("inf"), float("-inf")))):
            return False
    return True
