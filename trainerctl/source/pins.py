"""The release channels (data/pins.yaml): named, pinned trees of Trainer's manifests, the default
one, and what a known tag or commit must resolve and hash to.

A channel is fetched by its tag, or by its commit when it has none (a commit on a branch, such
as `stable` on opendatahub-io/trainer main): a branch moves, a pinned commit does not. Every tag
and commit a channel names is pinned: a fetch of it, the cache's copy and the wheel's copy must
all be that commit with that tree digest.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from trainerctl.errors import InputError
from trainerctl.own_data import load_yaml
from trainerctl.source.validate import normalize_url
from trainerctl.trust.safe_text import clean


@dataclass(frozen=True)
class Channel:
    """One release channel: where its tree is, what it must be, and what it installs."""

    name: str
    url: str
    commit: str
    digest: str  # of the manifests/ tree (tree.py)
    trainer: str  # the Trainer version it installs
    image: str  # the controller image its default overlay deploys
    date: str = ""  # its commit's date (YYYY-MM-DD), "" when not recorded
    tag: str | None = None
    branch: str | None = None  # the branch its commit is on, when it has no tag
    via: str = "git"  # how its digest was taken: git, go-proxy (a Go module zip) or tree (a checkout)

    @property
    def ref(self) -> str:
        """What is fetched: the tag, else the commit itself."""
        return self.tag or self.commit

    def to_dict(self) -> dict:
        return {"name": self.name, "url": self.url, **({"tag": self.tag} if self.tag else {}),
               **({"branch": self.branch} if self.branch else {}), "commit": self.commit, "digest": self.digest,
               "trainer": self.trainer, "date": self.date, "image": self.image, "via": self.via}


@dataclass(frozen=True)
class _Table:
    default: str
    channels: dict[str, Channel]


@lru_cache(maxsize=1)
def _data() -> dict:
    return load_yaml("pins.yaml")


@lru_cache(maxsize=1)
def _table() -> _Table:
    data = _data()
    channels = {str(name): Channel(name=str(name), **spec)
                for name, spec in data["channels"].items()}
    return _Table(str(data["default"]), channels)


def channels() -> dict[str, Channel]:
    """Every channel, by name, in the file's order."""
    return _table().channels


def default_channel() -> Channel:
    """What a render with no source flags renders, and the tree the wheel carries."""
    table = _table()
    return table.channels[table.default]


def channel(name: str, where: str = "--channel") -> Channel:
    """The channel called `name`; one line naming `where` and the known names otherwise."""
    found = channels().get(name) if isinstance(name, str) else None
    if found is None:
        shown = clean(name, 60) if isinstance(name, str) else name
        raise InputError(f"{where} {shown!r}: unknown channel (known: {', '.join(channels())}; "
                         "`trainerctl channels` lists them)")
    return found


def channel_of(digest: str | None, prefer: str | None = None) -> Channel | None:
    """The channel whose tree has `digest` (`prefer`'s when several have it), None when none has."""
    matches = [c for c in channels().values() if digest and c.digest == digest]
    return next((c for c in matches if c.name == prefer), matches[0] if matches else None)


def default_url() -> str:
    return default_channel().url


def default_ref() -> str:
    return default_channel().ref


def pinned_commit(url: str, ref: str) -> str | None:
    """The commit `ref` (a channel's tag or commit) of `url` is pinned to, None when no channel
    names it."""
    norm = normalize_url(url)
    return next((c.commit for c in channels().values() if normalize_url(c.url) == norm and ref in (c.tag, c.commit)),
                None)


def pinned_digest(commit: str | None) -> str | None:
    """The manifests tree digest the pinned `commit` must have, or None when it is not pinned."""
    return next((c.digest for c in channels().values() if commit and c.commit == commit), None)


def git_source(url: str | None, ref: str | None, channel_name: str | None = None) -> tuple[str, str]:
    """The git URL and ref to fetch: a channel's (the default's when nothing is given), or the
    given URL, which needs a ref."""
    if channel_name is not None:
        chosen = channel(channel_name)
        return chosen.url, chosen.ref
    if ref:
        return url or default_url(), ref
    if url is None:
        return default_url(), default_ref()
    raise InputError(f"--ref is required with --source {url} (only a channel has a pinned ref: --channel NAME)")


def pinned_source(url: object, ref: object, commit: object, digest: object) -> bool:
    """Whether `url` at `ref` is a source trainerctl pins whole: a channel's repository whose
    `ref` (its tag, or its commit itself) is `commit`, with that tree digest. What a cluster
    record names is rendered without the user naming it only then."""
    if not all(isinstance(v, str) and v for v in (url, ref, commit, digest)):
        return False
    return pinned_commit(str(url), str(ref)) == commit and pinned_digest(str(commit)) == digest
