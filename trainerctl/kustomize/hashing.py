"""The name-suffix hash kustomize gives generated ConfigMaps and Secrets."""

from __future__ import annotations

from trainerctl.kustomize import gojson
from trainerctl.trust.sha256 import sha256


def _encode(hex_digest: str) -> str:
    # Consonants and digits only, so the suffix never spells a word.
    table = str.maketrans({"0": "g", "1": "h", "3": "k", "a": "m", "e": "t"})
    return hex_digest[:10].translate(table)


def _value(obj: dict, key: str):
    v = obj.get(key)
    return "" if v is None else v


def hash_of(obj: dict) -> str:
    kind = obj.get("kind")
    # kustomize looks the name up as one field literally called "metadata/name", which never
    # exists: the name is always hashed as "". Matching that keeps our suffixes identical.
    name = ""
    if kind == "ConfigMap":
        m = {"kind": "ConfigMap", "name": name, "data": _value(obj, "data")}
        if isinstance(obj.get("binaryData"), dict):
            m["binaryData"] = obj["binaryData"]
    elif kind == "Secret":
        m = {"kind": "Secret", "type": _value(obj, "type"), "name": name, "data": _value(obj, "data")}
        if isinstance(obj.get("stringData"), dict):
            m["stringData"] = obj["stringData"]
    else:
        m = obj
    return _encode(sha256(gojson.dumps(m).encode()).hexdigest())
