"""Resource files read through a cache of parsed documents (trainerctl.parsed_cache).

A build parses the same multi-megabyte CRD files on every run; the cache gives back, for the
same bytes, exactly what yamlread.load_documents gave (values, their types, key order, the
texts kustomize keeps), read as JSON at a tenth of the cost. What JSON cannot give back exactly
is never stored: a document holding a Mapping (a null written as nothing carries its text),
NaN or infinity (refused by the store), anything with a Secret (refused by the store).
"""

from __future__ import annotations

import os
from pathlib import Path

from trainerctl import __version__
from trainerctl.kustomize import yamlread
from trainerctl.parsed_cache import ParsedCache

# Below this many characters parsing costs about what a cache lookup costs.
MIN_CHARS = 4096
# Files kept (by last use): a few trees' CRD bundles, tens of MB at most.
KEEP = 500
_FORMAT = "kustomize-resources/1"
_tags: dict[tuple[str, ...], str] = {}


def code_tag(fmt: str, *files: str) -> str:
    """Who computed an entry: the format, the version, and the files of the code that decides
    the value (size, mtime), so an entry of other code, an edited checkout's included, is never
    read."""
    key = (fmt, *files)
    tag = _tags.get(key)
    if tag is None:
        parts = [fmt, __version__]
        for path in files:
            try:
                info = os.stat(path)
                parts.append(f"{info.st_size}:{info.st_mtime_ns}")
            except (OSError, TypeError):
                parts.append("?")
        tag = _tags[key] = " ".join(parts)
    return tag


def parser_tag() -> str:
    return code_tag(_FORMAT, yamlread.__file__, __file__)


def resource_cache(cache_dir: str | Path) -> ParsedCache:
    """The engine's cache under trainerctl's cache dir `cache_dir`: resource files' parses, and
    large objects' YAML (cachedwrite)."""
    return ParsedCache(Path(cache_dir) / "kustomize", KEEP)


def load_resources(text: str, source: str, cache: ParsedCache | None) -> list[yamlread.Loaded]:
    """yamlread.load_documents(text, source, raw_annotations=True), from `cache` when it has it."""
    if cache is None or len(text) < MIN_CHARS:
        return yamlread.load_documents(text, source, raw_annotations=True)
    try:
        key = cache.key(text.encode("utf-8"), parser_tag())
    except UnicodeEncodeError:  # a lone surrogate: nothing JSON could give back either
        return yamlread.load_documents(text, source, raw_annotations=True)
    docs = _decode(cache.get(key))
    if docs is None:
        docs = yamlread.load_documents(text, source, raw_annotations=True)
        if docs and not any(d.marked for d in docs):
            cache.put(key, _encode(docs))
    return docs


def _encode(docs: list[yamlread.Loaded]) -> list:
    return [[d.doc, None if d.texts is None else [[f, k, v, t] for (f, k), (v, t) in d.texts.items()]]
            for d in docs]


def _decode(value) -> list[yamlread.Loaded] | None:
    """The documents of a stored value, or None for anything this module did not write."""
    if not (isinstance(value, list) and value):  # nothing is stored for a file without documents
        return None
    docs = []
    for item in value:
        if not (isinstance(item, list) and len(item) == 2):
            return None
        doc, texts = item
        if doc is None:  # load_documents drops empty documents
            return None
        if texts is not None:
            if not (isinstance(texts, list)
                    and all(isinstance(t, list) and len(t) == 4 and isinstance(t[0], str)
                            and isinstance(t[1], str) and isinstance(t[3], str) for t in texts)):
                return None
            texts = {(f, k): (v, t) for f, k, v, t in texts}
        docs.append(yamlread.Loaded(doc, False, texts))
    return docs
