"""Objects written as YAML through the engine's cache (trainerctl.parsed_cache).

Writing a CRD's schema as kustomize prints it is most of a build's output time, and the same
CRDs come out of every build of a tree. A large object's YAML is kept, keyed by its JSON: the
emitter's output is a function of exactly what JSON says of a value (types, text, and keys,
whose order the emitter sorts away), so a hit is the text the emitter would write. An object
JSON cannot say (NaN, another type) is written directly, and so is anything holding a Secret.
"""

from __future__ import annotations

import json

from trainerctl.kustomize import yamlemit, yamlread
from trainerctl.kustomize.cachedread import code_tag
from trainerctl.parsed_cache import SECRET_MARK, ParsedCache

# Below this many characters of JSON the emitter costs about what a cache lookup costs.
MIN_CHARS = 16384
_FORMAT = "kustomize-yaml/1"


def dump_all(objs: list, cache: ParsedCache | None) -> str:
    """yamlemit.dump_all(objs), large objects' text from `cache` when it has it."""
    if cache is None:
        return yamlemit.dump_all(objs)
    tag = code_tag(_FORMAT, yamlemit.__file__, yamlread.__file__, __file__)
    return "---\n".join([_dump(o, cache, tag) for o in objs])


def _dump(obj, cache: ParsedCache, tag: str) -> str:
    try:
        as_json = json.dumps(obj, separators=(",", ":"), allow_nan=False)
    except (TypeError, ValueError, RecursionError):
        return yamlemit.dump(obj)  # raises what the emitter says of it, if anything
    if len(as_json) < MIN_CHARS or SECRET_MARK in as_json:
        return yamlemit.dump(obj)
    key = cache.key(as_json.encode("utf-8", "surrogatepass"), tag)
    text = cache.get(key)
    if isinstance(text, str) and text.endswith("\n"):
        return text
    text = yamlemit.dump(obj)
    cache.put(key, text)
    return text
