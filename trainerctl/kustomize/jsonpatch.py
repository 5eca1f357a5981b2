"""JSON 6902 patches exactly as kustomize applies them: evanphx/json-patch v4.13.0 with the
package defaults kustomize leaves alone, on the object's JSON form.

That library is not RFC 6902 to the letter, and kustomize output follows it:
- a missing object key and a null value read the same: `replace` of a missing key adds it,
  `copy` from a missing key copies a null, `test` of a missing key against null passes;
- `remove` of a missing key fails, `add` under a missing parent fails;
- negative array indices count from the end (SupportNegativeIndices); `add` at -1 appends;
  indices are Go's strconv.Atoi (`+1`, `01` are 1);
- a path's first segment is never read (`a/b` is `/b`); `~1` and `~0` are unescaped, any other
  `~x` is literal; an operation without `value` uses null;
- `test` compares scalars by their JSON text: the document's as Go encodes it, the patch's as
  written (a JSON patch) or as Go encodes it (a YAML patch, converted by sigs.k8s.io/yaml);
  arrays it compares must hold no null up to the first difference (json-patch crashes there);
- `copy` has no size limit there (AccumulatedCopySizeLimit 0); here copies are bounded, as
  aliases are, rather than exhaust memory.
"""

from __future__ import annotations

import copy
import json
import json.decoder
import json.scanner
import re

from trainerctl.kustomize import aliases, gojson

TYPE_CHECKING = False  # typing costs a tenth of a kustomize run's start-up
if TYPE_CHECKING:
    from typing import Any

ABSENT = object()  # an operation without "value"
# The most nodes all `copy` operations of one patch may add (aliases have the same budget).
COPY_BUDGET = aliases.NODE_BUDGET
_ATOI = re.compile(r"[+-]?[0-9]+\Z")
_UNESCAPE = re.compile("~[01]")


class JsonPatchError(Exception):
    """An operation that does not apply; the message is json-patch's own words."""


class _RawNull:
    """A null that an operation's `value` put in the document. json-patch keeps it as its JSON
    text, where a null it read from the document is no node at all: a `test` without a value
    fails on it, and one comparing the object holding it with a null there fails too."""

    __slots__ = ()

    def __deepcopy__(self, memo):
        return self

    def __repr__(self) -> str:
        return "RAW_NULL"


RAW_NULL = _RawNull()  # apply's result holds it where such nulls are: the caller reads it as None


# ---------------------------------------------------------------- the JSON text of values


class _RawStr(str):
    """A string value of a JSON patch, with its text as written."""
    raw: str


class _RawNumber(str):
    """A number of a JSON patch, kept as written."""


class _RawDecoder(json.JSONDecoder):
    """json.loads, keeping the written text of string and number values (not keys)."""

    def __init__(self) -> None:
        super().__init__(parse_float=_RawNumber, parse_int=_RawNumber)
        self.parse_string = self._string
        self.scan_once = json.scanner.py_make_scanner(self)

    @staticmethod
    def _string(s: str, end: int, strict: bool = True):
        value, new_end = json.decoder.scanstring(s, end, strict)
        raw = _RawStr(value)
        raw.raw = s[end - 1:new_end]
        return raw, new_end


def raw_values(text: str) -> list[Any] | None:
    """The `value` of each operation of a JSON-text patch, scalars kept as written (for
    `test`); None when the text is not such a list."""
    try:
        ops = _RawDecoder().decode(text)
    except ValueError:
        return None
    if not isinstance(ops, list):
        return None
    return [op.get("value", ABSENT) if isinstance(op, dict) else ABSENT for op in ops]


def _go_json(value: Any) -> str:
    try:
        return gojson.dumps(value)
    except ValueError as exc:
        raise JsonPatchError(str(exc)) from None


def _text(leaf: Any) -> str:
    if isinstance(leaf, _RawStr):
        return leaf.raw
    if isinstance(leaf, _RawNumber):
        return str(leaf)
    return _go_json(leaf)


def _equal(doc: Any, value: Any) -> bool:
    """json-patch's lazyNode.equal: structure for objects and arrays, JSON text for scalars."""
    if doc is RAW_NULL:
        return value is None
    if isinstance(doc, dict):
        if not isinstance(value, dict) or len(doc) != len(value):
            return False
        for k, v in doc.items():
            if k not in value:
                return False
            ov = value[k]
            if (v is None) != (ov is None):
                return False
            if v is not None and not _equal(v, ov):
                return False
        return True
    if isinstance(doc, list):
        if not isinstance(value, list) or len(doc) != len(value):
            return False
        for d, v in zip(doc, value):
            if d is None or v is None:  # (a RAW_NULL is a node: compared as JSON text)
                # json-patch compares array items without a null check, and crashes
                raise JsonPatchError("a test compares arrays holding a null (kubectl's "
                                     "json-patch crashes on it)")
            if not _equal(d, v):
                return False
        return True
    if isinstance(value, (dict, list)):
        return False
    return _go_json(doc) == _text(value)


# ---------------------------------------------------------------- containers


def _atoi(key: str) -> int:
    if not _ATOI.match(key):
        raise JsonPatchError(f'strconv.Atoi: parsing "{key}": invalid syntax')
    value = int(key)
    if not -(2 ** 63) <= value < 2 ** 63:
        raise JsonPatchError(f'strconv.Atoi: parsing "{key}": value out of range')
    return value


def _invalid(idx: int) -> JsonPatchError:
    return JsonPatchError(f"Unable to access invalid index: {idx}: invalid index referenced")


def _get(con: Any, key: str) -> Any:
    """partialDoc.get / partialArray.get: None for a missing key (no error) or a null."""
    if isinstance(con, dict):
        return con.get(key)
    idx = _atoi(key)
    if idx < 0:
        if idx < -len(con):
            raise _invalid(idx)
        idx += len(con)
    if idx >= len(con):
        raise _invalid(idx)
    return con[idx]


def _set(con: Any, key: str, value: Any) -> None:
    if isinstance(con, dict):
        con[key] = value
        return
    idx = _atoi(key)
    if idx < 0:
        idx += len(con)  # bounds were checked by _get
    con[idx] = value


def _add(con: Any, key: str, value: Any) -> None:
    if isinstance(con, dict):
        con[key] = value
        return
    if key == "-":
        con.append(value)
        return
    try:
        idx = _atoi(key)
    except JsonPatchError as exc:
        raise JsonPatchError(f"value was not a proper array index: '{key}': {exc}") from None
    size = len(con) + 1
    if idx >= size:
        raise _invalid(idx)
    if idx < 0:
        if idx < -size:
            raise _invalid(idx)
        idx += size
    con.insert(idx, value)


def _remove(con: Any, key: str) -> None:
    if isinstance(con, dict):
        if key not in con:
            raise JsonPatchError(f"Unable to remove nonexistent key: {key}: missing value")
        del con[key]
        return
    idx = _atoi(key)
    if idx >= len(con):
        raise _invalid(idx)
    if idx < 0:
        if idx < -len(con):
            raise _invalid(idx)
        idx += len(con)
    del con[idx]


def _find(doc: Any, path: str, missing: str) -> tuple[Any, str]:
    """json-patch's findObject: the container of `path`'s last segment, and that segment;
    `missing` is the error when there is none."""
    split = path.split("/")
    if len(split) < 2:
        raise JsonPatchError(missing)
    con = doc
    for part in split[1:-1]:
        try:
            nxt = _get(con, _unescape(part))
        except JsonPatchError:
            raise JsonPatchError(missing) from None
        if not isinstance(nxt, (dict, list)):
            raise JsonPatchError(missing)
        con = nxt
    return con, _unescape(split[-1])


def _unescape(key: str) -> str:
    return _UNESCAPE.sub(lambda m: "/" if m.group(0) == "~1" else "~", key)


# ---------------------------------------------------------------- operations


def _string_field(op: dict, name: str, kind: str) -> str:
    if name not in op or op[name] is None:
        raise JsonPatchError(f"{kind} operation failed to decode {name}: operation missing "
                             f"{name} field: missing value")
    value = op[name]
    if not isinstance(value, str):
        raise JsonPatchError(f"{kind} operation failed to decode {name}: json: cannot unmarshal "
                             f"{type(value).__name__} into Go value of type string")
    return value


def apply(doc: dict, ops: list, raw: list | None = None) -> Any:
    """Apply `ops` to `doc` (JSON data, changed in place) and return the result; `raw` holds
    the written values of a JSON-text patch (raw_values), for `test`."""
    budget = [COPY_BUDGET]
    for i, op in enumerate(ops):
        kind = op.get("op") if isinstance(op.get("op"), str) else "unknown"
        value = op.get("value", ABSENT)
        written = raw[i] if raw is not None and i < len(raw) else value
        doc = _apply_one(doc, op, kind, value, written, budget)
    return doc


def _value(value: Any) -> Any:
    if value is None:
        return RAW_NULL
    return None if value is ABSENT else copy.deepcopy(value)


def _apply_one(doc: Any, op: dict, kind: str, value: Any, written: Any, budget: list) -> Any:
    if kind == "add":
        path = _string_field(op, "path", kind)
        con, key = _find(doc, path, f'add operation does not apply: doc is missing path: "{path}": missing value')
        _wrapped(lambda: _add(con, key, _value(value)), f"error in add for path: '{path}'")
    elif kind == "remove":
        path = _string_field(op, "path", kind)
        con, key = _find(doc, path, f'remove operation does not apply: doc is missing path: "{path}": missing value')
        _wrapped(lambda: _remove(con, key), f"error in remove for path: '{path}'")
    elif kind == "replace":
        path = _string_field(op, "path", kind)
        if path == "":
            if not isinstance(value, (dict, list)):
                raise JsonPatchError("replace operation value must be object or array")
            return copy.deepcopy(value)
        con, key = _find(doc, path, f"replace operation does not apply: doc is missing path: {path}: missing value")
        try:
            _get(con, key)
        except JsonPatchError:
            raise JsonPatchError(f"replace operation does not apply: doc is missing key: {path}: "
                                 f"missing value") from None
        _set(con, key, _value(value))
    elif kind == "move":
        source = _string_field(op, "from", kind)
        con, key = _find(doc, source, f"move operation does not apply: doc is missing from path: {source}: missing value")
        moved = _wrapped(lambda: _get(con, key), f"error in move for path: '{key}'")
        _wrapped(lambda: _remove(con, key), f"error in move for path: '{key}'")
        path = _string_field(op, "path", kind)
        con, key = _find(doc, path, f"move operation does not apply: doc is missing destination path: {path}: missing value")
        _wrapped(lambda: _add(con, key, moved), f"error in move for path: '{path}'")
    elif kind == "copy":
        source = _string_field(op, "from", kind)
        con, key = _find(doc, source, f"copy operation does not apply: doc is missing from path: {source}: missing value")
        copied = copy.deepcopy(_wrapped(lambda: _get(con, key), f"error in copy for from: '{source}'"))
        path = _string_field(op, "path", kind)
        dest, dest_key = _find(doc, path, f"copy operation does not apply: doc is missing destination path: {path}: missing value")
        budget[0] -= aliases.node_count(copied)
        if budget[0] < 0:
            raise JsonPatchError(f"copy operations add more than {COPY_BUDGET} nodes "
                                 f"(trainerctl's bound; kustomize has none)")
        _wrapped(lambda: _add(dest, dest_key, copied), "error while adding value during copy")
    elif kind == "test":
        path = _string_field(op, "path", kind)
        if path == "":
            if not _equal(doc, written if written is not ABSENT else None):
                raise JsonPatchError(f"testing value {path} failed: test failed")
            return doc
        con, key = _find(doc, path, f"test operation does not apply: is missing path: {path}: missing value")
        current = _wrapped(lambda: _get(con, key), f"error in test for path: '{path}'")
        if current is None:
            if written is ABSENT or written is None:
                return doc
            raise JsonPatchError(f"testing value {path} failed: test failed")
        if written is ABSENT or not _equal(current, written):
            raise JsonPatchError(f"testing value {path} failed: test failed")
    else:
        raise JsonPatchError(f"Unexpected kind: {kind}")
    return doc


def _wrapped(fn, prefix: str) -> Any:
    try:
        return fn()
    except JsonPatchError as exc:
        raise JsonPatchError(f"{prefix}: {exc}") from None
