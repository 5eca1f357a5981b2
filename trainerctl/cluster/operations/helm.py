"""Helm releases as Helm 3 and 4 store them, read without Helm: which objects a release owns.

Helm keeps one record per revision, by default a Secret `sh.helm.release.v1.NAME.vREVISION` of
type `helm.sh/release.v1` in the release's namespace, labelled `owner=helm`, `name=NAME`,
`status=…`, `version=REVISION` (the `configmap` driver keeps the same record in a ConfigMap). Its
`release` key holds base64(gzip(JSON)) of the release, and a Secret's data is base64 once more in
the API. The JSON has the chart's metadata, the rendered `manifest` (every object Helm created
for the release, as a YAML stream) and the `hooks` (objects Helm creates around install, upgrade
and delete, outside the manifest).

Helm marks what it created with `meta.helm.sh/release-name` and `meta.helm.sh/release-namespace`
annotations and the `app.kubernetes.io/managed-by: Helm` label (charts add it), and applies as
field manager `helm` (Helm 4 with server-side apply, Helm 3 with updates). Hooks get neither the
annotations nor the label unless the chart sets them.
"""

from __future__ import annotations

import base64
import binascii
import gzip
import json
import re
from dataclasses import dataclass, field

import yaml

from trainerctl.cluster.client.client import ApiError, Cluster, object_path
from trainerctl.cluster.client.discovery import split_api_version
from trainerctl.cluster.manager.objects import Ref

RELEASE_TYPE = "helm.sh/release.v1"
RECORD_PREFIX = "sh.helm.release.v1."
RECORD_SELECTOR = "owner=helm"
NAME_ANNOTATION = "meta.helm.sh/release-name"
NAMESPACE_ANNOTATION = "meta.helm.sh/release-namespace"
MANAGED_BY_LABEL = ("app.kubernetes.io/managed-by", "Helm")
FIELD_MANAGER = "helm"
_RECORD_NAME = re.compile(r"^sh\.helm\.release\.v1\.(?P<name>.+)\.v(?P<revision>\d+)$")
_GZIP_MAGIC = b"\x1f\x8b\x08"


class ReleaseDecodeError(ValueError):
    """A release record that is not what Helm writes."""


def decode_payload(payload: str | bytes) -> dict:
    """Helm's encoding of a release (base64 of gzip of JSON; older Helm 3 wrote it uncompressed)."""
    try:
        raw = base64.b64decode(payload, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise ReleaseDecodeError(f"not base64: {exc}") from None
    if raw[:3] == _GZIP_MAGIC:
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError) as exc:
            raise ReleaseDecodeError(f"bad gzip data: {exc}") from None
    try:
        release = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        raise ReleaseDecodeError(f"not JSON: {exc}") from None
    if not isinstance(release, dict):
        raise ReleaseDecodeError("not a JSON object")
    return release


def decode_record(record: dict) -> dict:
    """The release JSON inside a release Secret or ConfigMap as the API returns it."""
    data = (record.get("data") or {}).get("release")
    if not isinstance(data, str):
        raise ReleaseDecodeError("no data.release")
    if record.get("kind") == "Secret":
        try:
            data = base64.b64decode(data, validate=True).decode("ascii")
        except (binascii.Error, ValueError, UnicodeDecodeError) as exc:
            raise ReleaseDecodeError(f"data.release is not base64 text: {exc}") from None
    return decode_payload(data)


def encode_payload(release: dict) -> str:
    """What Helm writes (tests build release records with it)."""
    raw = json.dumps(release, separators=(",", ":")).encode()
    return base64.b64encode(gzip.compress(raw, compresslevel=9)).decode()


@dataclass(frozen=True)
class Record:
    """One stored revision: the Secret or ConfigMap holding it."""

    kind: str  # Secret | ConfigMap
    namespace: str
    name: str
    revision: int
    status: str

    @property
    def path(self) -> str:
        resource = "secrets" if self.kind == "Secret" else "configmaps"
        return object_path("", "v1", resource, self.namespace, self.name)

    @property
    def display(self) -> str:
        return f"{self.kind} {self.namespace}/{self.name}"


@dataclass
class Release:
    """A release (all its stored revisions) and what it owns."""

    name: str
    namespace: str
    records: list[Record] = field(default_factory=list)
    revisions: dict[int, dict] = field(default_factory=dict)  # revision -> decoded release JSON

    @property
    def current(self) -> dict:
        """The deployed revision, else the newest (a failed or pending install still created objects)."""
        deployed = [r.revision for r in self.records if r.status == "deployed" and r.revision in self.revisions]
        revision = max(deployed) if deployed else max(self.revisions, default=0)
        return self.revisions.get(revision, {})

    @property
    def revision(self) -> int:
        return int(self.current.get("version") or 0)

    @property
    def status(self) -> str:
        return str((self.current.get("info") or {}).get("status") or "unknown")

    @property
    def chart(self) -> str:
        return str(((self.current.get("chart") or {}).get("metadata") or {}).get("name") or "")

    @property
    def chart_version(self) -> str:
        return str(((self.current.get("chart") or {}).get("metadata") or {}).get("version") or "")

    @property
    def display(self) -> str:
        return f"{self.name} in namespace {self.namespace}"

    def describe(self) -> str:
        chart = f"chart {self.chart}-{self.chart_version}" if self.chart else "chart unknown"
        return f"Helm release {self.display} ({chart}, revision {self.revision}, {self.status})"

    def manifest_objects(self) -> list[dict]:
        """Every object the stored revisions' manifests name (Helm deletes what an upgrade
        dropped, so an older revision's object that is still there is still the release's)."""
        return _unique(obj for rev in sorted(self.revisions) for obj in
                       parse_manifest(self.revisions[rev].get("manifest") or ""))

    def hook_objects(self) -> list[dict]:
        return _unique(obj for rev in sorted(self.revisions)
                       for hook in self.revisions[rev].get("hooks") or [] if isinstance(hook, dict)
                       for obj in parse_manifest(hook.get("manifest") or ""))

    def owns(self, meta: dict) -> bool:
        """Whether live metadata names this release as its owner (Helm's annotations)."""
        annotations = (meta or {}).get("annotations") or {}
        return (annotations.get(NAME_ANNOTATION) == self.name
                and annotations.get(NAMESPACE_ANNOTATION, self.namespace) == self.namespace)


def parse_manifest(text: str) -> list[dict]:
    """The objects of a rendered manifest. Whether an object without a namespace is namespaced is
    for discovery to say (ref_in puts the release's namespace on those that are)."""
    out = []
    try:
        docs = list(yaml.safe_load_all(text))
    except yaml.YAMLError as exc:
        raise ReleaseDecodeError(f"manifest is not YAML: {exc}") from None
    for doc in docs:
        if isinstance(doc, dict) and str(doc.get("kind", "")).endswith("List") and isinstance(doc.get("items"), list):
            out.extend(d for d in doc["items"] if _is_object(d))
        elif _is_object(doc):
            out.append(doc)
    return out


def _is_object(doc) -> bool:
    return isinstance(doc, dict) and bool(doc.get("kind")) and isinstance(doc.get("metadata"), dict) \
        and bool(doc["metadata"].get("name"))


def ref_in(obj: dict, namespace: str, namespaced: bool) -> Ref:
    group, _ = split_api_version(obj.get("apiVersion", ""))
    meta = obj.get("metadata") or {}
    return Ref(group, obj.get("kind", ""), (meta.get("namespace") or namespace) if namespaced else "",
               meta.get("name", ""))


def _unique(objects) -> list[dict]:
    seen, out = set(), []
    for obj in objects:
        meta = obj.get("metadata") or {}
        key = (split_api_version(obj.get("apiVersion", ""))[0], obj.get("kind"), meta.get("namespace"),
               meta.get("name"))
        if key not in seen:
            seen.add(key)
            out.append(obj)
    return out


def _records(cluster: Cluster, resource: str, namespace: str | None) -> list[dict]:
    path = object_path("", "v1", resource, namespace)
    items, token = [], None
    while True:
        page = cluster.request("GET", path, query={"labelSelector": RECORD_SELECTOR, "limit": "100",
                                                   "continue": token})
        items.extend(page.get("items") or [])
        token = (page.get("metadata") or {}).get("continue")
        if not token:
            return items


def list_records(cluster: Cluster, namespace: str) -> list[dict]:
    """Helm's release records (with their kind), cluster-wide when we may list them everywhere,
    else in `namespace`."""
    out = []
    for resource, kind in (("secrets", "Secret"), ("configmaps", "ConfigMap")):
        for scope in (None, namespace):
            try:
                out.extend({**item, "kind": kind} for item in _records(cluster, resource, scope))
                break
            except ApiError as exc:
                if exc.status not in (401, 403):
                    raise
    return out


def releases_from_records(records: list[dict]) -> list[Release]:
    """Group release records by release; records that are not Helm's are left out."""
    found: dict[tuple[str, str], Release] = {}
    for rec in records:
        meta = rec.get("metadata") or {}
        kind = rec.get("kind") or "Secret"
        if kind == "Secret" and rec.get("type") != RELEASE_TYPE:
            continue
        match = _RECORD_NAME.match(meta.get("name") or "")
        labels = meta.get("labels") or {}
        if not match or labels.get("owner") != "helm":
            continue
        name, revision = labels.get("name") or match["name"], int(match["revision"])
        ns = meta.get("namespace") or ""
        release = found.setdefault((ns, name), Release(name, ns))
        release.records.append(Record(kind, ns, meta["name"], revision, labels.get("status") or ""))
        try:
            release.revisions[revision] = decode_record({**rec, "kind": kind})
        except ReleaseDecodeError:
            pass  # an unreadable revision: its record still goes when the release is handed over
    for release in found.values():
        release.records.sort(key=lambda r: r.revision)
    return [found[k] for k in sorted(found)]


def find_releases(cluster: Cluster, namespace: str) -> list[Release]:
    return releases_from_records(list_records(cluster, namespace))


def owner_of(meta: dict | None) -> tuple[str, str] | None:
    """(release name, namespace) when live metadata carries Helm's ownership annotations."""
    annotations = (meta or {}).get("annotations") or {}
    name = annotations.get(NAME_ANNOTATION)
    if not name:
        return None
    return name, annotations.get(NAMESPACE_ANNOTATION) or (meta or {}).get("namespace") or ""


def ownership_patch(meta: dict) -> list[dict]:
    """JSON patch operations removing Helm's ownership marks from an object ([] when it has none)."""
    ops = []
    annotations = meta.get("annotations") or {}
    for key in sorted(annotations):
        if key.startswith("meta.helm.sh/"):
            ops.append({"op": "remove", "path": f"/metadata/annotations/{json_pointer(key)}"})
    label, value = MANAGED_BY_LABEL
    if (meta.get("labels") or {}).get(label) == value:
        ops.append({"op": "remove", "path": f"/metadata/labels/{json_pointer(label)}"})
    return ops


def json_pointer(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")
