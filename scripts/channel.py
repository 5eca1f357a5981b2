"""Maintainer's tool: add a release channel to trainerctl/data/pins.yaml, or move one.

    python scripts/channel.py 3.5 --url https://github.com/opendatahub-io/trainer.git --tag odh-3.5.0
    python scripts/channel.py stable --url https://github.com/opendatahub-io/trainer.git \
        --branch main --commit d140e85264020f29d1e5a8d959ab2fde4aec6681 --default
    python scripts/channel.py v2.2.1 --url https://github.com/kubeflow/trainer.git --tag v2.2.1 --go-proxy
    python scripts/channel.py stable --url … --branch main --commit … --tree ../shared/upstream/opendatahub-trainer/main-d140e85 --date 2026-08-20

It gets the tree one of three ways: a git fetch through trainerctl's own fetch code (a tag, or a
commit on a branch: a branch moves, the channel pins the commit); with --go-proxy, the Go module
proxy's zip of a kubeflow/trainer tag (its .info names the commit and date); or with --tree, a
checkout of that commit at hand. A module zip keeps no executable bit and no symlink, so before a
zip's digest is trusted the same route must reproduce the digest of a channel pinned through git
(--check-against, default: the newest such channel of the same repository).

From the tree it takes the digest (trainerctl/source/tree.py), the Trainer version
(component_metadata.yaml, else the tag), the controller image its default overlay deploys
(trainerctl/render/release.py) and the commit's date, and writes pins.yaml. The wheel embeds the
default channel's tree when it is built (setup.py): for the default, the script checks that the
build's embed step takes this tree and the new pins (trainerctl/source/embedding.py).
"""

from __future__ import annotations

import argparse
import io
import json
import os
import re
import shutil
import sys
import tempfile
import urllib.request
import zipfile
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # this checkout's trainerctl and pins.yaml

from trainerctl.errors import TrainerctlError  # noqa: E402
from trainerctl.render.release import component_releases, shipped_controller_image  # noqa: E402
from trainerctl.source import embedding, gitrepo, pins  # noqa: E402
from trainerctl.source.cache import SourceCache  # noqa: E402
from trainerctl.source.tree import walk_tree  # noqa: E402
from trainerctl.source.validate import is_commit, normalize_url  # noqa: E402

PINS = ROOT / "trainerctl" / "data" / "pins.yaml"
HEADER = """\
# Release channels: named, pinned trees of Trainer's manifests (docs/render.md#channels).
# `--channel NAME` renders one; `default` is what a render with no source flags renders, and the
# tree the wheel carries (trainerctl/source/embedded.py). A channel is fetched by its tag, else by
# its commit (a commit on `branch`: a branch moves, the pin does not), which must be `commit`, and
# its manifests/ tree must hash to `digest` (trainerctl/source/tree.py: every path, executable bit
# and content) wherever it comes from: a fetch, the cache or the wheel's copy. `trainer` is the
# Trainer version it installs, `image` the controller image its default overlay deploys, `date`
# its commit's date, `via` how the digest was taken (git; go-proxy: a Go module zip, which has no
# symlinks or executable bits, checked against a git digest first; tree: a checkout at hand).
# Written by scripts/channel.py: change it through that script.
"""
FIELDS = ("url", "tag", "branch", "commit", "digest", "trainer", "date", "image", "via")


class Refused(Exception):
    """One line saying why the channel was not written."""


# -- pins.yaml -------------------------------------------------------------------------------------
def pins_text(default: str, channels: dict[str, dict]) -> str:
    """pins.yaml as this script writes it: the header, the default, each channel's fields in order."""
    lines = [HEADER.rstrip("\n"), f"default: {_scalar(default)}", "channels:"]
    for name, spec in channels.items():
        lines.append(f"  {_scalar(name)}:")
        lines.extend(f"    {key}: {_scalar(spec[key])}" for key in FIELDS if spec.get(key))
    return "\n".join(lines) + "\n"


def _scalar(value: str) -> str:
    """A string YAML reads back as that string (a name like 3.5 or a date is quoted)."""
    try:
        plain = yaml.safe_load(value) == value and "#" not in value
    except yaml.YAMLError:
        plain = False
    return value if plain else json.dumps(value)


def read_pins(path: Path) -> tuple[str, dict[str, dict]]:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    return str(data["default"]), {str(name): dict(spec) for name, spec in data["channels"].items()}


# -- getting the tree ------------------------------------------------------------------------------
def git_tree(url: str, tag: str | None, commit: str | None, branch: str | None, work: Path) -> tuple[Path, str, str]:
    """(manifests, commit, date) of a fetch through trainerctl's fetch code into a throwaway cache."""
    cache = SourceCache(work / "cache")
    found = cache.fetch(url, tag or commit, commit if tag and commit else None)
    repo = gitrepo.open_bare_repo(cache.repo_dir(url))
    try:
        if branch:  # a commit on a branch: say where the branch is now
            head, _ = gitrepo.ls_remote(repo, url, branch)
            if head != found:
                print(f"channel: {branch} of {url} is at {head} now; pinning {found}", file=sys.stderr)
        date = repo.commit(found).committed_datetime.date().isoformat()
    finally:
        repo.close()
    return cache.tree_dir(found) / "manifests", found, date


def _module(url: str, tag: str) -> str:
    """The Go module path of a GitHub repository's tag: github.com/OWNER/REPO[/vN] (N >= 2)."""
    match = re.fullmatch(r"https://(github\.com/[^/]+/[^/]+)", normalize_url(url))
    major = re.match(r"v(\d+)\.", tag)
    if not match or not major:
        raise Refused(f"--go-proxy: {url} {tag} is not a GitHub repository's vMAJOR.MINOR.PATCH tag")
    return match[1] + (f"/v{major[1]}" if int(major[1]) >= 2 else "")


def _proxy() -> str:
    first = os.environ.get("GOPROXY", "").split(",")[0].split("|")[0].strip()
    return first.rstrip("/") if first.startswith(("https://", "http://")) else "https://proxy.golang.org"


def _get(url: str) -> bytes:
    try:
        with urllib.request.urlopen(url, timeout=120) as answer:  # noqa: S310 (the proxy's https URL)
            return answer.read()
    except OSError as exc:
        raise Refused(f"{url}: {exc}") from None


def proxy_tree(url: str, tag: str, work: Path) -> tuple[Path, str, str]:
    """(manifests, commit, date) of the Go module proxy's zip of `tag`."""
    module = _module(url, tag)
    info = json.loads(_get(f"{_proxy()}/{module}/@v/{tag}.info"))
    origin = info.get("Origin") or {}
    commit = origin.get("Hash")
    if not isinstance(commit, str) or not is_commit(commit) or origin.get("Ref") not in (None, f"refs/tags/{tag}"):
        raise Refused(f"{module}@{tag}: the proxy's .info names no commit of tag {tag}: {info}")
    prefix = f"{module}@{tag}/manifests/"
    dest = work / f"zip-{tag}" / "manifests"
    with zipfile.ZipFile(io.BytesIO(_get(f"{_proxy()}/{module}/@v/{tag}.zip"))) as archive:
        for entry in archive.infolist():
            rel = entry.filename[len(prefix):] if entry.filename.startswith(prefix) else None
            if not rel or entry.is_dir():
                continue
            if rel.startswith("/") or ".." in rel.split("/"):
                raise Refused(f"{module}@{tag}: zip entry {entry.filename!r} leaves manifests/")
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            (dest / rel).write_bytes(archive.read(entry))
    if not dest.is_dir():
        raise Refused(f"{module}@{tag}: the zip holds no manifests/")
    return dest, commit, str(info.get("Time", ""))[:10]


def check_proxy_route(url: str, against: str | None, channels: dict[str, dict], work: Path) -> None:
    """The zip route gives the git route's digest for a channel pinned through git, or refuse."""
    norm = normalize_url(url)
    candidates = [n for n, c in channels.items() if normalize_url(c["url"]) == norm and c.get("tag")
                  and c.get("via") != "go-proxy"]
    name = against or (candidates[-1] if candidates else None)
    if name not in channels or not channels[name].get("tag") or channels[name].get("via") == "go-proxy":
        raise Refused(f"--go-proxy: no tagged channel of {url} pinned through git to check the route against "
                      "(--check-against NAME)")
    tree, commit, _ = proxy_tree(channels[name]["url"], channels[name]["tag"], work)
    digest = walk_tree(tree)
    if (commit, digest) != (channels[name]["commit"], channels[name]["digest"]):
        raise Refused(f"--go-proxy: the proxy's zip of channel {name} gives {commit} {digest}, but git gave "
                      f"{channels[name]['commit']} {channels[name]['digest']}: the zip route does not reproduce "
                      "the git tree (a symlink or an executable bit?); fetch through git instead")
    print(f"channel: the Go module proxy route reproduces channel {name}'s git digest {digest}", file=sys.stderr)


def local_tree(path: Path) -> Path:
    manifests = path / "manifests" if (path / "manifests").is_dir() else path
    if not manifests.is_dir():
        raise Refused(f"--tree {path}: not a directory")
    return manifests


# -- what the tree says ----------------------------------------------------------------------------
def trainer_version(manifests: Path, tag: str | None) -> str:
    """component_metadata.yaml's first release, else the tag without its v."""
    releases = component_releases(manifests)
    if releases:
        return releases[0]["version"]
    if tag and re.fullmatch(r"v?\d+\.\d+\.\d+", tag):
        return tag.lstrip("v")
    raise Refused(f"{manifests}: no component_metadata.yaml release and no version tag: give --trainer")


def controller_image(manifests: Path, given: str | None) -> str:
    image = given or shipped_controller_image(manifests)
    if not image:
        raise Refused(f"{manifests}: its default overlay sets no controller image: give --image")
    return image


def check_embed(manifests: Path, work: Path, written: Path) -> str:
    """The wheel build's embed step, run as setup.py runs it, against this tree and the pins just
    written (wherever --pins put them)."""
    data = yaml.safe_load(written.read_text(encoding="utf-8"))
    pins._data = lambda: data
    pins._table.cache_clear()
    return embedding.embed(work / "_embedded", ROOT, env={embedding.ENV: str(manifests)}, log=lambda line: None)


# -- the command -------------------------------------------------------------------------------------
def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("name", help="the channel's name (stable, 3.5, v2.2.1, …)")
    parser.add_argument("--url", required=True, help="the git repository (https://github.com/OWNER/REPO.git)")
    parser.add_argument("--tag", help="the tag to pin (else --commit on --branch)")
    parser.add_argument("--branch", help="the branch the commit is on (a channel without a tag)")
    parser.add_argument("--commit", help="the commit (required without --tag; with --tag, checked)")
    parser.add_argument("--go-proxy", action="store_true", help="take a kubeflow/trainer tag from the Go module proxy")
    parser.add_argument("--check-against", metavar="NAME", help="--go-proxy: the git-pinned channel to check the "
                                                                "route against (default: the newest of that repository)")
    parser.add_argument("--tree", type=Path, help="a checkout of the commit at hand instead of a fetch")
    parser.add_argument("--date", help="the commit's date, YYYY-MM-DD (default: from git or the proxy)")
    parser.add_argument("--trainer", help="the Trainer version (default: component_metadata.yaml, else the tag)")
    parser.add_argument("--image", help="the controller image (default: what the tree's default overlay deploys)")
    parser.add_argument("--default", action="store_true", help="make it the default channel (the wheel embeds it)")
    parser.add_argument("--pins", type=Path, default=PINS, help="the pins file to change (default: the package's)")
    args = parser.parse_args(argv)
    try:
        line = run(args)
    except (Refused, TrainerctlError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(line)
    return 0


def run(args: argparse.Namespace) -> str:
    if not args.tag and not (args.commit and args.branch):
        raise Refused("give --tag, or --commit with the --branch it is on")
    if args.commit and not is_commit(args.commit):
        raise Refused(f"--commit {args.commit}: expected 40 hex digits")
    if args.date and not re.fullmatch(r"\d{4}-\d{2}-\d{2}", args.date):
        raise Refused(f"--date {args.date}: expected YYYY-MM-DD")
    default, channels = read_pins(args.pins)
    work = Path(tempfile.mkdtemp(prefix="trainerctl-channel-"))
    try:
        if args.tree is not None:
            if not args.commit:
                raise Refused("--tree: give the --commit it is a checkout of")
            manifests, commit, date, via = local_tree(args.tree), args.commit, "", "tree"
        elif args.go_proxy:
            if not args.tag:
                raise Refused("--go-proxy takes a --tag")
            check_proxy_route(args.url, args.check_against, channels, work)
            manifests, commit, date = proxy_tree(args.url, args.tag, work)
            via = "go-proxy"
        else:
            manifests, commit, date = git_tree(args.url, args.tag, args.commit, args.branch, work)
            via = "git"
        if args.commit and commit != args.commit:
            raise Refused(f"{args.url} {args.tag} is commit {commit}, not --commit {args.commit}")
        spec = {"url": args.url, "tag": args.tag, "branch": None if args.tag else args.branch, "commit": commit,
                "digest": walk_tree(manifests), "trainer": args.trainer or trainer_version(manifests, args.tag),
                "date": args.date or date, "image": controller_image(manifests, args.image), "via": via}
        before = channels.get(args.name)
        channels[args.name] = {k: v for k, v in spec.items() if v}
        if args.default:
            default = args.name
        args.pins.write_text(pins_text(default, channels), encoding="utf-8")
        moved = f"moved from {before['commit']}" if before and before["commit"] != commit else \
            "unchanged" if before else "added"
        line = (f"channel {args.name}: {args.url} {args.tag or args.branch} {commit} {spec['digest']} Trainer "
                f"{spec['trainer']} {spec['image']} ({moved})")
        if default == args.name:
            line += f"\n{check_embed(manifests, work, args.pins)}"
        return line
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
