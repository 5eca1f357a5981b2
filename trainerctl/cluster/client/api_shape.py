"""What the Kubernetes API promises about the JSON it returns, checked where it arrives.

The client checks every 2xx body with `check_body` before any caller sees it (the items of a
list read with `Cluster.items` are left to their views): objects and list
items have a metadata mapping of the documented types, lists hold objects, status conditions are
mappings of strings, replica counts are integers, a ConfigMap's data maps strings to strings. The
rest of trainerctl can then index those fields without guarding each access, and a server that
answers something else gets one line naming the request and the field (exit 1), never a
traceback. Discovery documents and CRDs have their own, stricter shapes (`check_discovery_*`,
`check_crd`), checked by the code that reads them.
"""

from __future__ import annotations

from typing import Any

from trainerctl.errors import TrainerctlError


class ShapeError(TrainerctlError):
    """A 2xx answer whose JSON is not shaped as the API promises (exit 1)."""


_META_STRINGS = ("name", "namespace", "uid", "resourceVersion", "generateName", "creationTimestamp",
                 "deletionTimestamp", "selfLink")
_STRING_MAPS = ("labels", "annotations")
_CONDITION_STRINGS = ("type", "status", "reason", "message", "lastTransitionTime", "lastUpdateTime")


def _fail(where: str, path: str, expected: str) -> ShapeError:
    return ShapeError(f"{where}: {path}: expected {expected} (the answer is not shaped as the Kubernetes API "
                      "promises)")


def _is_str_map(value: Any) -> bool:
    return isinstance(value, dict) and all(isinstance(k, str) and isinstance(v, str) for k, v in value.items())


def _int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def check_metadata(meta: Any, where: str, path: str) -> None:
    if not isinstance(meta, dict):
        raise _fail(where, path, "a mapping")
    for key in _META_STRINGS:
        if key in meta and not isinstance(meta[key], str):
            raise _fail(where, f"{path}.{key}", "a string")
    if "generation" in meta and not _int(meta["generation"]):
        raise _fail(where, f"{path}.generation", "an integer")
    for key in _STRING_MAPS:
        if meta.get(key) is not None and not _is_str_map(meta[key]):
            raise _fail(where, f"{path}.{key}", "a mapping of strings")
    if meta.get("finalizers") is not None and not (
            isinstance(meta["finalizers"], list) and all(isinstance(f, str) for f in meta["finalizers"])):
        raise _fail(where, f"{path}.finalizers", "a list of strings")
    for key in ("ownerReferences", "managedFields"):
        items = meta.get(key)
        if items is None:
            continue
        if not isinstance(items, list) or not all(isinstance(i, dict) for i in items):
            raise _fail(where, f"{path}.{key}", "a list of mappings")
        for i, item in enumerate(items):
            for field, value in item.items():
                ok = isinstance(value, dict) if field == "fieldsV1" else (
                    isinstance(value, bool) if field in ("controller", "blockOwnerDeletion") else isinstance(value, str))
                if not ok:
                    raise _fail(where, f"{path}.{key}[{i}].{field}", "a value of the documented type")


def _check_status(status: Any, where: str, path: str) -> None:
    if not isinstance(status, dict):
        raise _fail(where, path, "a mapping")
    for key, value in status.items():
        if (key == "replicas" or key.endswith("Replicas") or key == "observedGeneration") and not _int(value):
            raise _fail(where, f"{path}.{key}", "an integer")
    conds = status.get("conditions")
    if conds is None:
        return
    if not isinstance(conds, list):
        raise _fail(where, f"{path}.conditions", "a list")
    for i, cond in enumerate(conds):
        if not isinstance(cond, dict):
            raise _fail(where, f"{path}.conditions[{i}]", "a mapping")
        for key in _CONDITION_STRINGS:
            if key in cond and not isinstance(cond[key], str):
                raise _fail(where, f"{path}.conditions[{i}].{key}", "a string")


def check_object(obj: Any, where: str, path: str = "") -> None:
    """One object of the API (a top-level answer or a list item)."""
    label = path or "the object"
    if not isinstance(obj, dict):
        raise _fail(where, label, "an object (a mapping)")
    prefix = f"{path}." if path else ""
    for key in ("kind", "apiVersion"):
        if key in obj and not isinstance(obj[key], str):
            raise _fail(where, prefix + key, "a string")
    if "metadata" in obj:
        check_metadata(obj["metadata"], where, prefix + "metadata")
    kind = obj.get("kind")
    if kind == "Status":
        return
    if obj.get("status") is not None:
        _check_status(obj["status"], where, prefix + "status")
    spec = obj.get("spec")
    if spec is not None:
        if not isinstance(spec, dict):
            raise _fail(where, prefix + "spec", "a mapping")
        if "replicas" in spec and spec["replicas"] is not None and not _int(spec["replicas"]):
            raise _fail(where, prefix + "spec.replicas", "an integer")
    if kind in ("ConfigMap", "Secret") and obj.get("data") is not None and not _is_str_map(obj["data"]):
        raise _fail(where, prefix + "data", "a mapping of strings")


def check_body(doc: dict, where: str, *, items: bool = True) -> dict:
    """A decoded 2xx answer: one object, or a list whose items are objects. `items=False`: the
    list only; its items are the caller's to read, each through its view (client/views), so one
    that does not fit costs only itself."""
    check_object(doc, where)
    if "items" in doc:
        found = doc["items"]
        if found is None:
            return doc
        if not isinstance(found, list):
            raise _fail(where, "items", "a list")
        for i, item in enumerate(found if items else ()):
            check_object(item, where, f"items[{i}]")
    if "metadata" in doc and isinstance(doc["metadata"], dict):
        if "continue" in doc["metadata"] and not isinstance(doc["metadata"]["continue"], str):
            raise _fail(where, "metadata.continue", "a string")
    return doc


# --- discovery --------------------------------------------------------------------------------
def _list_of_dicts(value: Any, where: str, path: str) -> list[dict]:
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
        raise _fail(where, path, "a list of mappings")
    return value


def _string(value: Any, where: str, path: str, *, required: bool = True) -> str:
    if value is None and not required:
        return ""
    if not isinstance(value, str) or (required and not value):
        raise _fail(where, path, "a non-empty string" if required else "a string")
    return value


def _strings(value: Any, where: str, path: str) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise _fail(where, path, "a list of strings")
    return value


def discovery_versions(doc: dict, where: str) -> list[str]:
    """/api (APIVersions): the core versions."""
    return _strings(doc.get("versions"), where, "versions")


def discovery_groups(doc: dict, where: str) -> list[tuple[str, str]]:
    """/apis (APIGroupList): (group, version) pairs."""
    out = []
    for i, group in enumerate(_list_of_dicts(doc.get("groups"), where, "groups")):
        name = _string(group.get("name"), where, f"groups[{i}].name")
        for j, ver in enumerate(_list_of_dicts(group.get("versions"), where, f"groups[{i}].versions")):
            out.append((name, _string(ver.get("version"), where, f"groups[{i}].versions[{j}].version")))
    return out


def discovery_resources(doc: dict, where: str) -> list[tuple[str, str, bool, tuple[str, ...]]]:
    """/apis/G/V (APIResourceList): (resource, kind, namespaced, verbs)."""
    out = []
    for i, res in enumerate(_list_of_dicts(doc.get("resources"), where, "resources")):
        path = f"resources[{i}]"
        namespaced = res.get("namespaced", False)
        if not isinstance(namespaced, bool):
            raise _fail(where, f"{path}.namespaced", "true or false")
        out.append((_string(res.get("name"), where, f"{path}.name"), _string(res.get("kind"), where, f"{path}.kind"),
                    namespaced, tuple(_strings(res.get("verbs"), where, f"{path}.verbs"))))
    return out


def discovery_aggregated(doc: dict, where: str) -> list[tuple[str, str, str, str, bool, tuple[str, ...]]]:
    """An APIGroupDiscoveryList: (group, version, kind, resource, namespaced, verbs), stale versions left out."""
    out = []
    for i, item in enumerate(_list_of_dicts(doc.get("items"), where, "items")):
        meta = item.get("metadata") or {}
        if not isinstance(meta, dict):
            raise _fail(where, f"items[{i}].metadata", "a mapping")
        group = _string(meta.get("name"), where, f"items[{i}].metadata.name", required=False)
        for j, ver in enumerate(_list_of_dicts(item.get("versions"), where, f"items[{i}].versions")):
            vpath = f"items[{i}].versions[{j}]"
            version = _string(ver.get("version"), where, f"{vpath}.version")
            if _string(ver.get("freshness"), where, f"{vpath}.freshness", required=False) == "Stale":
                continue
            for k, res in enumerate(_list_of_dicts(ver.get("resources"), where, f"{vpath}.resources")):
                rpath = f"{vpath}.resources[{k}]"
                response_kind = res.get("responseKind") or {}
                if not isinstance(response_kind, dict):
                    raise _fail(where, f"{rpath}.responseKind", "a mapping")
                kind = _string(response_kind.get("kind"), where, f"{rpath}.responseKind.kind", required=False)
                if not kind:
                    continue
                scope = _string(res.get("scope"), where, f"{rpath}.scope", required=False)
                out.append((group, version, kind, _string(res.get("resource"), where, f"{rpath}.resource"),
                            scope == "Namespaced", tuple(_strings(res.get("verbs"), where, f"{rpath}.verbs"))))
    return out


# --- CRDs -------------------------------------------------------------------------------------
_SCHEMA_MAPS = ("properties", "patternProperties", "definitions", "dependencies")
_SCHEMA_ONE = ("items", "not", "additionalItems")
_SCHEMA_MANY = ("allOf", "anyOf", "oneOf")


def check_crd(crd: Any, where: str) -> dict:
    """A CustomResourceDefinition as read from the server, down to its versions' schemas."""
    check_object(crd, where)
    if not isinstance(crd.get("metadata"), dict):
        raise _fail(where, "metadata", "a mapping")
    _string(crd["metadata"].get("name"), where, "metadata.name")
    spec = crd.get("spec")
    if not isinstance(spec, dict):
        raise _fail(where, "spec", "a mapping")
    _string(spec.get("group"), where, "spec.group")
    names = spec.get("names")
    if not isinstance(names, dict):
        raise _fail(where, "spec.names", "a mapping")
    for key in ("plural", "kind"):
        _string(names.get(key), where, f"spec.names.{key}")
    _string(spec.get("scope"), where, "spec.scope", required=False)
    for i, ver in enumerate(_list_of_dicts(spec.get("versions"), where, "spec.versions")):
        path = f"spec.versions[{i}]"
        _string(ver.get("name"), where, f"{path}.name")
        for key in ("served", "storage", "deprecated"):
            if key in ver and not isinstance(ver[key], bool):
                raise _fail(where, f"{path}.{key}", "true or false")
        schema = ver.get("schema")
        if schema is None:
            continue
        if not isinstance(schema, dict):
            raise _fail(where, f"{path}.schema", "a mapping")
        if schema.get("openAPIV3Schema") is not None:
            _check_schema(schema["openAPIV3Schema"], where, f"{path}.schema.openAPIV3Schema")
    stored = (crd.get("status") or {}).get("storedVersions")
    _strings(stored, where, "status.storedVersions")
    return crd


def _check_schema(root: Any, where: str, path: str) -> None:
    stack = [(root, path)]
    while stack:
        node, p = stack.pop()
        if not isinstance(node, dict):
            raise _fail(where, p, "a schema (a mapping)")
        for key in ("type", "format", "pattern", "description"):
            if key in node and not isinstance(node[key], str):
                raise _fail(where, f"{p}.{key}", "a string")
        if "required" in node:
            _strings(node["required"], where, f"{p}.required")
        if "x-kubernetes-validations" in node:
            for i, rule in enumerate(_list_of_dicts(node["x-kubernetes-validations"], where,
                                                    f"{p}.x-kubernetes-validations")):
                for key in ("rule", "message", "messageExpression", "reason", "fieldPath"):
                    if key in rule and not isinstance(rule[key], str):
                        raise _fail(where, f"{p}.x-kubernetes-validations[{i}].{key}", "a string")
        for key in _SCHEMA_MAPS:
            if key in node:
                children = node[key]
                if not isinstance(children, dict):
                    raise _fail(where, f"{p}.{key}", "a mapping")
                stack.extend((child, f"{p}.{key}.{name}") for name, child in children.items()
                             if not isinstance(child, list))
        for key in _SCHEMA_ONE:
            if key in node and node[key] is not None:
                stack.append((node[key], f"{p}.{key}"))
        if "additionalProperties" in node and not isinstance(node["additionalProperties"], bool):
            stack.append((node["additionalProperties"], f"{p}.additionalProperties"))
        for key in _SCHEMA_MANY:
            if key in node:
                stack.extend((child, f"{p}.{key}[{i}]")
                             for i, child in enumerate(_list_of_dicts(node[key], where, f"{p}.{key}")))
