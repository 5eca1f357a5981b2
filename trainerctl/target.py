"""What a cluster command works on: a rendered file (`-f`) or a fresh render.

install, diff and upgrade-check share this, so "what would `install` with these flags do" is
answered with the same objects everywhere.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

from trainerctl.errors import InputError


@dataclass
class Target:
    objects: list[dict]
    source: dict | object  # {"file": path} for -f, else the render's SourceInfo
    owner_label: str  # KEY=VALUE
    namespace: str


def load_file(path: str) -> list[dict]:
    """Kubernetes objects from a YAML stream (`-` for stdin), each with apiVersion and kind."""
    # The engine's reader: libyaml's parser with our own fast construction (CRDs are megabytes).
    from trainerctl.kustomize import yamlio

    shown = "-f -" if path == "-" else path
    try:
        if path == "-":
            data = sys.stdin.buffer.read()
        else:
            with open(path, "rb") as fh:
                data = fh.read()
    except IsADirectoryError:
        raise InputError(f"{shown}: is a directory; expected a YAML file") from None
    except OSError as exc:
        raise InputError(f"{shown}: {exc.strerror}") from None
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


def from_file(path: str, namespace: str) -> Target:
    from trainerctl.cluster.objects import DEFAULT_OWNER_LABEL

    return Target(load_file(path), {"file": path},
                  DEFAULT_OWNER_LABEL, namespace)


def from_render(cluster, options) -> Target:
    """Render `options` (RenderOptions); the platform, when not set, is detected from the cluster."""
    from trainerctl.render import render

    if options.platform is None:
        from trainerctl.cluster.discovery import Discovery
        from trainerctl.cluster.preflight import OPENSHIFT_GROUP

        options.platform = "openshift" if Discovery(cluster).has_group(OPENSHIFT_GROUP) else "kubernetes"
    result = render(options)
    return Target(result.objects, result.source, "=".join(result.owner_label), result.namespace)
