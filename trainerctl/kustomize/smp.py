"""Strategic merge patch, as `kustomize build` applies it: kyaml's merge walk (merge2 over
walk.Walker, patch elements prepended), step for step, because its output follows its steps.

The walk visits the target and the patch together, every map of the target included:
- Maps: a null in the patch deletes the field; `$patch: delete|replace|merge` applies to the
  map holding it. A map the target lacks is the patch's, walked against itself (its nulls and
  directives are cleared). A target's null is kept when spelled (`null`, `~`) and cleared when
  written as nothing (`key:`), unless the patch sets that field.
- Lists merge only where the schema says so (openapi.py: data/patch_strategies.json or a
  kustomization's `openapi` schema); any other list is the patch's, verbatim.
- A merging list: the patch's key values first, then the target's, each once; for each, the
  first element with that value in the target and in the patch are merged, and the result
  replaces every element of that value. Elements that share a key value therefore collapse into
  one, in the target as in the patch; an element without the key (or a null one) wipes the
  keyed elements of the target; `$patch: delete|replace|merge` as a list's element applies to
  the list.

kyaml knows no other directive: `$setElementOrder/…`, `$retainKeys` and
`$deleteFromPrimitiveList/…` are ordinary fields there, and so here.

kyaml merges nodes, which know more than values: a value set into a field takes the style of
the one it replaces (a number replacing a quoted string reads back as a string; yamlread.Styled
keeps a string's style where its text would not say it), and of a key written twice
(yamlread.Mapping.dups) the first is the field, the next one uncovered when it is cleared.

The target is changed in place and returned (or None when the patch deletes it); the patch is
consumed (its nodes move into the result, its directives are removed).
"""

from __future__ import annotations

from trainerctl.kustomize import openapi
from trainerctl.kustomize.errors import KustomizeError
from trainerctl.kustomize.yamlemit import scalar_text
from trainerctl.kustomize.yamlread import Styled, needs_quotes, resolve_plain

TYPE_CHECKING = False  # typing costs a tenth of a kustomize run's start-up
if TYPE_CHECKING:
    from typing import Any

# A field or element a side does not have (kyaml: a nil node); the walk returns it to clear one.
_ABSENT = object()
_DIRECTIVES = ("delete", "replace", "merge")


def apply(target: dict, patch: dict, source: str = "") -> tuple[dict | None, bool]:
    """Merge `patch` (from `source`) into `target`: (the target, or None when it is deleted;
    whether it now holds a yamlread.Styled string)."""
    table = openapi.current().smp_table()  # kustomize reads the schema even for a delete
    walk = _Walk(table["kinds"], table["types"])
    try:
        merged = walk.node(target, patch, None, None, "")
    except KustomizeError as exc:
        raise KustomizeError(f"{source}: {exc}" if source else str(exc)) from None
    if merged is _ABSENT or merged is None:
        return None, False
    # kyaml merges into the target's own nodes and kustomize keeps those: a result in their
    # place (`$patch: replace` at the top) is not taken.
    return target, walk.styled


def _text(value: Any) -> str:
    """A node's Value as kyaml compares it: a scalar's text, "" for a map or a list."""
    if isinstance(value, str):
        return value
    if isinstance(value, (dict, list)):
        return ""
    return scalar_text(value)


def _field_text(element: dict, key: str) -> str:
    """The Value of a field: a null written as nothing is ""."""
    value = element[key]
    if value is None and key in getattr(element, "bare", ()):
        return ""
    return _text(value)


def _quoted(text: str) -> bool:
    """Whether kyaml holds the string `text` in a quoted (or block) style: a Styled one as it
    says (read quoted without need, or left so by a merge); any other when it could not be
    plain."""
    if text.__class__ is Styled:
        return text.quoted
    return needs_quotes(text)


def _kind(value: Any) -> str:
    return "MappingNode" if isinstance(value, dict) else \
        "SequenceNode" if isinstance(value, list) else "ScalarNode"


def _wrong_kind(path: str, expected: str, value: Any) -> KustomizeError:
    return KustomizeError(f"strategic merge patch: wrong node kind for {path or 'the object'}: "
                          f"expected {expected}, was {_kind(value)} (kubectl: wrong Node Kind)")


def _unknown(value: Any) -> KustomizeError:
    return KustomizeError(f"strategic merge patch: unknown patch strategy {_text(value)!r} "
                          f"($patch takes delete, replace or merge)")


class _Walk:
    """One merge: the schema it reads."""

    __slots__ = ("kinds", "types", "styled")

    def __init__(self, kinds: dict, types: dict):
        self.kinds, self.types = kinds, types
        self.styled = False

    def node(self, dest: Any, origin: Any, type_name: str | None, info: list | None,
             path: str) -> Any:
        """kyaml's Walker.Walk over [dest, origin]: the merged node, or _ABSENT to clear it."""
        first = dest if dest is not _ABSENT and dest is not None else origin
        if first is _ABSENT or first is None:
            return self.map(dest, origin, type_name, path)  # kyaml walks two nulls as maps
        for side in (dest, origin):
            if side is not _ABSENT and side is not None and _kind(side) != _kind(first):
                raise _wrong_kind(path, _kind(first), side)
        if isinstance(first, dict):
            return self.map(dest, origin, type_name, path)
        if isinstance(first, list):
            strategy = info[1] if info and len(info) > 1 else None
            if strategy and "merge" in strategy.split(","):
                return self.merging_list(dest, origin, info, path)
        # a scalar, or a list that does not merge: the patch's when it has one (a null clears)
        return origin if origin is not _ABSENT else dest

    def restyled(self, value: Any, quoted: bool) -> Any:
        """A scalar set where one of style `quoted` was takes that style (kyaml's FieldSetter):
        quoted, a number or boolean reads back as a string; a string whose text calls for the
        other style is Styled."""
        if not isinstance(value, str):
            return _text(value) if quoted else value
        if _quoted(value) == quoted:
            return str(value) if value.__class__ is Styled else value
        self.styled = True
        return Styled(value, quoted)

    def schema(self, type_name: str | None, sides: tuple) -> str | None:
        """kyaml's GetSchema: a map with no schema of its own takes its kind's, when it names
        one (apiVersion and kind), the target's first."""
        if type_name is not None:
            return type_name
        for side in sides:
            if isinstance(side, dict):
                api, kind = side.get("apiVersion"), side.get("kind")
                if api and kind and not isinstance(api, (dict, list)) \
                        and not isinstance(kind, (dict, list)):
                    found = self.kinds.get(f"{_text(api)}/{_text(kind)}")
                    if found is not None:
                        return found
        return None

    def map(self, dest: Any, origin: Any, type_name: str | None, path: str) -> Any:
        """VisitMap, then every field of both sides in name order (kyaml's walkMap)."""
        dest = _visit(dest, origin, _map_directive, when_added=True)
        if dest is _ABSENT:
            return _ABSENT
        type_name = self.schema(type_name, (dest, origin))
        fields = self.types.get(type_name) if type_name is not None else None
        theirs = origin if isinstance(origin, dict) and origin is not dest else None
        names = set(dest)
        if theirs is not None:
            names.update(theirs)
        bare = getattr(dest, "bare", ())
        for key in sorted(names):
            d = dest.get(key, _ABSENT)
            o = theirs.get(key, _ABSENT) if theirs is not None else (
                d if origin is dest else _ABSENT)
            if o is _ABSENT:
                if d is None:
                    if key in bare:
                        _clear(dest, key)  # a null written as nothing is set again as nothing
                    continue
                if not isinstance(d, (dict, list)):
                    continue  # a scalar of the target's alone stays
            info = fields.get(key) if fields else None
            if info is None and fields:
                info = fields.get(openapi.ANY_FIELD)
            value = self.node(d, o, info[0] if info else None, info, f"{path}.{key}" if path else key)
            if value is _ABSENT or value is None:
                _clear(dest, key)
                continue
            if value is not d and d is not _ABSENT and not isinstance(d, (dict, list)) \
                    and not isinstance(value, (dict, list)):
                value = self.restyled(value, _quoted(d) if isinstance(d, str) else False)
            dest[key] = value
        return dest

    def merging_list(self, dest: Any, origin: Any, info: list, path: str) -> Any:
        """VisitList, then kyaml's walkAssociativeSequence."""
        dest = _visit(dest, origin, _list_directive, when_added=False)
        if dest is _ABSENT:
            return _ABSENT
        sources = (dest, origin)
        map_keys = info[3] if len(info) > 3 and info[3] else None
        keys = list(map_keys) if map_keys else [info[2]] if len(info) > 2 and info[2] else []
        values = _element_values(keys, sources)
        return self.set_elements(values, keys or [""], sources, info[0], path)

    def set_elements(self, values: list, keys: list, sources: tuple, element_type: str | None,
                     path: str) -> Any:
        """kyaml's setAssociativeSequenceElements, then appendListNode (prepending)."""
        dest = sources[0]
        items: list = []
        if len(keys) > 1:
            values = _merge_values(values)
        valid_keys, valid_values = keys, []
        for value in values:
            if not value:
                continue
            valid_keys, valid_values = _validate_keys(values, value, keys)
            lookup_keys, lookup_values = _validate_keys([valid_values], valid_values, valid_keys)
            pair = [_element(side, lookup_keys, lookup_values, path) for side in sources]
            merged = self.node(pair[0], pair[1], element_type, None, path)
            if merged is _ABSENT or merged is None or merged == {}:
                _set_element(dest, None, valid_keys, valid_values, path)
                continue
            if isinstance(merged, dict):
                for key, text in zip(valid_keys, valid_values):
                    if key not in merged and text != "":
                        merged[key] = resolve_plain(text)  # kyaml sets the key it matched by
            _set_element(items, merged, valid_keys, valid_values, path)
        if values:
            dest = _append_list(items, dest, valid_keys, path)
        return _ABSENT if dest is None else dest


def _clear(node: dict, key: str) -> None:
    """kyaml's FieldClearer: the field leaves; of a key written twice, the next one is the
    field now."""
    node.pop(key, None)
    dups = getattr(node, "dups", ())
    for i, (k, v) in enumerate(dups):
        if k == key:
            node[key] = v
            node.dups = dups[:i] + dups[i + 1:]
            return


def _visit(dest: Any, origin: Any, directive, when_added: bool) -> Any:
    """kyaml's VisitMap/VisitList: the node to merge into (the patch's where the target has none
    or the patch says replace), or _ABSENT to clear the field. A map the target lacks still
    obeys `$patch: delete` (`when_added`); a list does not."""
    if dest is _ABSENT or dest is None:
        if when_added and directive(origin, strict=False) == "delete":
            return _ABSENT
        dest = origin  # added: the patch's, walked against itself
    elif origin is None:
        return _ABSENT
    elif origin is not _ABSENT:
        found = directive(origin, strict=True)
        if found == "delete":
            return _ABSENT
        if found == "replace":
            dest = origin
    return _ABSENT if dest is None else dest


def _map_directive(patch: Any, strict: bool) -> str:
    """A map's `$patch`, removed from it; an unknown one fails where the target has the map
    (`strict`) and is kept as a field where it does not, as kyaml does."""
    if not isinstance(patch, dict) or "$patch" not in patch:
        return "merge"
    value = _text(patch["$patch"])
    if value in _DIRECTIVES:
        del patch["$patch"]
        return value
    if strict:
        raise _unknown(patch["$patch"])
    return "unknown"


def _list_directive(patch: list, strict: bool) -> str:
    """kyaml's list directive: the first element holding `$patch`, when that is its only key;
    every element carrying the same directive leaves the patch. (Read only where the target
    has the list: an unknown one always fails.)"""
    first = next((p for p in patch if isinstance(p, dict) and "$patch" in p), None)
    if first is None or len(first) > 1:
        return "merge"
    value = _text(first["$patch"])
    if value not in _DIRECTIVES:
        raise _unknown(first["$patch"])
    _set_element(patch, None, ["$patch"], [value], "")
    return value


def _key_text(element: Any, key: str) -> str:
    """ElementValuesList's value: "" where the key is missing, null or an empty collection."""
    if not isinstance(element, dict):
        return ""
    value = element.get(key)
    if value is None or isinstance(value, (dict, list)):
        return ""  # an empty or a full collection: kyaml's Value of one is "" either way
    return _text(value)


def _element_values(keys: list, sources: tuple) -> list:
    """Every element's key values (its text, for a list of scalars: no keys), the patch's
    first, each once."""
    out: list = []
    seen: set = set()
    for side in (sources[1], sources[0]):
        if not isinstance(side, list):
            continue
        for element in side:
            value = [_key_text(element, k) for k in keys] if keys else [_text(element)]
            marker = tuple(value)
            if marker not in seen:
                seen.add(marker)
                out.append(value)
    return out


def _validate_keys(values_list: list, values: list, keys: list) -> tuple[list, list]:
    """The keys some element gives a value (all when none does) and this element's values
    for them."""
    valid = {keys[i] for vs in values_list for i, v in enumerate(vs) if v != ""}
    if not valid:
        return keys, values
    return ([k for k in keys if k in valid],
            [v for i, v in enumerate(values) if v != "" or keys[i] in valid])


def _merge_values(values_list: list) -> list:
    """Elements whose keys agree but where one leaves a key out are the same element (a port
    with and without its protocol)."""
    for i in range(len(values_list)):
        first = values_list[i]
        for j in range(len(values_list)):
            merged = _match(first, values_list[j])
            if merged is not None:
                values_list[i] = merged
                values_list[j] = merged
    return values_list


def _match(a: list, b: list) -> list | None:
    if len(a) != len(b):
        return None
    common = False
    out = []
    for x, y in zip(a, b):
        if x == y:
            common = True
            out.append(x)
        elif x != "" and y != "":
            return None
        else:
            out.append(x or y)
    return out if common else None


def _element(side: Any, keys: list, values: list, path: str) -> Any:
    """The first element of `side` matching every key value (ElementList), or _ABSENT."""
    if not isinstance(side, list):
        return _ABSENT
    if not keys or keys[0] == "":
        for element in side:
            if _text(element) == values[0]:
                return element
        return _ABSENT
    for element in side:
        if isinstance(element, dict) and all(
                k in element and _field_text(element, k) == v for k, v in zip(keys, values)):
            return element
    return _ABSENT


def _field_matches(element: Any, key: str, text: str, path: str) -> bool:
    """kyaml's FieldMatcher as ElementSetter uses it: an empty `text` matches any value."""
    if key == "":
        if isinstance(element, (dict, list)):
            raise _wrong_kind(path, "ScalarNode", element)
        return _text(element) == text
    if not isinstance(element, dict):
        raise _wrong_kind(path, "MappingNode", element)
    if key not in element:
        return False
    return text == "" or _field_text(element, key) == text


def _set_element(seq: list, element: Any, keys: list, values: list, path: str) -> None:
    """kyaml's ElementSetter: every element matching the key values becomes `element` (or
    leaves, for None); without a match it is appended. Null and empty-map elements leave on
    the way, and with no values to match, so does every other one."""
    if not keys:
        keys = [""]
    mapping_setter = keys[0] != "" and bool(values) and values[0] != ""
    kept = []
    found = False
    for item in seq:
        if item is None or (item.__class__ is not list and item == {}):
            continue
        if mapping_setter and not isinstance(item, dict):
            kept.append(item)
            continue
        matched = bool(values)
        for j in range(min(len(keys), len(values))):
            if not _field_matches(item, keys[j], values[j], path):
                matched = False
                break
        if not matched:
            if values:
                kept.append(item)
            continue
        found = True
        if element is not None:
            kept.append(element)
    seq[:] = kept
    if element is not None and not found:
        seq.append(element)


def _append_list(dst: list, src: list, keys: list, path: str) -> list:
    """kyaml's appendListNode: the target's elements set into the merged ones, in order."""
    for element in list(src):
        if keys[0] == "":
            _set_element(dst, element, [""], [_text(element)], path)
            continue
        values = []
        for key in keys:
            if element is None:
                dst.append(element)
                continue
            if not isinstance(element, dict):
                raise _wrong_kind(path, "MappingNode", element)
            if key not in element:
                dst.append(element)  # kyaml appends an element without the key, for each such key
                continue
            values.append(_field_text(element, key))
        if len(keys) > 1:
            _set_element(dst, None, keys, values, path)
        _set_element(dst, element, keys, values, path)
    return dst
