"""Resource files read through a cache of parsed documents (trainerctl.parsed_cache).

A build parses the same multi-megabyte CRD files on every run; the cache gives back, for the
same bytes, exactly what yamlread.load_documents gave (values, their types, key order, the
texts kustomize keeps), read as JSON at a tenth of the cost. What JSON cannot give back exactly
is never stored: a document holding a Mapping (a null written as nothing carries its text),
NaN or infinity. Nor is anything holding a Secret, or a kustomization that can carry a Secret's
payload: what is stored is a parsed_cache.Storable, whose constructors refuse them.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from trainerctl import __version__
from trainerctl.kustomize import aliases, docsplit, goyaml, roundtrip, yamlread
from trainerctl.parsed_cache import ParsedCache, Storable, secret_at_top

# Below this many characters parsing costs about what a cache lookup costs.
MIN_CHARS = 4096
# Files kept (by last use): a few trees' CRD bundles, tens of MB at most.
KEEP = 500
_FORMAT = "kustomize-resources/1"
_SMALL_FORMAT = "kustomize-small-parses/1"
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
    # The reader is yamlread and the modules it reads with.
    return code_tag(_FORMAT, yamlread.__file__, aliases.__file__, docsplit.__file__,
                    goyaml.__file__, roundtrip.__file__, __file__)


def resource_cache(cache_dir: str | Path) -> ParsedCache:
    """The engine's cache under trainerctl's cache dir `cache_dir`: resource files' parses, and
    large objects' YAML (cachedwrite)."""
    return ParsedCache(Path(cache_dir) / "kustomize", KEEP)


def load_resources(text: str, source: str, cache: ParsedCache | None,
                   small: SmallParses | None = None) -> list[yamlread.Loaded]:
    """yamlread.load_documents(text, source, raw_annotations=True), from `cache` when it has it
    (a small text: from `small`, when given)."""
    return _load(text, source, cache, small, yaml11=False, raw_annotations=True)


def load_yaml11(text: str, source: str, cache: ParsedCache | None,
                small: SmallParses | None = None) -> list:
    """yamlread.load_all(text, source, yaml11=True) (kustomize's own files: a kustomization, a
    configurations file), from `cache` when it has it (a small text: from `small`, when given)."""
    return [d.doc for d in _load(text, source, cache, small, yaml11=True, raw_annotations=False)]


def _load(text: str, source: str, cache: ParsedCache | None, small: SmallParses | None, *,
          yaml11: bool, raw_annotations: bool) -> list[yamlread.Loaded]:
    store = small if len(text) < MIN_CHARS else cache
    if store is None:
        return _parse(text, source, yaml11, raw_annotations)
    try:
        key = ParsedCache.key(text.encode("utf-8"), parser_tag(), *(("yaml11",) if yaml11 else ()))
    except UnicodeEncodeError:  # a lone surrogate: nothing JSON could give back either
        return _parse(text, source, yaml11, raw_annotations)
    docs = _decode(store.get(key))
    if docs is not None and secret_at_top([d.doc for d in docs]):
        store.drop(key)  # not written by this code: its Storables hold no Secret
        docs = None
    if docs is None:
        docs = _parse(text, source, yaml11, raw_annotations)
        if docs and not any(d.marked for d in docs):
            values = [d.doc for d in docs]
            make = Storable.kustomization if yaml11 else Storable.documents
            store.put(key, make(values, _encode(docs)))
    return docs


def _parse(text: str, source: str, yaml11: bool, raw_annotations: bool) -> list[yamlread.Loaded]:
    return yamlread.load_documents(text, source, yaml11=yaml11, raw_annotations=raw_annotations)


class SmallParses:
    """The parses of one build's small files, stored together as one cache entry named by the
    build's root. What the build used is what is written back (once, at `save`, and only when
    it changed), so the entry holds the files the build of that root reads, no more."""

    def __init__(self, cache: ParsedCache, root: str):
        self._cache = cache
        self._key = cache.key(root.encode("utf-8", "surrogatepass"), code_tag(_SMALL_FORMAT, __file__))
        stored = cache.get(self._key)
        # Each parse is kept as JSON text, so two reads of one file never share a value.
        self._stored = stored if isinstance(stored, dict) else {}
        self._kept: dict[str, str] = {}  # stored parts this build read
        self._new: dict[str, Storable] = {}  # parts this build parsed

    def get(self, key: str):
        text = self._stored.get(key)
        if not isinstance(text, str):
            return None
        try:
            value = json.loads(text)
        except (ValueError, RecursionError):
            return None
        self._kept[key] = text
        return value

    def drop(self, key: str) -> None:
        self._kept.pop(key, None)

    def put(self, key: str, item: Storable | None) -> None:
        if item is not None:
            self._new[key] = item

    def save(self) -> None:
        if self._new or self._kept != self._stored:
            self._cache.put(self._key, Storable.bundle(self._new, self._kept))


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
