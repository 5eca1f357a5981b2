"""How a render was asked for, as the install history records it, and the same render asked
again from that record (trainerctl rollback).

Recorded: what changes the objects (overlay, platform, sets, the image overrides in effect,
the controller options as given, the owner label, the namespace, mirrors and image rules), not
where things live on this machine (the cache dir, the lock file). RELATED_IMAGE_* variables
that applied are recorded as the overrides they were, so a rollback renders the same images
from any shell. The source (URL, ref, commit, tree digest, embedded) is the render's SourceInfo,
recorded beside it.

A record lives on the cluster, where whoever may edit a ConfigMap in the namespace can write it,
so what it names is checked before anything is read or fetched: it never chooses a folder on
this machine or a host on the network by itself. Its source is rendered again only when
trainerctl pins it (a known upstream URL, a pinned ref, that ref's commit and tree digest) or the
user names a source with --source (then the render's tree digest must be the recorded one); its
remote mirrors only through mirrors the user gives for the same prefixes; its ownership label
only when it is the user's. The overlay is a path inside the tree (RenderOptions checks it).
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import PurePath
from typing import Any, Mapping

from trainerctl.errors import InputError
from trainerctl.owner_label import DEFAULT_OWNER_LABEL, OwnerLabel
from trainerctl.render.controller import resolve as resolve_manager
from trainerctl.render.image_refs import ENV_PREFIX, related_images
from trainerctl.render.render_options import RenderOptions
from trainerctl.source.pins import pinned_source
from trainerctl.trust.redact import redact_url, strip_userinfo
from trainerctl.trust.safe_text import clean

_DIGEST = re.compile(r"sha256:[0-9a-f]{64}")


def recipe(options: RenderOptions, *, manager: Mapping[str, Any] | None = None, set_values=(), ha: bool = False,
           overlay: str | None = None) -> dict:
    """What to record of `options` (with the controller options as given, and the overlay the
    render chose)."""
    env = options.environment()
    table = related_images()
    images = {k: v for k, v in env.items() if k in table and v}
    images.update(options.images)
    out: dict[str, Any] = {
        "overlay": overlay or options.overlay or "",
        "platform": options.platform or "kubernetes",
        "images": dict(sorted(images.items())),
        "ownerLabel": "=".join(options.owner_label),
        "namespace": options.namespace,
        "remoteMirrors": [_without_password(m) for m in options.remote_mirrors],
        "requireRegistry": options.require_registry or "",
        "requireDigests": options.require_digests,
        "set": list(set_values),
        "ha": ha,
    }
    if options.components is not None:
        out["components"] = sorted(options.components)
    if manager:
        out["manager"] = json.loads(json.dumps(dict(manager), default=str))
    return out


@dataclass(frozen=True)
class Named:
    """What the user names for a render asked again from a record: --source and --ref as given on
    the command line (never trainerctl.yaml's, which names what `install` installs), the remote
    mirrors of their settings and the environment, their ownership label."""

    source_url: str | None = None
    source_path: str | None = None
    ref: str | None = None
    remote_mirrors: tuple[str, ...] = ()
    owner_label: OwnerLabel = DEFAULT_OWNER_LABEL


def options_from(source: Mapping[str, Any], render: Mapping[str, Any], *, what: str, namespace: str,
                 named: Named = Named(), cache_dir: str | None = None, offline: bool = False) -> RenderOptions:
    """The RenderOptions that render a recorded revision again (`what` names it in errors), with
    the environment left out (its overrides were recorded) and no lock file (the record is the pin).
    `namespace`: the history's (a record names its own, which may only have been edited).
    InputError (exit 2) when the record names what the user must name first (module doc)."""
    if source.get("file") or source.get("folder"):
        shown = _shown(source.get("file") or source.get("folder"))
        raise InputError(f"{what} was installed from -f {shown}, of which trainerctl keeps no copy: install that "
                         "file again with `trainerctl install -f`")
    where = _where_from(source, named, what)
    _check_mirrors(render.get("remoteMirrors") or (), named.remote_mirrors, what)
    _check_owner_label(str(render.get("ownerLabel") or ""), named.owner_label, what)
    manager = None
    if render.get("manager") or render.get("set") or render.get("ha"):
        manager = resolve_manager(dict(render.get("manager") or {}), list(render.get("set") or ()),
                                  ha=bool(render.get("ha")), source=f"{what}: render")
    images = {k: v for k, v in (render.get("images") or {}).items()}
    unknown = [k for k in images if k.startswith(ENV_PREFIX) and k not in related_images()]
    if unknown:
        raise InputError(f"{what}: render.images: unknown variable {_shown(unknown[0])}")
    return RenderOptions(
        **where,
        overlay=render.get("overlay") or source.get("overlay") or None,
        namespace=namespace,
        platform=render.get("platform") or None,
        images=images,
        env={},
        components=frozenset(render["components"]) if render.get("components") is not None else None,
        owner_label=named.owner_label,
        cache_dir=cache_dir,
        offline=offline,
        use_lock=False,
        require_registry=render.get("requireRegistry") or None,
        require_digests=bool(render.get("requireDigests")),
        remote_mirrors=named.remote_mirrors,
        manager=manager,
        origins={name: f"{what}: render.{name}" for name in ("platform", "components", "images", "require_registry",
                                                            "overlay")},
    )


def _where_from(source: Mapping[str, Any], named: Named, what: str) -> dict[str, Any]:
    """Where the render reads its source: the one the user names (--source), else the recorded
    one when trainerctl pins it; refused otherwise, before anything is read or fetched."""
    digest = source.get("digest")
    if named.source_path or named.source_url:
        if not isinstance(digest, str) or not _DIGEST.fullmatch(digest):
            raise InputError(f"{what} records no tree digest (source.digest) that a render of --source could be "
                             "checked against: install the source you want explicitly instead")
        if named.source_path:
            return {"source_path": named.source_path}
        ref = named.ref or source.get("ref")
        if not ref:
            raise InputError(f"{what} records no ref: give the one to render with --ref")
        return {"source_url": named.source_url, "ref": ref}
    if named.ref:
        raise InputError("--ref: name the source it is a ref of with --source (without --source, a rollback "
                         "renders the source its revision records)")
    path, url, ref = source.get("path"), source.get("url"), source.get("ref")
    if not path and not url:
        raise InputError(f"{what} records no source to render again (expected a git URL or a local checkout)")
    if not path and pinned_source(url, ref, source.get("commit"), digest):
        return {"source_url": strip_userinfo(url), "ref": ref}
    if path:
        if PurePath(path).name == "manifests":  # the checkout's root is what --source names
            path = str(PurePath(path).parent)
        recorded, name = f"the local checkout {_shown(path)}", _shown(path)
    else:
        recorded = f"{_shown(redact_url(url))} at ref {_shown(ref or '?')}"
        name = _shown(redact_url(url)) + (f" --ref {_shown(ref)}" if ref else "")
    return _refuse_unnamed(what, recorded, name, digest)


def _refuse_unnamed(what: str, recorded: str, name: str, digest: Any) -> dict:
    check = f" (its tree digest must be {digest})" if isinstance(digest, str) and _DIGEST.fullmatch(digest) else ""
    raise InputError(f"{what} was installed from {recorded}, which trainerctl does not pin; a record on the "
                     f"cluster never chooses a local folder or a host by itself: name it with --source {name} "
                     f"to render it again{check}")


def _check_mirrors(recorded: Any, given: tuple[str, ...], what: str) -> None:
    """Each recorded mirror's prefix is mapped by a mirror the user gives (a flag, trainerctl.yaml,
    TRAINERCTL_REMOTE_MIRRORS): the render goes where the user says, never where the record says."""
    env = os.environ.get("TRAINERCTL_REMOTE_MIRRORS", "")
    mapped = {strip_userinfo(m.partition("=")[0]) for m in (*given, *(e.strip() for e in env.split(",") if e.strip()))}
    for mirror in recorded:
        prefix = str(mirror).partition("=")[0]
        if strip_userinfo(prefix) not in mapped:
            raise InputError(f"{what} was rendered with --remote-mirror {_shown(redact_url(str(mirror)))}; a record "
                             "on the cluster never chooses a host by itself: give --remote-mirror "
                             f"{_shown(redact_url(prefix))}=REPLACEMENT (the same mirror, or your own) to render it "
                             "again")


def _check_owner_label(recorded: str, given: OwnerLabel, what: str) -> None:
    """The revision's ownership label is the user's: it decides what a rollback prunes."""
    if (recorded or str(DEFAULT_OWNER_LABEL)) != str(given):
        raise InputError(f"{what} was installed with the ownership label {_shown(recorded)}, not {given}: give "
                         f"--owner-label {_shown(recorded)} to roll back the objects it marks")


def _shown(value: Any) -> str:
    """A value from the record, fit for one line."""
    return clean(str(value), 300)


def _without_password(mirror: str) -> str:
    prefix, sep, replacement = mirror.partition("=")
    return f"{strip_userinfo(prefix)}{sep}{strip_userinfo(replacement)}" if sep else mirror
