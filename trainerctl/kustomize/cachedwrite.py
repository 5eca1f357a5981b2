"""Objects written as YAML through the engine's cache (trainerctl.parsed_cache).

Writing a CRD's schema as kustomize prints it is most of a build's output time, and the same
CRDs come out of every build of a tree. A large object's YAML is kept, keyed by its marshal
serialisation (format 2: no back-references, so the bytes depend on the value alone, never on
which strings happen to be shared). Those bytes say exactly the types, texts, numbers and key
order of a value, and the emitter's output is a function of no more than that, so a hit is the
text the emitter would write. An object marshal cannot say (another type, a subclass) is written
directly, and so is anything holding a Secret (parsed_cache.Storable.text refuses to keep it).
"""

from __future__ import annotations

import marshal

from trainerctl.kustomize import yamlemit, yamlread
from trainerctl.kustomize.cachedread import code_tag
from trainerctl.parsed_cache import ParsedCache, Storable, secret_at_top

# Below this many bytes of marshal data the emitter costs about what a cache lookup costs.
MIN_BYTES = 24576
_FORMAT = "kustomize-yaml/2"
_MARSHAL_VERSION = 2


def dump_all(objs: list, cache: ParsedCache | None) -> str:
    """yamlemit.dump_all(objs), large objects' text from `cache` when it has it."""
    if cache is None:
        return yamlemit.dump_all(objs)
    tag = code_tag(_FORMAT, yamlemit.__file__, yamlread.__file__, __file__)
    return "---\n".join([_dump(o, cache, tag) for o in objs])


def _dump(obj, cache: ParsedCache, tag: str) -> str:
    try:
        data = marshal.dumps(obj, _MARSHAL_VERSION)
    except ValueError:  # a type marshal does not know, or nested too deep
        return yamlemit.dump(obj)  # raises what the emitter says of it, if anything
    if len(data) < MIN_BYTES or secret_at_top([obj]):  # a Secret's YAML is never looked up, nor kept
        return yamlemit.dump(obj)
    key = cache.key(data, tag)
    text = cache.get_text(key)
    if text is not None and text.endswith("\n"):
        return text
    text = yamlemit.dump(obj)
    cache.put(key, Storable.text(key, obj, text))
    return text
