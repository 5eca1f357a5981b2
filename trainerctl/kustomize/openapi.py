"""The OpenAPI data a build consults, kept as kyaml's openapi package keeps it: which kinds are
cluster-scoped, and which lists a strategic merge patch merges, by which keys.

Built in: kyaml's precomputed scope table (Kubernetes v1.21.2) and data/patch_strategies.json.

A kustomization's `openapi` field changes both for the rest of the build, by kyaml's rules
(process-wide state in kustomize; one `BuildSchema` per build here):
- The top kustomization's field counts first; without one, the first base or component loaded
  that has the field. Once set, a later `openapi` is ignored, though its `path` is still read.
- `version` must be the one built in (v1.21.2), which is the default data.
- `path` names a custom schema, JSON or YAML (an OpenAPI v2 document: `definitions` give merge
  keys, and kinds through x-kubernetes-group-version-kind; `paths` give scope). It is read when
  the field is set and parsed the first time the build needs schema data: a strategic merge
  patch, or the scope of a kind the precomputed table does not know. As in kustomize, a broken
  schema the build never needs is no error.
- A custom schema replaces the built-in merge data, unless that data was already in use (a
  strategic merge patch ran) or flagged for use (a kind the precomputed table does not know was
  loaded) before the field was set: then both are used, and the one parsed later wins on a
  definition name or a kind they share.
- Scope: the precomputed table first, always; then a custom schema's paths (a kind with a GET
  path under namespaces/{namespace} is namespaced, one with only other paths cluster-scoped).
"""

from __future__ import annotations

import json
import os

from trainerctl.kustomize import yamlread
from trainerctl.kustomize.errors import KustomizeError
from trainerctl.kustomize.schema import describe

TYPE_CHECKING = False  # typing costs a tenth of a kustomize run's start-up
if TYPE_CHECKING:
    from typing import Any

BUILTIN_VERSION = "v1.21.2"

# A custom type's entry for the values of a map (its additionalProperties). Keys starting with
# `$` never name a patch field (they are directives), so this cannot shadow one.
ANY_FIELD = "$additionalProperties"


def _pairs(text: str) -> frozenset:
    return frozenset(tuple(line.split()) for line in text.strip().splitlines())


# kyaml's precomputedIsNamespaceScoped, as (apiVersion, kind): consulted before any schema.
CLUSTER_SCOPED = _pairs("""
admissionregistration.k8s.io/v1 MutatingWebhookConfiguration
admissionregistration.k8s.io/v1 ValidatingWebhookConfiguration
admissionregistration.k8s.io/v1beta1 MutatingWebhookConfiguration
admissionregistration.k8s.io/v1beta1 ValidatingWebhookConfiguration
apiextensions.k8s.io/v1 CustomResourceDefinition
apiextensions.k8s.io/v1beta1 CustomResourceDefinition
apiregistration.k8s.io/v1 APIService
apiregistration.k8s.io/v1beta1 APIService
certificates.k8s.io/v1 CertificateSigningRequest
certificates.k8s.io/v1beta1 CertificateSigningRequest
flowcontrol.apiserver.k8s.io/v1beta1 FlowSchema
flowcontrol.apiserver.k8s.io/v1beta1 PriorityLevelConfiguration
networking.k8s.io/v1 IngressClass
networking.k8s.io/v1beta1 IngressClass
node.k8s.io/v1 RuntimeClass
node.k8s.io/v1beta1 RuntimeClass
policy/v1beta1 PodSecurityPolicy
rbac.authorization.k8s.io/v1 ClusterRole
rbac.authorization.k8s.io/v1 ClusterRoleBinding
rbac.authorization.k8s.io/v1beta1 ClusterRole
rbac.authorization.k8s.io/v1beta1 ClusterRoleBinding
scheduling.k8s.io/v1 PriorityClass
scheduling.k8s.io/v1beta1 PriorityClass
storage.k8s.io/v1 CSIDriver
storage.k8s.io/v1 CSINode
storage.k8s.io/v1 StorageClass
storage.k8s.io/v1 VolumeAttachment
storage.k8s.io/v1beta1 CSIDriver
storage.k8s.io/v1beta1 CSINode
storage.k8s.io/v1beta1 StorageClass
storage.k8s.io/v1beta1 VolumeAttachment
v1 ComponentStatus
v1 Namespace
v1 Node
v1 NodeProxyOptions
v1 PersistentVolume
""")
NAMESPACED = _pairs("""
apps/v1 ControllerRevision
apps/v1 DaemonSet
apps/v1 Deployment
apps/v1 ReplicaSet
apps/v1 StatefulSet
autoscaling/v1 HorizontalPodAutoscaler
autoscaling/v1 Scale
autoscaling/v2beta1 HorizontalPodAutoscaler
autoscaling/v2beta2 HorizontalPodAutoscaler
batch/v1 CronJob
batch/v1 Job
batch/v1beta1 CronJob
coordination.k8s.io/v1 Lease
coordination.k8s.io/v1beta1 Lease
discovery.k8s.io/v1 EndpointSlice
discovery.k8s.io/v1beta1 EndpointSlice
events.k8s.io/v1 Event
events.k8s.io/v1beta1 Event
extensions/v1beta1 Ingress
networking.k8s.io/v1 Ingress
networking.k8s.io/v1 NetworkPolicy
networking.k8s.io/v1beta1 Ingress
policy/v1 PodDisruptionBudget
policy/v1beta1 PodDisruptionBudget
rbac.authorization.k8s.io/v1 Role
rbac.authorization.k8s.io/v1 RoleBinding
rbac.authorization.k8s.io/v1beta1 Role
rbac.authorization.k8s.io/v1beta1 RoleBinding
storage.k8s.io/v1beta1 CSIStorageCapacity
v1 ConfigMap
v1 Endpoints
v1 Event
v1 LimitRange
v1 PersistentVolumeClaim
v1 Pod
v1 PodAttachOptions
v1 PodExecOptions
v1 PodPortForwardOptions
v1 PodProxyOptions
v1 PodTemplate
v1 ReplicationController
v1 ResourceQuota
v1 Secret
v1 Service
v1 ServiceAccount
v1 ServiceProxyOptions
""")
PRECOMPUTED = CLUSTER_SCOPED | NAMESPACED

# Kinds the custom schema in use declares cluster-scoped (and the precomputed table does not
# know). resid.Gvk.cluster_scoped reads it; every build starts it empty.
EXTRA_CLUSTER_SCOPED: set[tuple[str, str]] = set()

_DATA = os.path.join(os.path.dirname(__file__), "data", "patch_strategies.json")


def read_builtin_table() -> dict:
    """{"kinds": {"apiVersion/kind": type}, "types": {type: {field: [child, strategy, merge
    key, list-map keys]}}}: what strategic merge reads (smp.py). Read once per build that
    needs it (BuildSchema.builtin_table); no cache across builds: it paid nothing (docs/benchmarks.md)."""
    with open(_DATA, encoding="utf-8") as f:
        return json.load(f)


_NOT_PARSED, _DELAYED, _PARSED = range(3)


class BuildSchema:
    """kyaml's schema state for one build: which data is set, parsed, or flagged for parsing."""

    def __init__(self) -> None:
        self.version = ""  # kyaml's kubernetesOpenAPIVersion: "", BUILTIN_VERSION or "custom"
        self.custom: tuple[bytes, str] | None = None  # schema bytes, and the file's name
        self.ready = False  # kyaml's schemaInit
        self.builtin = _NOT_PARSED
        self.layers: list[dict] = []  # parsed tables, in parse order
        self.table: dict | None = None  # the merged table once a custom schema is parsed
        self.scope: dict[tuple[str, str], bool] = {}  # kind -> namespaced, from custom paths
        self.watching = True  # whether a loaded kind can still change the state
        self._builtin_table: dict | None = None  # read when first needed

    def builtin_table(self) -> dict:
        if self._builtin_table is None:
            self._builtin_table = read_builtin_table()
        return self._builtin_table

    # --- the `openapi` field (kyaml's SetSchema)

    def set_from(self, field: dict, loader, kname: str, top: bool) -> None:
        data = None
        if "path" in field:
            data = (_read(loader, field["path"], kname), loader.name(field["path"]))
        if (self.version or self.custom is not None) and not top:
            return
        if data is not None:
            if "version" in field:
                raise KustomizeError(f"{kname}: field `openapi`: builtin version and custom "
                                     f"schema provided, cannot use both")
            self.custom, self.version, self.ready = data, "custom", False
            self._watch()
            return
        self.version = field.get("version", "")
        if not self.version:
            return
        if self.version != BUILTIN_VERSION:
            raise KustomizeError(f"{kname}: field `openapi.version`: {self.version!r} is not "
                                 f"built in (kustomize v5.8.1 has {BUILTIN_VERSION})")
        self.custom, self.ready = None, False
        self._watch()

    # --- what triggers parsing

    def saw(self, resources) -> None:
        """Resources entering the build (kustomize asks each one's scope as it adds it)."""
        if not self.watching:
            return
        for r in resources:
            gvk = r.gvk
            if (gvk.api_version, gvk.kind) in PRECOMPUTED:
                continue
            if self.custom is not None:
                self._init()
            else:
                self.builtin = _DELAYED
                self._watch()
            return

    def smp_table(self) -> dict:
        """The merge table for a strategic merge patch (kyaml's SchemaForResourceType)."""
        if not self.ready:
            self._init()
        return self.builtin_table() if self.table is None else self.table

    # --- kyaml's initSchema

    def _watch(self) -> None:
        self.watching = not self.ready and (self.custom is not None
                                            or self.builtin == _NOT_PARSED)

    def _init(self) -> None:
        self.ready = True
        if self.custom is not None:
            self._add(parse_custom(*self.custom))
        else:
            self._add(self.builtin_table())
            self.builtin = _PARSED
        if self.builtin == _DELAYED:
            self._add(self.builtin_table())
            self.builtin = _PARSED
        self._watch()

    def _add(self, layer: dict) -> None:
        self.layers.append(layer)
        builtin = self.builtin_table()
        if all(x is builtin for x in self.layers):
            return
        kinds: dict = {}
        types: dict = {}
        for x in self.layers:
            kinds.update(x["kinds"])
            types.update(x["types"])
        self.table = {"kinds": kinds, "types": types}
        for key, namespaced in layer.get("scope", {}).items():
            # kyaml's findNamespaceability: a namespaced path wins, whatever came first.
            self.scope[key] = self.scope.get(key, False) or namespaced
        EXTRA_CLUSTER_SCOPED.clear()
        EXTRA_CLUSTER_SCOPED.update(k for k, ns in self.scope.items()
                                    if not ns and k not in PRECOMPUTED)


_current = BuildSchema()


def begin() -> BuildSchema:
    """A fresh schema state for a new build."""
    global _current
    _current = BuildSchema()
    EXTRA_CLUSTER_SCOPED.clear()
    return _current


def current() -> BuildSchema:
    return _current


def saw(resources) -> None:
    if _current.watching:
        _current.saw(resources)


def _read(loader, path: str, kname: str) -> bytes:
    try:
        return loader.read(path)
    except KustomizeError as exc:
        raise KustomizeError(f"{kname}: field `openapi.path`: {exc}") from None


# --------------------------------------------------------------------------- custom schemas

STR, BOOL, NUM, INT, STRS, LIST, MAP = "a string", "true or false", "a number", "an integer", \
    "a list of strings", "a list", "a mapping"
# Typed fields of kube-openapi's spec.Swagger and spec.Schema: another type fails its decoding
# (and kustomize with it). Nested schemas are checked by `_check_schema`.
_SWAGGER_FIELDS = {"swagger": STR, "host": STR, "basePath": STR, "id": STR, "consumes": STRS,
                   "produces": STRS, "schemes": STRS, "info": MAP, "parameters": MAP,
                   "responses": MAP, "securityDefinitions": MAP, "security": LIST, "tags": LIST,
                   "externalDocs": MAP, "definitions": MAP, "paths": MAP}
_SCHEMA_FIELDS = {"id": STR, "description": STR, "nullable": BOOL, "format": STR, "title": STR,
                  "maximum": NUM, "exclusiveMaximum": BOOL, "minimum": NUM,
                  "exclusiveMinimum": BOOL, "maxLength": INT, "minLength": INT, "pattern": STR,
                  "maxItems": INT, "minItems": INT, "uniqueItems": BOOL, "multipleOf": NUM,
                  "enum": LIST, "maxProperties": INT, "minProperties": INT, "required": STRS,
                  "allOf": LIST, "oneOf": LIST, "anyOf": LIST, "not": MAP, "properties": MAP,
                  "patternProperties": MAP, "dependencies": MAP, "definitions": MAP,
                  "discriminator": STR, "readOnly": BOOL, "xml": MAP, "externalDocs": MAP,
                  # the extensions strategic merge reads
                  "x-kubernetes-patch-strategy": STR, "x-kubernetes-patch-merge-key": STR,
                  "x-kubernetes-list-map-keys": STRS}


def _is(value: Any, expected: str) -> bool:
    if expected is STR:
        return isinstance(value, str)
    if expected is BOOL:
        return isinstance(value, bool)
    if expected is NUM:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if expected is INT:
        return isinstance(value, int) and not isinstance(value, bool) or \
            isinstance(value, float) and value.is_integer()
    if expected is STRS:
        return isinstance(value, list) and all(isinstance(v, str) for v in value)
    if expected is LIST:
        return isinstance(value, list)
    return isinstance(value, dict)


class _Parser:
    """One custom schema document → a layer of the merge table plus scope by kind."""

    def __init__(self, doc: dict, source: str):
        self.doc = doc
        self.source = source
        self.defs = doc.get("definitions") or {}
        self.types: dict[str, dict] = {}
        self.inline: dict[int, str] = {}

    def fail(self, path: str, expected: str, value: Any) -> KustomizeError:
        return KustomizeError(f"{self.source}: invalid OpenAPI schema: field `{path}` must be "
                              f"{expected}, got {describe(value)}")

    def check(self, obj: dict, fields: dict, path: str) -> None:
        for key, expected in fields.items():
            value = obj.get(key)
            if value is not None and expected is not None and not _is(value, expected):
                raise self.fail(f"{path}.{key}" if path else key, expected, value)

    def check_schema(self, node: Any, path: str) -> None:
        if node is None:
            return
        if not isinstance(node, dict):
            raise self.fail(path, "a schema (a mapping)", node)
        self.check(node, _SCHEMA_FIELDS, path)
        kind = node.get("type")
        if kind is not None and not (isinstance(kind, str) or _is(kind, STRS)):
            raise self.fail(f"{path}.type", "a string or a list of strings", kind)
        items = node.get("items")
        if items is not None and not isinstance(items, dict):
            # kyaml reads a list's elements from `items` as one schema (a tuple of schemas
            # makes it crash).
            raise self.fail(f"{path}.items", "a schema (a mapping)", items)
        for key in ("properties", "patternProperties", "definitions"):
            for name, sub in (node.get(key) or {}).items():
                self.check_schema(sub, f"{path}.{key}.{name}")
        for key in ("allOf", "oneOf", "anyOf"):
            for i, sub in enumerate(node.get(key) or []):
                self.check_schema(sub, f"{path}.{key}[{i}]")
        for key in ("items", "not"):
            self.check_schema(node.get(key), f"{path}.{key}")
        for key in ("additionalProperties", "additionalItems"):
            if isinstance(node.get(key), dict):
                self.check_schema(node[key], f"{path}.{key}")

    def gvk(self, ext: Any, path: str) -> tuple[str, str]:
        """kyaml's toTypeMeta (which crashes on a missing version or kind)."""
        for key in ("version", "kind"):
            if not isinstance(ext.get(key), str):
                raise self.fail(f"{path}.{key}", STR, ext.get(key))
        version, kind, group = ext["version"], ext["kind"], ext.get("group")
        return (f"{group}/{version}" if isinstance(group, str) and group else version), kind

    # --- $ref resolution (kyaml resolves JSON pointers against the whole document)

    def resolve(self, node: dict) -> tuple[dict | None, str | None]:
        """Follow `$ref`s: (the schema, its definition name when it is a whole definition).
        A definition this document lacks gives (None, name): the built-in data may have it."""
        name = None
        seen = 0
        while isinstance(node.get("$ref"), str) and node["$ref"]:
            seen += 1
            if seen > 100:
                return None, None
            pointer = node["$ref"].partition("#")[2]
            parts = [p.replace("~1", "/").replace("~0", "~") for p in pointer.split("/")[1:]]
            if len(parts) == 2 and parts[0] == "definitions":
                name = parts[1]
                if name not in self.defs:
                    return None, name
            else:
                name = None
            target: Any = self.doc
            for p in parts:
                if isinstance(target, dict) and p in target:
                    target = target[p]
                elif isinstance(target, list) and p.isascii() and p.isdigit() and int(p) < len(target):
                    target = target[int(p)]
                else:
                    return None, None
            if not isinstance(target, dict):
                return None, None
            node = target
        return node, name

    def name_of(self, node: dict, name: str | None, where: str) -> str:
        if name is not None:
            return name
        known = self.inline.get(id(node))
        if known is None:
            known = self.inline[id(node)] = f"#{where}"
            self.register(node, known)
        return known

    def entry(self, prop: Any, where: str) -> list:
        if not isinstance(prop, dict):
            return []
        node, name = self.resolve(prop)
        if node is None:
            return [name] if name else []
        strategy = node.get("x-kubernetes-patch-strategy")
        merge_key = node.get("x-kubernetes-patch-merge-key")
        map_keys = None
        if strategy:
            keys = node.get("x-kubernetes-list-map-keys")
            if keys is not None:
                # kyaml: with a strategy, list-map-keys name the keys (merge key or not).
                merge_key = keys[0] if len(keys) == 1 else (merge_key if keys else None)
                map_keys = keys if len(keys) > 1 else None
        kind = node.get("type")
        if kind == "array" or kind == ["array"]:
            items = node.get("items")
            child = None
            if isinstance(items, dict):
                element, ename = self.resolve(items)
                if element is not None:
                    child = self.name_of(element, ename, f"{where}[]")
                else:
                    child = ename
        else:
            child = self.name_of(node, name, where)
        out = [child, strategy or None, merge_key or None, map_keys]
        while out and out[-1] is None:
            out.pop()
        return out

    def register(self, node: dict, name: str) -> None:
        fields: dict[str, list] = {}
        self.types[name] = fields
        for field, prop in (node.get("properties") or {}).items():
            fields[str(field)] = self.entry(prop, f"{name}/{field}")
        extra = node.get("additionalProperties")
        if isinstance(extra, dict):
            fields[ANY_FIELD] = self.entry(extra, f"{name}/*")

    def layer(self) -> dict:
        self.check(self.doc, _SWAGGER_FIELDS, "")
        kinds: dict[str, str] = {}
        for name, d in self.defs.items():
            self.check_schema(d, f"definitions.{name}")
        for name, d in self.defs.items():
            if not isinstance(d, dict):
                self.types[str(name)] = {}
                continue
            self.register(d, str(name))
            exts = d.get("x-kubernetes-group-version-kind")
            if not isinstance(exts, list):
                continue
            for i, ext in enumerate(exts):
                if isinstance(ext, dict):
                    api, kind = self.gvk(ext, f"definitions.{name}.x-kubernetes-group-version-kind[{i}]")
                    kinds[f"{api}/{kind}"] = str(name)
        return {"kinds": kinds, "types": self.types, "scope": self.scopes()}

    def scopes(self) -> dict:
        out: dict[tuple[str, str], bool] = {}
        for path, item in (self.doc.get("paths") or {}).items():
            if not str(path).startswith("/") or item is None:
                continue
            if not isinstance(item, dict):
                raise self.fail(f"paths.{path}", "a mapping", item)
            get = item.get("get")
            if get is None:
                continue
            if not isinstance(get, dict):
                raise self.fail(f"paths.{path}.get", "a mapping", get)
            ext = get.get("x-kubernetes-group-version-kind")
            if not isinstance(ext, dict):
                continue
            key = self.gvk(ext, f"paths.{path}.get.x-kubernetes-group-version-kind")
            out[key] = out.get(key, False) or "namespaces/{namespace}" in str(path)
        return out


def parse_custom(data: bytes, source: str) -> dict:
    """A custom schema file (kyaml's parse: JSON when it starts with `{`, YAML otherwise)."""
    if not data:
        raise KustomizeError(f"{source}: invalid OpenAPI schema: the file is empty")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise KustomizeError(f"{source}: invalid OpenAPI schema: not UTF-8 text") from None
    if text.startswith("{"):
        doc = _json(text, source)
    else:
        doc = yamlread.load(text, source, yaml11=True)
    if doc is None:
        return {"kinds": {}, "types": {}, "scope": {}}
    if not isinstance(doc, dict):
        raise KustomizeError(f"{source}: invalid OpenAPI schema: expected a mapping with "
                             f"`definitions` and `paths`, got {describe(doc)}")
    return _Parser(doc, source).layer()


def _json(text: str, source: str) -> Any:
    def pairs(items):
        out = {}
        for k, v in items:
            if k in out:
                raise ValueError(f"duplicate name {k!r}")
            out[k] = v
        return out

    def constant(name):
        raise ValueError(f"invalid literal {name}")

    try:
        return json.loads(text, object_pairs_hook=pairs, parse_constant=constant)
    except ValueError as exc:
        raise KustomizeError(f"{source}: invalid OpenAPI schema: not valid JSON: {exc}") from None
