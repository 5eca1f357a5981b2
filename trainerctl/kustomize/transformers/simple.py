"""Transformers that set one value along field specs: namespace, name affixes, labels,
annotations, replicas and images."""

from __future__ import annotations

import re

from trainerctl.kustomize import fieldspecs as fsm
from trainerctl.kustomize.errors import KustomizeError
from trainerctl.kustomize.fieldspecs import FieldSpec
from trainerctl.kustomize.kustfile import check_fields
from trainerctl.kustomize.resource import Resource

_ROLE_BINDINGS = ("RoleBinding", "ClusterRoleBinding")


def set_namespace(resources: list[Resource], namespace: str, specs: list[FieldSpec]) -> None:
    for r in resources:
        if not r.obj:
            continue
        r.store_previous()
        gvk = r.gvk
        if not gvk.cluster_scoped:
            r.metadata["namespace"] = namespace
        if gvk.kind in _ROLE_BINDINGS:
            # kustomize's default for bindings: only subjects named "default" move with the
            # namespace; the others follow their ServiceAccount through name references.
            for subject in r.obj.get("subjects") or []:
                if isinstance(subject, dict) and subject.get("name") == "default":
                    subject["namespace"] = namespace
        for spec in specs:
            if spec.path == ("metadata", "namespace"):
                continue
            if gvk.kind in _ROLE_BINDINGS and spec.path[0] in ("subjects", "subjects[]"):
                continue
            if spec.applies_to(gvk):
                fsm.walk(r.obj, spec, fsm.SCALAR, lambda parent, key: parent.__setitem__(key, namespace))
    _check_unique(resources, "namespace transformation produces ID conflict")


def _check_unique(resources: list[Resource], message: str) -> None:
    seen = {}
    for r in resources:
        key = r.id.key()
        if key in seen:
            raise KustomizeError(f"{message}: {r.id}")
        seen[key] = r


_AFFIX_SKIP = ("CustomResourceDefinition", "APIService", "Namespace")


def add_affix(resources: list[Resource], prefix: str, suffix: str, specs: list[FieldSpec]) -> None:
    for r in resources:
        gvk = r.gvk
        if gvk.kind == "CustomResourceDefinition" or gvk.kind == "Namespace" or (
            gvk.kind == "APIService" and gvk.group == "apiregistration.k8s.io"
        ):
            continue
        r.store_previous()
        r.affixes.append((prefix, suffix))
        for spec in specs:
            if spec.applies_to(gvk):
                def visit(parent, key):
                    value = parent.get(key)
                    if isinstance(value, str):
                        parent[key] = f"{prefix}{value}{suffix}"
                fsm.walk(r.obj, spec, fsm.SCALAR, visit)


def set_map_entries(resources: list[Resource], pairs: dict, specs: list[FieldSpec], what: str) -> None:
    """Add `pairs` to the mappings at `specs` (labels, selectors, annotations)."""
    if not pairs:
        return
    for k, v in pairs.items():
        if not isinstance(v, str):
            raise KustomizeError(f"{what}: value of {k!r} must be a string, got {v!r}")
    for r in resources:
        gvk = r.gvk
        for spec in specs:
            if not spec.applies_to(gvk):
                continue

            def visit(parent, key):
                current = parent.get(key)
                if current is None:
                    current = {}
                    parent[key] = current
                if not isinstance(current, dict):
                    raise KustomizeError(
                        f"{r.source}: {what}: {spec.path_string} in {r.id} is not a mapping"
                    )
                current.update(pairs)

            fsm.walk(r.obj, spec, fsm.MAPPING, visit)


def set_replicas(resources: list[Resource], entries: list, specs: list[FieldSpec], where: str) -> None:
    for i, entry in enumerate(entries):
        check_fields(entry, {"name", "count"}, f"{where}: replicas[{i}]")
        name, count = entry.get("name"), entry.get("count")
        if not isinstance(count, int) or isinstance(count, bool):
            raise KustomizeError(f"{where}: replicas[{i}].count must be a number")
        for r in resources:
            if name not in [n for n, _ in r.all_names()]:
                continue
            matched = False
            for spec in specs:
                if spec.applies_to(r.gvk):
                    matched = True
                    fsm.walk(r.obj, spec, fsm.SCALAR, lambda p, k: p.__setitem__(k, count))
            if not matched:
                raise KustomizeError(
                    f"{where}: replicas[{i}]: resource with name {name} does not match a config "
                    f"with a replicas field"
                )


# --- images


def split_image(image: str) -> tuple[str, str, str]:
    """name, tag, digest; a registry port before the first '/' is not a tag."""
    slash = image.find("/")
    search = image[slash:] if slash > 0 else image
    offset = slash if slash > 0 else 0
    at, colon = search.find("@"), search.find(":")
    if at < 0 and colon < 0:
        return image, "", ""
    if at >= 0 and (colon < 0 or at < colon):
        return image[: at + offset], "", image[at + offset + 1:]
    if at >= 0 and colon >= 0:
        return image[: colon + offset], image[colon + offset + 1: at + offset], image[at + offset + 1:]
    return image[: colon + offset], image[colon + offset + 1:], ""


def _image_setter(entry: dict):
    name = entry["name"]
    pattern = re.compile("^" + name + r"(@sha256)?(:[a-zA-Z0-9_.{}-]*)?$")
    new_name = entry.get("newName") or ""
    new_tag = entry.get("newTag")
    new_tag = "" if new_tag is None else str(new_tag)
    digest = entry.get("digest") or ""

    def update(value: str) -> str:
        if not pattern.match(value):
            return value
        n, tag, dig = split_image(value)
        if new_name:
            n = new_name
        if new_tag and digest:
            tag, dig = new_tag, digest
        elif new_tag:
            tag, dig = new_tag, ""
        elif digest:
            tag, dig = "", digest
        if tag:
            n += ":" + tag
        if dig:
            n += "@" + dig
        return n

    return update


def _legacy_containers(node, update) -> None:
    """Every `containers`/`initContainers` list anywhere in the object, as kustomize does."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key in ("containers", "initContainers") and isinstance(value, list):
                for c in value:
                    if isinstance(c, dict) and isinstance(c.get("image"), str):
                        c["image"] = update(c["image"])
            _legacy_containers(value, update)
    elif isinstance(node, list):
        for item in node:
            _legacy_containers(item, update)


def set_images(resources: list[Resource], entries: list, specs: list[FieldSpec], where: str) -> None:
    for i, entry in enumerate(entries):
        check_fields(entry, {"name", "newName", "newTag", "digest", "tagSuffix"}, f"{where}: images[{i}]")
        if not isinstance(entry.get("name"), str) or not entry["name"]:
            raise KustomizeError(f"{where}: images[{i}].name is required")
        if isinstance(entry.get("newTag"), (int, float)) and not isinstance(entry.get("newTag"), bool):
            raise KustomizeError(f"{where}: images[{i}].newTag must be a string (quote it)")
        update = _image_setter(entry)
        for r in resources:
            _legacy_containers(r.obj, update)
            for spec in specs:
                if spec.applies_to(r.gvk):
                    def visit(parent, key):
                        if isinstance(parent.get(key), str):
                            parent[key] = update(parent[key])
                    for parent, key in fsm.field_values(r.obj, spec):
                        visit(parent, key)
