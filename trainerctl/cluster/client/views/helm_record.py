"""The view of a Helm release record (a Secret or ConfigMap `sh.helm.release.v1.NAME.vREVISION`)
and of the release it holds, decoded within the limits of trust/limits.py.

Helm 3 and 4 keep one record per revision, labelled `owner=helm`, `name=NAME`, `status=…`; its
`release` key holds base64(gzip(JSON)) of the release (older Helm 3 wrote it uncompressed), and
a Secret's data is base64 once more in the API. Anyone allowed to create a Secret in the
namespace can write one, so every step is bounded: base64 and gzip by the "decoded" limit
(4 MB of gzip never expands towards 4 GiB), the JSON by MAX_DEPTH, each field by its type.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from trainerctl.cluster.client.views.field_types import INT32, Cursor, Unreadable
from trainerctl.cluster.client.views.meta import Meta
from trainerctl.trust.server_payloads import Undecodable, b64decode, gunzip, load_json

RELEASE_TYPE = "helm.sh/release.v1"
RECORD_PREFIX = "sh.helm.release.v1."
_RECORD_NAME = re.compile(r"sh\.helm\.release\.v1\.(?P<name>.+)\.v(?P<revision>[0-9]{1,10})", re.ASCII)
_GZIP_MAGIC = b"\x1f\x8b\x08"
ENCODING = "Helm's encoding of a release (base64 of gzip of JSON)"


def decode_payload(payload: str | bytes) -> Any:
    """Helm's encoding of a release, decoded within the limits (Undecodable says why not)."""
    raw = b64decode(payload)
    if raw[:3] == _GZIP_MAGIC:
        raw = gunzip(raw)
    return load_json(raw)


@dataclass(frozen=True)
class HelmRelease:
    """What trainerctl reads of one stored revision."""

    name: str = ""
    namespace: str = ""
    version: int = 0  # the revision
    status: str = ""
    chart: str = ""
    chart_version: str = ""
    manifest: str = ""  # the rendered objects, a YAML stream
    hooks: tuple[str, ...] = ()  # each hook's manifest

    @classmethod
    def read(cls, raw: Any, kind: str = "Secret", name: str = "") -> "HelmRelease":
        """A decoded release JSON; `kind`/`name` are its record's, for messages."""
        if not isinstance(raw, dict):
            raise Unreadable(kind, name, "data.release", "a JSON object (a Helm release)", raw)
        release = Cursor(kind, name, raw, "release")
        chart = release.mapping("chart").mapping("metadata")
        return cls(release.string("name"), release.string("namespace"), release.integer("version", 0, INT32, 0),
                   release.mapping("info").string("status"), chart.string("name"), chart.string("version"),
                   release.string("manifest"), tuple(h.string("manifest") for h in release.mappings("hooks")))


@dataclass(frozen=True)
class HelmRecord:
    """One stored revision: the Secret or ConfigMap holding it."""

    kind: str  # Secret | ConfigMap
    meta: Meta
    release: str  # the release's name
    revision: int
    status: str = ""
    payload: str = ""  # data.release as the API gives it

    @classmethod
    def read(cls, raw: Any, kind: str = "Secret") -> "HelmRecord | None":
        """The record, None when the object is not one of Helm's (another Secret beside them)."""
        obj = Cursor.of(kind, raw)
        meta = Meta.read(obj)
        if not meta.name.startswith(RECORD_PREFIX) or meta.labels.get("owner") != "helm":
            return None
        if kind == "Secret" and obj.string("type") != RELEASE_TYPE:
            return None
        match = _RECORD_NAME.fullmatch(meta.name)
        if match is None or not 1 <= int(match["revision"]) <= INT32:
            raise obj.mapping("metadata").fail(
                "name", f"{RECORD_PREFIX}NAME.vREVISION with a revision 1..{INT32}", meta.name)
        return cls(kind, meta, meta.labels.get("name") or match["name"], int(match["revision"]),
                   meta.labels.get("status", ""), obj.mapping("data").string("release"))

    @property
    def display(self) -> str:
        return f"{self.kind} {self.meta.display}"

    def decoded(self) -> HelmRelease:
        """The release this record holds; Unreadable when it holds something else."""
        if not self.payload:
            raise Unreadable(self.kind, self.meta.display, "data.release", ENCODING)
        payload = self.payload
        try:
            if self.kind == "Secret":  # the API's base64 around Helm's own
                payload = b64decode(payload).decode("ascii")
            release = decode_payload(payload)
        except UnicodeDecodeError:
            raise Unreadable(self.kind, self.meta.display, "data.release", f"{ENCODING}: not base64 text") from None
        except Undecodable as exc:
            raise Unreadable(self.kind, self.meta.display, "data.release", f"{ENCODING}: {exc}") from None
        return HelmRelease.read(release, self.kind, self.meta.display)
