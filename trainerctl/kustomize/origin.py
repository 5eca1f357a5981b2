"""buildMetadata: where each object came from (`config.kubernetes.io/origin`) and which
transformers touched it (`alpha.config.kubernetes.io/transformations`), written as kustomize
writes them."""

from __future__ import annotations

import posixpath

from trainerctl.kustomize import remote
from trainerctl.kustomize.yamlemit import Writer, write_string


class Origin:
    """kustomize's resource.Origin while accumulating: a path relative to the top root."""

    __slots__ = ("path", "repo", "ref")

    def __init__(self, path: str = "", repo: str = "", ref: str = ""):
        self.path, self.repo, self.ref = path, repo, ref

    def __eq__(self, other: object) -> bool:
        return (other.__class__ is Origin
                and (self.path, self.repo, self.ref) == (other.path, other.repo, other.ref))

    def __hash__(self) -> int:
        return hash((self.path, self.repo, self.ref))

    def append(self, path: str) -> "Origin":
        spec = remote.parse_git_url(path) if remote.is_remote(path) else None
        if spec is not None:
            return Origin(spec.path.strip("/"), spec.repo, spec.ref)
        joined = posixpath.normpath(posixpath.join(self.path, path)) if self.path else \
            posixpath.normpath(path)
        return Origin(joined, self.repo, self.ref)

    def as_dict(self) -> dict:
        return {k: v for k, v in (("path", self.path), ("repo", self.repo), ("ref", self.ref)) if v}

    def configured(self, kfile: str, kind: str) -> dict:
        """The origin of a builtin generator or transformer configured in `kfile`."""
        out = {k: v for k, v in (("repo", self.repo), ("ref", self.ref)) if v}
        out["configuredIn"] = posixpath.join(self.path, kfile) if self.path else kfile
        out["configuredBy"] = {"apiVersion": "builtin", "kind": kind}
        return out


def of_plugin(res) -> dict | None:
    """kustomize's OriginFromCustomPlugin: a `generators:`/`transformers:` config's origin."""
    if res.origin is None:
        return None
    out = {k: res.origin[k] for k in ("repo", "ref") if res.origin.get(k)}
    if res.origin.get("path"):
        out["configuredIn"] = res.origin["path"]
    by = {"apiVersion": res.obj.get("apiVersion"), "kind": res.obj.get("kind"),
          "name": res.name, "namespace": res.namespace}
    out["configuredBy"] = {k: v for k, v in by.items() if v}
    return out


_ORDER = ("path", "repo", "ref", "configuredIn", "configuredBy", "apiVersion", "kind", "name",
          "namespace")


def _lines(value, indent: int) -> list[str]:
    pad = " " * indent
    out = []
    if isinstance(value, list):
        for item in value:
            sub = _lines(item, indent + 2)
            out.append(pad + "- " + sub[0].lstrip())
            out.extend(sub[1:])
        return out
    for key in sorted(value, key=lambda k: _ORDER.index(k) if k in _ORDER else 99):
        v = value[key]
        if isinstance(v, dict):
            out.append(f"{pad}{key}:")
            out.extend(_lines(v, indent + 2))
        else:
            w = Writer()
            write_string(w, str(v), indent, key=False)
            out.append(f"{pad}{key}: {''.join(w.out)}")
    return out


def as_text(value) -> str:
    """kyaml's Marshal of an Origin or a list of them."""
    return "\n".join(_lines(value, 0)) + "\n"
