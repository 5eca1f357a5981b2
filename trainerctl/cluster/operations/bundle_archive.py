"""A support bundle: what a troubleshooter needs from a cluster, in one .tar.gz, and no secret.

The archive itself, the names of its members, and what never goes into it. What to collect is
operations/bundle_parts.py's (generic parts) and the caller's (what a product needs).

What never goes in: a Secret's values (Secrets keep only their key names and sizes), webhook and
conversion caBundles, the last-applied-configuration annotation (it can carry a Secret as
applied), managedFields, and the kubeconfig or anything from it. Members are kept as objects
until the archive is written, then every member goes through redact.scrub as one value: every
Secret met anywhere in the bundle is registered and blanked, and every registered credential
(those values, the client's token, an exec plugin's answer) is taken out of every string, before
anything is serialized. So a value is blanked however JSON or YAML would have escaped, quoted
or folded it, and a Secret read late blanks a log collected early.

Member names are trainerctl's: a fixed layout whose parts from the server (group, kind,
namespace, name, container) are kept as they are when they keep Kubernetes' name rules and
escaped otherwise (`member_part`), so no member holds `..`, a `/` from data, an absolute path
or a link, whatever the server names its objects.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import tarfile
import time
from dataclasses import dataclass, field
from typing import Any

from trainerctl.cluster.client.client import ApiError, Cluster
from trainerctl.cluster.client.views.field_types import LABEL_NAME, SUBDOMAIN_NAME
from trainerctl.errors import InputError
from trainerctl.trust.redact import MASK, scrub
from trainerctl.trust.serialize import json_text, yaml_text

LOG_TAIL_LINES = 500
LOG_LIMIT_BYTES = 1024 * 1024
REDACTED = MASK
ELIDED = "<elided>"
NODE_IDS = ("machineID", "systemUUID", "bootID")

# A member name part: a Kubernetes name (DNS-1123 subdomain; a label where a suffix follows, as
# ".previous.log" after a container) or a kind (Go identifier-like) is kept; anything else is
# escaped byte by byte (%XX) outside KEEP, so escaping never yields '/', '.' or '..', and (since a
# valid part never holds '%', '_' or '~') never another part's name. The layout's own words
# ("core" for the core group) are escaped when the server uses them.
RULES = {"name": (SUBDOMAIN_NAME, re.compile(r"[a-z0-9-]")), "label": (LABEL_NAME, re.compile(r"[a-z0-9-]")),
         "kind": (re.compile(r"[A-Za-z][A-Za-z0-9]{0,62}"), re.compile(r"[A-Za-z0-9]"))}
RESERVED = ("core",)
EMPTY_PART = "_"
MAX_PART = 200  # a longer escaped part is cut, and its hash keeps it apart from others


def member_part(text: Any, rule: str = "name") -> str:
    """One part of a member name from server data: as is when it keeps `rule` (RULES), else
    escaped: no '/', no '.', never '..' or empty."""
    text = text if isinstance(text, str) else str(text)
    valid, keep = RULES[rule]
    if valid.fullmatch(text) and text not in RESERVED:
        return text
    if not text:
        return EMPTY_PART
    out = "".join(c if keep.fullmatch(c) and (i or text not in RESERVED) else "".join(f"%{b:02X}" for b in c.encode("utf-8", "surrogatepass"))
                  for i, c in enumerate(text))
    if len(out) > MAX_PART:
        digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]
        out = f"{out[:MAX_PART - 17]}~{digest}"
    return out


@dataclass
class Member:
    """One member of the archive until it is written: text, or data to write as JSON or YAML."""

    form: str  # "text", "json" or "yaml"
    data: Any


@dataclass
class Bundle:
    root: str  # the folder every member goes under (made by the caller from checked parts)
    files: dict[str, Member] = field(default_factory=dict)
    unreadable: list[str] = field(default_factory=list)

    def add_text(self, path: str, text: str) -> None:
        self.files[path] = Member("text", text)

    def add_json(self, path: str, data: Any) -> None:
        """A summary (status, events, versions, ...): each string cut at safe_text.MESSAGE_LIMIT."""
        self.files[path] = Member("json", data)

    def add_yaml(self, path: str, data: Any) -> None:
        """An object as the cluster holds it: kept whole (one API answer, within its limit)."""
        self.files[path] = Member("yaml", data)

    def note(self, what: str, exc: BaseException | str) -> None:
        """Record what could not be read and why (one line each, in README.txt and manifest.json)."""
        why = f"HTTP {exc.status} {exc.reason or ''}".strip() if isinstance(exc, ApiError) else str(exc)
        self.unreadable.append(f"{what}: {why}")

    def contents(self) -> dict[str, bytes]:
        """Each member's bytes: all members redacted as one value (redact.scrub, names too), then
        each serialized."""
        names = list(self.files)
        safe_names, safe = scrub([names, [self.files[n].data for n in names]])
        out: dict[str, bytes] = {}
        for name, member, data in zip(safe_names, (self.files[n] for n in names), safe):
            text = (json_text(data, default=str) if member.form == "json"
                    else yaml_text(data, whole=True) if member.form == "yaml" else data)
            while name in out:  # two names that differed only by a blanked credential
                name = f"{name}.again"
            out[name] = text.encode("utf-8", "replace")
        return out

    def write(self, path: str) -> None:
        """The .tar.gz at `path`, created with mode 0600 (never over an existing file)."""
        contents = self.contents()
        for name in contents:
            _check_member(f"{self.root}/{name}")
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            raise InputError(f"--output {path}: the file exists; choose another name") from None
        except OSError as exc:
            raise InputError(f"--output {path}: {exc.strerror}") from None
        now = time.time()
        with os.fdopen(fd, "wb") as out, tarfile.open(fileobj=out, mode="w:gz", format=tarfile.PAX_FORMAT) as tar:
            for name in sorted(contents):
                data = contents[name]
                info = tarfile.TarInfo(f"{self.root}/{name}")  # a regular file: never a link or a device
                info.size, info.mode, info.mtime = len(data), 0o600, now
                info.uname = info.gname = ""
                tar.addfile(info, io.BytesIO(data))


def _check_member(name: str) -> None:
    """The last guard on a member name (each part is made by member_part already): relative, no
    empty, '.' or '..' part."""
    parts = name.split("/")
    if name.startswith("/") or any(p in ("", ".", "..") for p in parts) or "\\" in name or "\0" in name:
        raise AssertionError(f"support bundle member name {name!r} is not one trainerctl makes")


# -- sanitising objects ------------------------------------------------------------------------
def sanitize(obj: dict) -> dict:
    """A copy safe to share as far as the object's shape goes: no caBundles, no last-applied
    annotation, no managedFields. (A Secret's values are blanked, and registered to be blanked
    everywhere else, when the bundle is written: redact.scrub.)"""
    out = json.loads(json.dumps(obj))
    meta = out.get("metadata") if isinstance(out.get("metadata"), dict) else {}
    meta.pop("managedFields", None)
    annotations = meta.get("annotations") if isinstance(meta.get("annotations"), dict) else {}
    if "kubectl.kubernetes.io/last-applied-configuration" in annotations:
        annotations["kubectl.kubernetes.io/last-applied-configuration"] = ELIDED
    for hook in out.get("webhooks") if isinstance(out.get("webhooks"), list) else []:
        config = hook.get("clientConfig") if isinstance(hook, dict) else None
        if isinstance(config, dict) and config.get("caBundle"):
            config["caBundle"] = ELIDED
    webhook = out
    for key in ("spec", "conversion", "webhook", "clientConfig"):
        webhook = webhook.get(key) if isinstance(webhook, dict) else None
    if isinstance(webhook, dict) and webhook.get("caBundle"):
        webhook["caBundle"] = ELIDED
    return out


def object_file(group: str, kind: str, namespace: str, name: str) -> str:
    """objects/<group or core>/<Kind>/<namespace or _cluster>/<name>.yaml, each part checked
    (member_part)."""
    return (f"objects/{member_part(group) if group else 'core'}/{member_part(kind, 'kind')}/"
            f"{member_part(namespace) if namespace else '_cluster'}/{member_part(name)}.yaml")


# -- collectors -----------------------------------------------------------------------------
def add_object(bundle: Bundle, cluster: Cluster, path: str, what: str, member: str) -> dict | None:
    """GET one object into `member` (an object_file name); None (and a note) when it cannot be read."""
    try:
        obj = cluster.get_or_none(path)
    except ApiError as exc:
        bundle.note(what, exc)
        return None
    if obj is None:
        bundle.note(what, "not found")
        return None
    bundle.add_yaml(member, sanitize(obj))
    return obj
