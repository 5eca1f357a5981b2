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

Anyone allowed to create a Secret in a namespace can write a record, so records are read through
their view (client/views/helm_record.py), decoded within the limits of trust/limits.py, manifests parsed within
them too: a record that does not fit is named (its line kept), and the caller decides; install
refuses on it (trainer/helm_handover.refuse_unreadable), since its chart is then unknown.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from trainerctl.cluster.client.client import ApiError, Cluster, object_path
from trainerctl.cluster.client.discovery import split_api_version
from trainerctl.cluster.client.views import HelmRecord, HelmRelease, Unreadable
from trainerctl.cluster.client.views import helm_record
from trainerctl.cluster.manager.objects import Ref
from trainerctl.trust.server_payloads import Undecodable, load_yaml_stream

RELEASE_TYPE = helm_record.RELEASE_TYPE
RECORD_PREFIX = helm_record.RECORD_PREFIX
RECORD_SELECTOR = "owner=helm"
NAME_ANNOTATION = "meta.helm.sh/release-name"
NAMESPACE_ANNOTATION = "meta.helm.sh/release-namespace"
HOOK_ANNOTATION = "helm.sh/hook"  # on a hook object as its template has it
MANAGED_BY_LABEL = ("app.kubernetes.io/managed-by", "Helm")
FIELD_MANAGER = "helm"


class ReleaseDecodeError(ValueError):
    """A release record that is not what Helm writes."""


def decode_payload(payload: str | bytes) -> dict:
    """Helm's encoding of a release (base64 of gzip of JSON; older Helm 3 wrote it uncompressed),
    decoded within the limits of trust/limits.py."""
    try:
        release = helm_record.decode_payload(payload)
    except Undecodable as exc:
        raise ReleaseDecodeError(str(exc)) from None
    if not isinstance(release, dict):
        raise ReleaseDecodeError("not a JSON object")
    return release


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


@dataclass(frozen=True)
class Revision:
    """A stored revision read whole: the release's fields, and the objects its manifest and hooks name."""

    release: HelmRelease
    objects: list[dict]
    hooks: list[dict]


@dataclass
class Release:
    """A release (all its stored revisions) and what it owns."""

    name: str
    namespace: str
    records: list[Record] = field(default_factory=list)
    revisions: dict[int, Revision] = field(default_factory=dict)  # revision -> what its record holds
    unreadable: list[str] = field(default_factory=list)  # records kept (they go at a hand-over) but not read

    @property
    def current(self) -> HelmRelease:
        """The deployed revision, else the newest (a failed or pending install still created objects)."""
        deployed = [r.revision for r in self.records if r.status == "deployed" and r.revision in self.revisions]
        revision = max(deployed) if deployed else max(self.revisions, default=0)
        return self.revisions[revision].release if revision in self.revisions else HelmRelease()

    @property
    def revision(self) -> int:
        return self.current.version

    @property
    def status(self) -> str:
        return self.current.status or "unknown"

    @property
    def chart(self) -> str:
        return self.current.chart

    @property
    def chart_version(self) -> str:
        return self.current.chart_version

    @property
    def display(self) -> str:
        return f"{self.name} in namespace {self.namespace}"

    def describe(self) -> str:
        chart = f"chart {self.chart}-{self.chart_version}" if self.chart else "chart unknown"
        return f"Helm release {self.display} ({chart}, revision {self.revision}, {self.status})"

    def manifest_objects(self) -> list[dict]:
        """Every object the stored revisions' manifests name (Helm deletes what an upgrade
        dropped, so an older revision's object that is still there is still the release's)."""
        return _unique(obj for rev in sorted(self.revisions) for obj in self.revisions[rev].objects)

    def hook_objects(self) -> list[dict]:
        return _unique(obj for rev in sorted(self.revisions) for obj in self.revisions[rev].hooks)

    def owns(self, meta: dict) -> bool:
        """Whether live metadata names this release as its owner: both of Helm's annotations, the
        release's name and its namespace (Helm 3.2 on writes both on every object it creates)."""
        annotations = (meta or {}).get("annotations") or {}
        return annotations.get(NAME_ANNOTATION) == self.name and annotations.get(NAMESPACE_ANNOTATION) == self.namespace

    def not_owned(self, namespace: str, meta: dict) -> str:
        """Why a live object is not provably this release's ('' when it is). A record is only a
        Secret anyone who may create one in the namespace can write, so what its manifest names
        proves nothing; the proof is on the object: Helm's annotations naming this release and
        its namespace, on a cluster-scoped object or one in the release's namespace (`namespace`:
        the object's, '' when cluster-scoped)."""
        if namespace and namespace != self.namespace:
            return f"in namespace {namespace}, outside Helm release {self.name}'s namespace {self.namespace}"
        if self.owns(meta):
            return ""
        return f"its {NAME_ANNOTATION} and {NAMESPACE_ANNOTATION} annotations do not name Helm release " \
               f"{self.name} in {self.namespace}"


def parse_manifest(text: str) -> list[dict]:
    """The objects of a rendered manifest, within the limits of trust/limits.py (size, nesting, aliases).
    Whether an object without a namespace is namespaced is for discovery to say (ref_in puts the
    release's namespace on those that are)."""
    try:
        docs = load_yaml_stream(text)
    except Undecodable as exc:
        raise ReleaseDecodeError(f"manifest: {exc}") from None
    out = []
    for i, doc in enumerate(docs):
        if doc is None:  # an empty document (a template that rendered nothing)
            continue
        if isinstance(doc, dict) and isinstance(doc.get("kind"), str) and doc["kind"].endswith("List") \
                and isinstance(doc.get("items"), list):
            out.extend(_object(d, f"document {i + 1} item {j + 1}") for j, d in enumerate(doc["items"]))
        else:
            out.append(_object(doc, f"document {i + 1}"))
    return out


def _object(doc, where: str) -> dict:
    """An object trainerctl can name, each field it reads of its type: kind, apiVersion,
    metadata.name and .namespace; a ConfigMap's data (what a hand-over may read from the chart)."""
    meta = doc.get("metadata") if isinstance(doc, dict) else None
    ok = isinstance(meta, dict) and isinstance(doc.get("kind"), str) and bool(doc["kind"]) \
        and isinstance(doc.get("apiVersion", ""), str) and isinstance(meta.get("name"), str) and bool(meta["name"]) \
        and isinstance(meta.get("namespace") or "", str)
    if not ok:
        raise ReleaseDecodeError(f"manifest: {where}: expected a Kubernetes object (kind, apiVersion and "
                                 "metadata.name strings)")
    data = doc.get("data") if doc["kind"] == "ConfigMap" else None
    if data is not None and not (isinstance(data, dict) and all(isinstance(v, str) for v in data.values())):
        raise ReleaseDecodeError(f"manifest: {where}: ConfigMap {meta['name']}: data: expected a mapping of strings")
    return doc


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
    items: list[dict] = []
    for page in cluster.pages(object_path("", "v1", resource, namespace), query={"labelSelector": RECORD_SELECTOR},
                              page=100, items_checked=False):  # each record is read by its view
        items.extend(page.get("items") or [])
    return items


def list_records(cluster: Cluster, namespace: str) -> list[dict]:
    """Helm's release records (with their kind), cluster-wide when we may list them everywhere,
    else in `namespace`."""
    out = []
    for resource, kind in (("secrets", "Secret"), ("configmaps", "ConfigMap")):
        for scope in (None, namespace):
            try:
                out.extend({**item, "kind": kind} if isinstance(item, dict) else item
                           for item in _records(cluster, resource, scope))
                break
            except ApiError as exc:
                if exc.status not in (401, 403):
                    raise
    return out


def _revision(record: HelmRecord) -> Revision:
    """What one record holds, read whole; Unreadable when any of it does not fit."""
    release = record.decoded()
    try:
        return Revision(release, parse_manifest(release.manifest),
                        [obj for hook in release.hooks for obj in parse_manifest(hook)])
    except ReleaseDecodeError as exc:
        raise Unreadable(record.kind, record.meta.display, "release.manifest", f"a YAML stream of objects ({exc})") \
            from None


def releases_from_records(records: list[dict], unreadable: list[str] | None = None) -> list[Release]:
    """Group release records by release; records that are not Helm's are left out, and so is one
    that does not fit its view (its line goes to `unreadable`). A record whose release cannot be
    read is kept (it goes when the release is handed over), its line in the release's `unreadable`."""
    found: dict[tuple[str, str], Release] = {}
    for raw in records:
        kind = raw.get("kind") if isinstance(raw, dict) and raw.get("kind") in ("Secret", "ConfigMap") else "Secret"
        try:
            rec = HelmRecord.read(raw, kind)
        except Unreadable as exc:
            if unreadable is not None:
                unreadable.append(str(exc))
            continue
        if rec is None:
            continue
        release = found.setdefault((rec.meta.namespace, rec.release), Release(rec.release, rec.meta.namespace))
        release.records.append(Record(kind, rec.meta.namespace, rec.meta.name, rec.revision, rec.status))
        try:
            release.revisions[rec.revision] = _revision(rec)
        except Unreadable as exc:
            release.unreadable.append(str(exc))
    for release in found.values():
        release.records.sort(key=lambda r: r.revision)
    return [found[k] for k in sorted(found)]


def find_releases(cluster: Cluster, namespace: str, unreadable: list[str] | None = None) -> list[Release]:
    return releases_from_records(list_records(cluster, namespace), unreadable)


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
