"""Remote resources: `https://` files and remote git bases, through one cached fetcher.

A mirror map (`PREFIX=REPLACEMENT`, from `--remote-mirror`, config or TRAINERCTL_REMOTE_MIRRORS)
rewrites URLs before anything is fetched, so air-gapped sites can serve their own copies.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import tempfile
import urllib.parse
from dataclasses import dataclass, field
from pathlib import Path

from trainerctl.kustomize.errors import KustomizeError

DEFAULT_TIMEOUT = 30.0
_GIT_HINTS = re.compile(r"(//[^/?]+[^?]*//)|\?ref=|\?version=|\.git($|/|\?)|^git@|_git/|^git::")


def is_remote(ref: str) -> bool:
    return "://" in ref or ref.startswith(("git@", "git::"))


def is_local_url(ref: str) -> bool:
    """A URL that names this machine's files (as written, before any mirror rewrites it)."""
    plain = ref[5:] if ref.startswith("git::") else ref
    return plain.lower().startswith("file:")


def parse_mirrors(values: list[str] | tuple[str, ...]) -> list[tuple[str, str]]:
    mirrors = []
    for v in values:
        prefix, sep, repl = v.partition("=")
        if not sep or not prefix or not repl:
            raise KustomizeError(f"--remote-mirror {v!r}: expected PREFIX=REPLACEMENT")
        mirrors.append((prefix, repl))
    env = os.environ.get("TRAINERCTL_REMOTE_MIRRORS", "")
    for v in filter(None, (s.strip() for s in env.split(","))):
        prefix, sep, repl = v.partition("=")
        if not sep:
            raise KustomizeError(f"TRAINERCTL_REMOTE_MIRRORS entry {v!r}: expected PREFIX=REPLACEMENT")
        mirrors.append((prefix, repl))
    return mirrors


@dataclass
class GitSpec:
    repo: str  # clone URL
    path: str  # directory inside the repo
    ref: str


def parse_git_url(url: str) -> GitSpec | None:
    """kustomize's remote base forms: `https://host/org/repo//path?ref=X`, `file:///repo//path?ref=X`."""
    if url.startswith("git::"):
        url = url[5:]
    base, _, query = url.partition("?")
    params = urllib.parse.parse_qs(query)
    ref = (params.get("ref") or params.get("version") or [""])[0]
    scheme_end = base.find("://")
    rest_start = scheme_end + 3 if scheme_end >= 0 else 0
    split = base.find("//", rest_start)
    if split >= 0:
        repo, path = base[:split], base[split + 2:]
    elif ".git" in base:
        i = base.index(".git") + 4
        repo, path = base[:i], base[i:].lstrip("/")
    elif not ref:
        return None
    else:
        repo, path = base, ""
    return GitSpec(repo, path.strip("/"), ref)


def _fetch_with_retry(url: str, timeout: float, attempts: int = 3) -> bytes:
    """GET a release file. A connection reset or dropped before any reply is retried: the file is
    immutable, so a second GET is safe, and a busy server (or proxy) that sheds one connection
    should not fail a whole build. Anything else (HTTP errors, refused, DNS, time-outs) is final."""
    import time
    import urllib.error
    import urllib.request

    def get() -> bytes:
        with urllib.request.urlopen(url, timeout=timeout) as resp:  # noqa: S310
            return resp.read()

    for attempt in range(1, attempts):
        try:
            return get()
        except (ConnectionResetError, urllib.error.URLError) as exc:  # RemoteDisconnected is a reset too
            # urlopen wraps a reset while sending in URLError; one while reading the reply is raw.
            if not isinstance(getattr(exc, "reason", exc), ConnectionResetError):
                raise
            time.sleep(0.2 * attempt)
    return get()


@dataclass
class Fetcher:
    mirrors: list[tuple[str, str]] = field(default_factory=list)
    cache_dir: Path = field(default_factory=lambda: Path(
        os.environ.get("TRAINERCTL_CACHE_DIR")
        or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "trainerctl"
    ) / "remote")
    timeout: float = DEFAULT_TIMEOUT
    _files: dict[str, bytes] = field(default_factory=dict)
    _clones: dict[tuple[str, str], Path] = field(default_factory=dict)
    _tmp: list[str] = field(default_factory=list)

    def rewrite(self, url: str) -> str:
        for prefix, repl in self.mirrors:
            if url.startswith(prefix):
                return repl + url[len(prefix):]
        return url

    def looks_like_git(self, url: str) -> bool:
        return bool(_GIT_HINTS.search(self.rewrite(url)))

    def get_file(self, url: str, where: str) -> bytes:
        real = self.rewrite(url)
        if real in self._files:
            return self._files[real]
        import urllib.error
        import urllib.request  # http.client is slow to import; only remote builds pay for it

        if not real.startswith(("http://", "https://")):
            raise KustomizeError(f"{where}: unsupported remote file URL {url!r}")
        # Release files are immutable: a copy fetched once serves later (and offline) builds.
        cached = self.cache_dir / "http" / hashlib.sha256(real.encode()).hexdigest()
        if cached.is_file():
            data = cached.read_bytes()
            self._files[real] = data
            return data
        try:
            data = _fetch_with_retry(real, self.timeout)
        except urllib.error.HTTPError as exc:
            raise KustomizeError(f"{where}: fetching {real}: HTTP {exc.code}") from None
        except (urllib.error.URLError, OSError, TimeoutError) as exc:
            reason = getattr(exc, "reason", exc)
            raise KustomizeError(
                f"{where}: cannot fetch {real}: {reason} (offline? use --remote-mirror)"
            ) from None
        self._files[real] = data
        try:
            cached.parent.mkdir(parents=True, exist_ok=True)
            tmp = cached.with_suffix(f".{os.getpid()}.tmp")
            tmp.write_bytes(data)
            tmp.replace(cached)
        except OSError:
            pass  # a read-only cache only costs a re-fetch next time
        return data

    def clone(self, url: str, where: str) -> tuple[Path, Path]:
        """(repo top, directory for the base) of a remote git base, cached by URL and ref."""
        real = self.rewrite(url)
        spec = parse_git_url(real)
        if spec is None:
            raise KustomizeError(f"{where}: {url!r} is not a file, directory or git URL")
        key = (spec.repo, spec.ref)
        top = self._clones.get(key)
        if top is None:
            top = self._clone(spec, where)
            self._clones[key] = top
        directory = top / spec.path if spec.path else top
        if not directory.is_dir():
            raise KustomizeError(f"{where}: {spec.path!r} is not a directory in {spec.repo}@{spec.ref}")
        return top, directory

    def _clone(self, spec: GitSpec, where: str) -> Path:
        import git  # GitPython; imported only when a remote base is used

        if spec.repo.startswith("-") or spec.ref.startswith("-") or "::" in spec.repo:
            raise KustomizeError(f"{where}: refusing suspicious git URL or ref {spec.repo!r}@{spec.ref!r}")
        digest = hashlib.sha256(f"{spec.repo}\0{spec.ref}".encode()).hexdigest()[:20]
        dest = self.cache_dir / digest
        if (dest / ".git").is_dir() and spec.ref and re.fullmatch(r"v?\d+\.\d+\.\d+.*|[0-9a-f]{40}", spec.ref):
            return dest.resolve()
        tmp = Path(tempfile.mkdtemp(prefix="clone-", dir=self._ensure_cache()))
        try:
            repo = git.Repo.init(tmp)
            remote = repo.create_remote("origin", spec.repo)
            try:
                # As little history as the ref allows.
                remote.fetch(spec.ref or "HEAD", depth=1, kill_after_timeout=self.timeout)
                commit = "FETCH_HEAD"
            except git.GitCommandError:
                # Servers may refuse a shallow fetch of a commit id: fetch all, then look it up.
                remote.fetch(kill_after_timeout=self.timeout, tags=True)
                commit = _resolve_ref(repo, spec.ref)
                if commit is None:
                    raise git.GitCommandError("fetch", 1, stderr=f"ref {spec.ref!r} not found") from None
            repo.git.checkout("--detach", commit)
        except git.GitCommandError as exc:
            shutil.rmtree(tmp, ignore_errors=True)
            msg = (exc.stderr or str(exc)).strip().splitlines()
            # GitPython quotes git's stderr as "stderr: '...'"; keep git's own words.
            detail = re.sub(r"^stderr:\s*'?", "", msg[-1].strip()).strip("'") if msg else "git failed"
            raise KustomizeError(
                f"{where}: cannot fetch {spec.repo} at ref {spec.ref or 'HEAD'!r}: {detail}"
            ) from None
        if dest.exists():
            shutil.rmtree(dest, ignore_errors=True)
        tmp.rename(dest)
        return dest.resolve()

    def _ensure_cache(self) -> str:
        self.cache_dir.mkdir(parents=True, exist_ok=True)
        return str(self.cache_dir)


def _resolve_ref(repo, ref: str) -> str | None:
    for candidate in (f"refs/tags/{ref}", f"refs/remotes/origin/{ref}", ref):
        try:
            return repo.git.rev_parse("--verify", "--quiet", f"{candidate}^{{commit}}")
        except Exception:  # GitCommandError: not this form of the ref
            continue
    return None
