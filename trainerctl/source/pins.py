"""The pinned default source and the commits known tags must resolve to (data/pins.yaml)."""

from __future__ import annotations

from functools import lru_cache

from trainerctl.errors import InputError
from trainerctl.own_data import load_yaml
from trainerctl.source.validate import normalize_url


@lru_cache(maxsize=1)
def _data() -> dict:
    return load_yaml("pins.yaml")


def default_url() -> str:
    return _data()["default"]["url"]


def default_ref() -> str:
    return _data()["default"]["ref"]


def pinned_commit(url: str, ref: str) -> str | None:
    """The commit `ref` of `url` is pinned to, or None when trainerctl knows no pin for it."""
    return _data()["pins"].get(normalize_url(url), {}).get(ref)


def pinned_digest(commit: str | None) -> str | None:
    """The manifests tree digest the pinned `commit` must have, or None when it is not pinned."""
    return _data().get("digests", {}).get(commit) if commit else None


def git_source(url: str | None, ref: str | None) -> tuple[str, str]:
    """The git URL and ref to fetch: the pinned default, or the given URL, which needs a ref."""
    if ref:
        return url or default_url(), ref
    if url is None:
        return default_url(), default_ref()
    raise InputError(f"--ref is required with --source {url} (only the default source has a pinned ref)")


def pinned_source(url: object, ref: object, commit: object, digest: object) -> bool:
    """Whether `url` at `ref` is a source trainerctl pins whole: a known upstream repository whose
    `ref` (a pinned tag, or the pinned commit itself) is `commit`, and whose tree digest for it is
    `digest`. What a cluster record names is rendered without the user naming it only then."""
    if not all(isinstance(v, str) and v for v in (url, ref, commit, digest)):
        return False
    pins = _data()["pins"].get(normalize_url(url))
    if not pins or (pins.get(ref) != commit and not (ref == commit and commit in pins.values())):
        return False
    return pinned_digest(commit) == digest
