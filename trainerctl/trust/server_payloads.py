"""Payloads inside server data, decoded within their limits: base64, gzip, JSON and YAML streams
(e.g. a Helm release record), so a 4 MB gzip never expands towards 4 GiB. Undecodable says why
in words; the caller names the object and field."""

from __future__ import annotations

import base64
import binascii
import json
import zlib
from typing import Any

from trainerctl.trust.document_bounds import ALIAS_SLACK, MAX_DEPTH, alias_expansion_ok, too_deep, yaml_problem
from trainerctl.trust.limits import limit_for, too_large
from trainerctl.trust.safe_text import clean


class Undecodable(ValueError):
    """A payload inside server data that does not decode within its limits; the message says why
    in words (the caller names the object and field)."""


def b64decode(text: str | bytes, limit: str = "decoded") -> bytes:
    """Strict base64 (no stray characters), refused before decoding when the result would pass
    the limit."""
    max_bytes = limit_for(limit)
    if len(text) // 4 * 3 > max_bytes:
        raise Undecodable(too_large(limit, max_bytes))
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        raise Undecodable("not base64") from None


def gunzip(data: bytes, limit: str = "decoded") -> bytes:
    """gzip data (one or more members) decompressed a bounded piece at a time: a small bomb is
    refused once its output passes the limit, never expanded whole."""
    max_bytes = limit_for(limit)
    out = bytearray()
    rest = data
    while rest:
        inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
        try:
            chunk = inflater.decompress(rest, max_bytes + 1 - len(out))
            out += chunk
            while inflater.unconsumed_tail and len(out) <= max_bytes:
                out += inflater.decompress(inflater.unconsumed_tail, max_bytes + 1 - len(out))
        except zlib.error:
            raise Undecodable("bad gzip data") from None
        if len(out) > max_bytes:
            raise Undecodable(too_large(limit, max_bytes))
        if not inflater.eof:
            raise Undecodable("gzip data cut short")
        rest = inflater.unused_data
    return bytes(out)


def load_json(data: str | bytes, limit: str = "decoded") -> Any:
    """JSON from server data: within the byte limit and MAX_DEPTH levels of nesting."""
    max_bytes = limit_for(limit)
    if len(data) > max_bytes:
        raise Undecodable(too_large(limit, max_bytes))
    try:
        value = json.loads(data)
    except RecursionError:
        raise Undecodable(f"nested deeper than {MAX_DEPTH} levels") from None
    except json.JSONDecodeError as exc:
        raise Undecodable(f"not JSON ({clean(exc.msg, 80)}, line {exc.lineno} column {exc.colno})") from None
    except UnicodeDecodeError:
        raise Undecodable("not UTF-8 text") from None
    except ValueError:  # Python refuses integers of more than 4,300 digits
        raise Undecodable("not JSON trainerctl reads (a number of thousands of digits)") from None
    if too_deep(value):
        raise Undecodable(f"nested deeper than {MAX_DEPTH} levels")
    return value


def load_yaml_stream(text: str, limit: str = "decoded") -> list:
    """Every document of a YAML stream inside server data (a Helm release's manifest): safe types,
    within the byte limit, MAX_DEPTH levels and the alias budget; Undecodable says why not."""
    import yaml

    max_bytes = limit_for(limit)
    if len(text) > max_bytes:
        raise Undecodable(too_large(limit, max_bytes))
    try:
        if not alias_expansion_ok(text):
            raise Undecodable(f"its aliases expand to more than {ALIAS_SLACK:,} nodes (an alias bomb?)")
        docs = list(yaml.load_all(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)))
    except yaml.YAMLError as exc:
        raise Undecodable(f"not YAML: {yaml_problem(exc)}") from None
    except RecursionError:
        raise Undecodable(f"nested deeper than {MAX_DEPTH} levels") from None
    if any(too_deep(doc) for doc in docs):
        raise Undecodable(f"nested deeper than {MAX_DEPTH} levels")
    return docs
