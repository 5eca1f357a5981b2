"""What a command works on: a rendered file (`-f`) or a fresh render of its flags.

install, diff and upgrade-check share this, so "what would `install` with these flags do" is
answered with the same objects everywhere; render and fetch share `render_options`.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from dataclasses import dataclass

from trainerctl.cli.flags import render_flags_given
from trainerctl.cli.options import render_options
from trainerctl.cluster.engine.discovery import Discovery
from trainerctl.cluster.trainer.preflight import OPENSHIFT_GROUP
from trainerctl.errors import InputError
from trainerctl.gitops.folder import load_folder
from trainerctl.kustomize import yamlio
from trainerctl.owner_label import DEFAULT_OWNER_LABEL, OwnerLabel
from trainerctl.render.options import RenderOptions
from trainerctl.render.pipeline import render
from trainerctl.cli.flags import RenderFlags, SourceFlags
from trainerctl.render.settings import namespace_setting
from trainerctl.source.cachedir import default_cache_dir


@dataclass
class Target:
    objects: list[dict]
    source: dict | object  # {"file": path} or {"folder": path, ...} for -f, else the render's SourceInfo
    owner_label: OwnerLabel
    namespace: str


# Rendered streams above this size are parsed once per distinct content and kept as JSON: a
# no-op `install -f` of the same 3 MB render then spends ~10 ms reading it instead of ~200 ms
# parsing YAML. Small files are parsed every time.
_CACHE_MIN_BYTES = 256 * 1024
_CACHE_KEEP = 8


def load_file(path: str) -> list[dict]:
    """Kubernetes objects from a YAML stream (`-` for stdin) or a folder `render --output-dir` wrote,
    each with apiVersion and kind."""
    shown = "-f -" if path == "-" else path
    try:
        if path == "-":
            data = sys.stdin.buffer.read()
        else:
            with open(path, "rb") as fh:
                data = fh.read()
    except IsADirectoryError:
        return load_folder(path, f"-f {path}").objects
    except OSError as exc:
        raise InputError(f"{shown}: {exc.strerror}") from None
    cache = _ParsedCache(data) if len(data) >= _CACHE_MIN_BYTES else None
    docs = cache.get() if cache else None
    if docs is None:
        docs = _parse(data, shown)
        if cache:
            cache.put(docs)
    return docs


def _parse(data: bytes, shown: str) -> list[dict]:
    # The engine's reader: libyaml's parser with our own fast construction (CRDs are megabytes).
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"{shown}: not UTF-8 text (byte {exc.start}); expected a YAML stream") from None
    docs = yamlio.load_all(text, shown)
    if not docs:
        raise InputError(f"{shown}: no objects in the file")
    for i, doc in enumerate(docs):
        if not isinstance(doc, dict) or not isinstance(doc.get("apiVersion"), str) \
                or not isinstance(doc.get("kind"), str) or not doc["apiVersion"] or not doc["kind"]:
            raise InputError(f"{shown}: document {i + 1}: expected a Kubernetes object with apiVersion and kind")
        if doc["kind"].endswith("List") and "items" in doc:
            raise InputError(f"{shown}: document {i + 1}: List objects are not supported; pass the items")
        meta = doc.get("metadata")
        if not isinstance(meta, dict) or not isinstance(meta.get("name"), str) or not meta["name"]:
            raise InputError(f"{shown}: document {i + 1} ({doc['kind']}): expected metadata.name")
    return docs


class _ParsedCache:
    """The checked objects of one file content, as JSON under the cache dir, keyed by sha256.

    Best effort: an unreadable or unwritable cache only means parsing again. What is stored
    passed every check above, and the engine's reader yields JSON types only (string keys)."""

    def __init__(self, data: bytes):
        self.dir = default_cache_dir() / "parsed"
        self.path = self.dir / (hashlib.sha256(data).hexdigest() + ".json")

    def get(self) -> list[dict] | None:
        try:
            docs = json.loads(self.path.read_bytes())
        except (OSError, ValueError):
            return None
        return docs if isinstance(docs, list) and docs and all(isinstance(d, dict) for d in docs) else None

    def put(self, docs: list[dict]) -> None:
        try:
            self.dir.mkdir(parents=True, exist_ok=True)
            tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
            tmp.write_text(json.dumps(docs, separators=(",", ":")), encoding="utf-8")
            tmp.replace(self.path)
            old = sorted(self.dir.glob("*.json"), key=lambda p: p.stat().st_mtime)[:-_CACHE_KEEP]
            for stale in old:
                stale.unlink(missing_ok=True)
        except (OSError, ValueError):
            pass


def from_file(path: str, namespace: str) -> Target:
    if path != "-" and os.path.isdir(path):  # a folder `render --output-dir` wrote says what it came from
        folder = load_folder(path, f"-f {path}")
        source = {"folder": path, **({"gitops": folder.engine} if folder.engine else {}),
                  **{k: v for k, v in folder.provenance.items() if k != "images"}}
        return Target(folder.objects, source, DEFAULT_OWNER_LABEL, namespace)
    return Target(load_file(path), {"file": path}, DEFAULT_OWNER_LABEL, namespace)


def target(cluster, filename: str | None, source: SourceFlags, render: RenderFlags,
           namespace: str | None) -> Target:
    """-f FILE, or a render of these flags (checked before the cluster is contacted)."""
    if filename:
        given = render_flags_given(source, render)
        if given:
            raise InputError(f"-f {filename} and {given[0]}: {given[0]} changes the render, and -f FILE is "
                             "already rendered (render it with that flag instead)")
        return from_file(filename, namespace_setting(namespace, source.config))
    render.namespace = namespace
    return from_render(cluster, render_options(source, render))


def from_render(cluster, options: RenderOptions) -> Target:
    """Render `options`; the platform, when not set, is detected from the cluster."""
    if options.platform is None:
        options.platform = "openshift" if Discovery(cluster).has_group(OPENSHIFT_GROUP) else "kubernetes"
    result = render(options)
    return Target(result.objects, result.source, OwnerLabel(*result.owner_label), result.namespace)
