"""`-f FILE`: rendered manifests read from a YAML stream (`-` for stdin) or a folder `render
--output-dir` wrote, each document checked to be a Kubernetes object, and every Secret's values
(as given, base64 and decoded) registered as credentials (trainerctl.trust.redact) before anything else
happens, so no message or output can show them. The folder reader loads only for a folder
(manifest_folder.py, through the package's lazy names).
"""

from __future__ import annotations

import base64
import binascii
import os
from dataclasses import dataclass, field

from trainerctl import target
from trainerctl.cachedir import cache_home
from trainerctl.errors import InputError
from trainerctl.kustomize import cachedstream
from trainerctl.owner_label import DEFAULT_OWNER_LABEL, OwnerLabel
from trainerctl.render.image_refs import image_origins
from trainerctl.trust import redact
from trainerctl.trust.bounded_read import read_input, shown_path
from trainerctl.trust.document_bounds import MAX_DEPTH, too_deep
from trainerctl.trust.safe_text import field_name


@dataclass(frozen=True)
class Target:
    objects: list[dict]
    source: dict | object  # {"file": path} or {"folder": path, ...} for -f, else the render's SourceInfo
    owner_label: OwnerLabel
    namespace: str
    recipe: dict = field(default_factory=dict)  # how the render was asked for (render/recipe.py); {} for -f


def load_file(path: str, cache_dir: str | None = None) -> list[dict]:
    """Kubernetes objects from a YAML stream (`-` for stdin) or a folder `render --output-dir` wrote,
    each with apiVersion and kind.

    The values of every Secret are registered as credentials (trainerctl.trust.redact) before anything
    else happens, so no message or output can show them. A stream's documents are read through
    the cache under `cache_dir`'s home (kustomize/cachedstream.py: every document but a Secret)."""
    if path != "-" and os.path.isdir(path):
        return target.read_folder(path).objects
    shown = "-f -" if path == "-" else f"-f {shown_path(path)}"
    return _parse(read_input(path, shown, "file", stdin=True), shown, _stream_cache(cache_dir))


def _stream_cache(cache_dir: str | None):
    """The cache of -f files' documents, holding what it learns until the file is checked (a
    file that fails its checks leaves nothing behind); None when the home cannot be one (an
    empty HOME): caching is best effort, and without it the file is only parsed again."""
    try:
        cache = cachedstream.stream_cache(cache_home(cache_dir))
    except InputError:
        return None
    cache.hold()
    return cache


def is_secret(doc: dict) -> bool:
    return doc.get("kind") == "Secret" and doc.get("apiVersion") == "v1"


def register_secret_values(doc: dict) -> None:
    """Every value of a Secret's data (as given, base64, and decoded) and stringData."""
    for key in ("data", "stringData"):
        values = doc.get(key)
        if not isinstance(values, dict):
            continue
        for value in values.values():
            if not isinstance(value, str):
                continue
            redact.register(value)
            if key == "data":
                try:
                    redact.register(base64.b64decode("".join(value.split()), validate=True))
                except (binascii.Error, ValueError):
                    pass


def _parse(data: bytes, shown: str, cache=None) -> list[dict]:
    # The engine's reader: libyaml's parser with our own fast construction (CRDs are megabytes).
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"{shown}: not UTF-8 text (byte {exc.start}); expected a YAML stream") from None
    try:
        docs = cachedstream.load_all(text, shown, cache)
    except RecursionError:
        raise InputError(f"{shown}: nested deeper than {MAX_DEPTH} levels") from None
    if not docs:
        raise InputError(f"{shown}: no objects in the file")
    for doc in docs:  # first, so that no error below can show a Secret's value
        if isinstance(doc, dict) and doc.get("kind") == "Secret":
            register_secret_values(doc)
    for i, doc in enumerate(docs):
        if too_deep(doc):
            raise InputError(f"{shown}: document {i + 1}: nested deeper than {MAX_DEPTH} levels")
        if not isinstance(doc, dict) or not isinstance(doc.get("apiVersion"), str) \
                or not isinstance(doc.get("kind"), str) or not doc["apiVersion"] or not doc["kind"]:
            raise InputError(f"{shown}: document {i + 1}: expected a Kubernetes object with apiVersion and kind")
        if doc["kind"].endswith("List") and "items" in doc:
            raise InputError(f"{shown}: document {i + 1}: List objects are not supported; pass the items")
        meta = doc.get("metadata")
        if not isinstance(meta, dict) or not isinstance(meta.get("name"), str) or not meta["name"]:
            raise InputError(f"{shown}: document {i + 1} ({field_name(doc['kind'])}): expected metadata.name")
    if cache is not None:
        cache.flush()
    return docs


def from_file(path: str, namespace: str, owner_label: OwnerLabel = DEFAULT_OWNER_LABEL,
              cache_dir: str | None = None) -> Target:
    """`owner_label`: the settings' (a file's objects carry it already; the namespace gets it, and
    prune, uninstall and status find ours by it). `cache_dir`: the settings' (load_file)."""
    if path != "-" and os.path.isdir(path):  # a folder `render --output-dir` wrote says what it came from
        folder = target.read_folder(path)
        source = {"folder": path, **({"gitops": folder.engine} if folder.engine else {}),
                  **{k: v for k, v in folder.provenance.items() if k != "images"},
                  "images": image_origins(folder.objects, default=f"-f {path}")}
        return Target(folder.objects, source, owner_label, namespace)
    objects = load_file(path, cache_dir)
    return Target(objects, {"file": path, "images": image_origins(objects, default=f"-f {path}")},
                  owner_label, namespace)
