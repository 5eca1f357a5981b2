"""Remote resources: `https://` files and remote git bases, through one fetcher per build.

A mirror map (`PREFIX=REPLACEMENT`, from `--remote-mirror`, config or TRAINERCTL_REMOTE_MIRRORS)
rewrites URLs before anything is fetched, so air-gapped sites can serve their own copies.

Caching is as kubectl's or safer: kubectl fetches every remote on every build; trainerctl keeps
across builds only what cannot change, and only once it was used successfully:
- an https file whose URL (as written, before any mirror) names a release download of a
  version (`.../releases/download/v1.2.3/...`) or a 40-hex commit as a path segment,
- a git base pinned to a 40-hex commit (`?ref=<sha>`).
A branch, a tag or an error page is fetched anew each build (tags can move). Clones that are
not kept live in the cache's private folder while the build runs and are removed after it.
Files are 0600 in 0700 folders (made and opened by trainerctl.cachedir, never through a symlink;
files written by safe_write and read without following one), written whole or not at all; a
redirect goes where trainerctl.net.redirects allows (https, or plain HTTP to the host the URL
names), never elsewhere; a password in a URL is never
written (keys and clone folders hash the URL without it, git is given no named remote) and is
shown masked, as Go's url.Redacted does (`https://user:xxxxx@host/...`).
"""

from __future__ import annotations

import os
import re

from trainerctl.cachedir import cache_folder, cached_folder, default_cache_dir
from trainerctl.errors import InputError
from trainerctl.kustomize.errors import KustomizeError
from trainerctl.kustomize.filesys import FsError, max_file_bytes, too_large
from trainerctl.net.deadlines import watch
from trainerctl.net.redirects import RedirectRefused, follow, git_env
from trainerctl.trust.bounded_read import read_input
from trainerctl.trust.limits import LIMITS, seconds_for
from trainerctl.trust.safe_write import write_atomic

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path

# The standard modules for URLs, hashes, temporary files and paths are imported where a remote
# is used: a build without one (nearly every build) does not pay for them.

DEFAULT_TIMEOUT = 30.0
_GIT_HINTS = re.compile(r"(//[^/?]+[^?]*//)|\?ref=|\?version=|\.git($|/|\?)|^git@|_git/|^git::")
_RELEASE_DOWNLOAD = re.compile(r"/releases/download/v?\d+(\.\d+)+[^/]*/")
_COMMIT_SEGMENT = re.compile(r"/[0-9a-f]{40}(/|$)")
_COMMIT = re.compile(r"[0-9a-f]{40}")
_USERINFO = re.compile(r"(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*://)(?P<user>[^/@\s:]*):(?P<pw>[^/@\s]*)@")


def is_remote(ref: str) -> bool:
    return "://" in ref or ref.startswith(("git@", "git::"))


def is_local_url(ref: str) -> bool:
    """A URL that names this machine's files (as written, before any mirror rewrites it)."""
    plain = ref[5:] if ref.startswith("git::") else ref
    return plain.lower().startswith("file:")


def redact(text: str) -> str:
    """`text` with the password of every URL in it masked, as Go's url.Redacted shows it."""
    return _USERINFO.sub(lambda m: f"{m['scheme']}{m['user']}:xxxxx@", text)


def _without_userinfo(url: str) -> str:
    import urllib.parse

    parts = urllib.parse.urlsplit(url)
    if "@" not in parts.netloc:
        return url
    return urllib.parse.urlunsplit(parts._replace(netloc=parts.netloc.rpartition("@")[2]))


def immutable_file(url: str) -> bool:
    """A file URL whose content cannot change: a versioned release download or a commit."""
    import urllib.parse

    path = urllib.parse.urlsplit(url).path
    return bool(_RELEASE_DOWNLOAD.search(path) or _COMMIT_SEGMENT.search(path))


def parse_mirrors(values: list[str] | tuple[str, ...]) -> list[tuple[str, str]]:
    mirrors = []
    for v in values:
        prefix, sep, repl = v.partition("=")
        if not sep or not prefix or not repl:
            raise KustomizeError(f"--remote-mirror {redact(v)!r}: expected PREFIX=REPLACEMENT")
        mirrors.append((prefix, repl))
    env = os.environ.get("TRAINERCTL_REMOTE_MIRRORS", "")
    for v in filter(None, (s.strip() for s in env.split(","))):
        prefix, sep, repl = v.partition("=")
        if not sep:
            raise KustomizeError(f"TRAINERCTL_REMOTE_MIRRORS entry {redact(v)!r}: expected PREFIX=REPLACEMENT")
        mirrors.append((prefix, repl))
    return mirrors


class GitSpec:
    """A remote git base: the repository, the directory in it, the ref."""

    __slots__ = ("repo", "path", "ref")

    def __init__(self, repo: str, path: str, ref: str):
        self.repo = repo  # clone URL
        self.path = path  # directory inside the repo
        self.ref = ref

    def __eq__(self, other: object) -> bool:
        return (other.__class__ is GitSpec
                and (self.repo, self.path, self.ref) == (other.repo, other.path, other.ref))

    __hash__ = None

    def __repr__(self) -> str:
        return f"GitSpec(repo={redact(self.repo)!r}, path={self.path!r}, ref={self.ref!r})"


def parse_git_url(url: str) -> GitSpec | None:
    """kustomize's remote base forms: `https://host/org/repo//path?ref=X`, `file:///repo//path?ref=X`."""
    import urllib.parse

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


def _read_bounded(resp) -> bytes:
    limit = max_file_bytes()
    length = resp.headers.get("Content-Length")
    if length and length.strip().isascii() and length.strip().isdigit() and int(length) > limit:
        raise too_large(limit)
    data = resp.read(limit + 1)
    if len(data) > limit:
        raise too_large(limit)
    return data


class FetchDeadline(TimeoutError):
    """A remote file not fetched whole within its total deadline (limits.LIMITS "remote-time")."""


def _opener(deadline: float, url: str):
    """urllib's opener, each of whose connections (redirects' too) the transport's watchdog shuts
    down at `deadline`: a per-read time-out alone lets a server sending one byte every few
    seconds hold a build forever. Its redirects go where net.redirects allows: https, or plain
    http to the host `url` names when it is an http:// URL."""
    import http.client
    import urllib.parse
    import urllib.request


    parts = urllib.parse.urlsplit(url)
    plain = [parts.netloc.rpartition("@")[2]] if parts.scheme == "http" else []

    class Redirects(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, req, fp, code, msg, headers, newurl):
            return super().redirect_request(req, fp, code, msg, headers, follow(
                req.full_url, newurl, plain, "plain HTTP is followed only on the host an http:// URL names"))

    releases = []

    class Held:
        """What the watchdog shuts down: the socket as connected (urllib lets go of the
        connection's own `sock` once the reply has started, the body is read through it still)."""

        sock = None

    def watched(cls):
        def make(host, **kwargs):
            conn, held = cls(host, **kwargs), Held()
            connect = conn.connect

            def connected():
                connect()
                held.sock = conn.sock

            conn.connect = connected
            releases.append(watch(held, deadline))
            return conn
        return make

    class HTTP(urllib.request.HTTPHandler):
        def http_open(self, req):
            return self.do_open(watched(http.client.HTTPConnection), req)

    class HTTPS(urllib.request.HTTPSHandler):
        def https_open(self, req):
            return self.do_open(watched(http.client.HTTPSConnection), req, context=self._context)

    return urllib.request.build_opener(HTTP, HTTPS, Redirects), releases


def _fetch_with_retry(url: str, timeout: float, attempts: int = 3) -> bytes:
    """GET a file, whole within the "remote-time" limit (limits.LIMITS: a total deadline,
    redirects and retries included; `timeout` bounds each wait on the socket). A connection reset
    or dropped before any reply is retried: a GET is safe to repeat, and a busy server (or proxy)
    that sheds one connection should not fail a whole build. Anything else (HTTP errors, refused,
    DNS, time-outs) is final."""
    import http.client
    import time
    import urllib.error
    import urllib.parse
    import urllib.request

    total = seconds_for("remote-time")
    deadline = time.monotonic() + total
    opener, releases = _opener(deadline, url)
    request = urllib.request.Request(_without_userinfo(url))
    user = urllib.parse.urlsplit(url)
    if user.username is not None:
        # As Go's http client: user info is sent as basic auth, and not to where it redirects.
        import base64

        pair = f"{urllib.parse.unquote(user.username)}:{urllib.parse.unquote(user.password or '')}"
        request.add_unredirected_header("Authorization", "Basic " + base64.b64encode(pair.encode()).decode())

    def get() -> bytes:
        try:
            with opener.open(request, timeout=max(0.001, min(timeout, deadline - time.monotonic()))) as resp:
                data = _read_bounded(resp)
        except (OSError, http.client.HTTPException):
            if time.monotonic() >= deadline:  # the watchdog shut it down: say so, not what it broke
                raise FetchDeadline(f"not fetched whole within {total:g}s "
                                    f"(raise it with {LIMITS['remote-time'].env}=SECONDS)") from None
            raise
        if time.monotonic() >= deadline:  # a body cut short by the shutdown can look complete
            raise FetchDeadline(f"not fetched whole within {total:g}s "
                                f"(raise it with {LIMITS['remote-time'].env}=SECONDS)")
        return data

    try:
        for attempt in range(1, attempts):
            try:
                return get()
            except (ConnectionResetError, urllib.error.URLError) as exc:  # RemoteDisconnected is a reset too
                # urlopen wraps a reset while sending in URLError; one while reading the reply is raw.
                if not isinstance(getattr(exc, "reason", exc), ConnectionResetError) \
                        or time.monotonic() + 0.2 * attempt >= deadline:
                    raise
                time.sleep(0.2 * attempt)
        return get()
    finally:
        for release in releases:
            release()


class Fetcher:
    """Fetches a build's remote files and bases (one per build: what it fetched stays for the
    build, what it may keep goes to the cache)."""

    def __init__(self, mirrors: list[tuple[str, str]] | None = None, cache_home: str | Path | None = None,
                 timeout: float = DEFAULT_TIMEOUT):
        self.mirrors = mirrors or []
        self.cache_home = cache_home  # trainerctl's cache home (trainerctl.cachedir); None: the default
        self.cache_dir: Path | None = None  # its remote/ folder, looked up when first needed
        self.timeout = timeout
        self._files: dict[str, bytes] = {}
        self._pending: dict[str, Path] = {}  # fetched, kept once used
        self._clones: dict[tuple[str, str], Path] = {}
        self._scratch: list[Path] = []  # clones removed by close()

    def rewrite(self, url: str) -> str:
        for prefix, repl in self.mirrors:
            if url.startswith(prefix):
                return repl + url[len(prefix):]
        return url

    def looks_like_git(self, url: str) -> bool:
        return bool(_GIT_HINTS.search(self.rewrite(url)))

    def _home(self) -> Path:
        from pathlib import Path

        return Path(self.cache_home or default_cache_dir())

    def _cache(self) -> Path:
        if self.cache_dir is None:
            self.cache_dir = self._home() / "remote"
        return self.cache_dir

    def _http_cache(self, real: str) -> Path:
        import hashlib

        key = hashlib.sha256(_without_userinfo(real).encode()).hexdigest()
        return self._cache() / "http" / key

    def get_file(self, url: str, where: str) -> bytes:
        """The body of `url`. An immutable one comes from the cache when it is there; a new one
        is kept only after `keep(url)`, once the caller has read it successfully."""
        real = self.rewrite(url)
        if real in self._files:
            return self._files[real]
        if not real.startswith(("http://", "https://")):
            raise KustomizeError(f"{redact(where)}: unsupported remote file URL {redact(url)!r}")
        cached = self._http_cache(real) if immutable_file(url) else None
        if cached is not None and cached_folder(self._home(), "remote", "http") is not None:
            try:
                data = read_input(str(cached), str(cached), "cache-file", follow=False)
                self._files[real] = data
                return data
            except InputError:  # not there (the usual miss), a symlink, too large
                pass
        import http.client  # slow to import; only remote builds pay for it
        import urllib.error


        try:
            data = _fetch_with_retry(real, self.timeout)
        except urllib.error.HTTPError as exc:
            raise KustomizeError(f"{redact(where)}: fetching {redact(real)}: HTTP {exc.code}") from None
        except FetchDeadline as exc:
            raise KustomizeError(f"{redact(where)}: cannot fetch {redact(real)}: {exc}") from None
        except FsError as exc:
            raise KustomizeError(f"{redact(where)}: fetching {redact(real)}: body {exc}") from None
        except RedirectRefused as exc:
            raise KustomizeError(f"{redact(where)}: fetching {redact(real)}: the server {exc}") from None
        except (urllib.error.URLError, OSError, TimeoutError, http.client.HTTPException) as exc:
            reason = getattr(exc, "reason", exc)
            raise KustomizeError(
                f"{redact(where)}: cannot fetch {redact(real)}: {redact(str(reason))} "
                f"(offline? use --remote-mirror)"
            ) from None
        self._files[real] = data
        if cached is not None:
            self._pending[url] = cached
        return data

    def keep(self, url: str) -> None:
        """`url` was read as what it should be (YAML objects, a schema): cache it if it is
        immutable. A read-only cache only costs a fetch next time."""
        cached = self._pending.pop(url, None)
        if cached is None:
            return
        try:
            write_atomic(cache_folder(self._home(), "remote", "http") / cached.name, self._files[self.rewrite(url)],
                         mode=0o600)
        except OSError:
            pass

    def clone(self, url: str, where: str) -> tuple[Path, Path]:
        """(repo top, directory for the base) of a remote git base."""
        real = self.rewrite(url)
        spec = parse_git_url(real)
        if spec is None:
            raise KustomizeError(f"{redact(where)}: {redact(url)!r} is not a file, directory or git URL")
        key = (spec.repo, spec.ref)
        top = self._clones.get(key)
        if top is None:
            top = self._clone(spec, where)
            self._clones[key] = top
        directory = top / spec.path if spec.path else top
        if not directory.is_dir():
            raise KustomizeError(f"{redact(where)}: {spec.path!r} is not a directory in "
                                 f"{redact(spec.repo)}@{spec.ref}")
        return top, directory

    def _clone(self, spec: GitSpec, where: str) -> Path:
        import hashlib
        import shutil
        import tempfile
        from pathlib import Path

        if spec.repo.startswith("-") or spec.ref.startswith("-") or "::" in spec.repo:
            raise KustomizeError(f"{redact(where)}: refusing suspicious git URL or ref "
                                 f"{redact(spec.repo)!r}@{spec.ref!r}")
        digest = hashlib.sha256(f"{_without_userinfo(spec.repo)}\0{spec.ref}".encode()).hexdigest()[:20]
        pinned = bool(_COMMIT.fullmatch(spec.ref))
        kept = self._cache() / "git" / digest
        if pinned and cached_folder(self._home(), "remote", "git", digest) is not None:
            return kept.resolve()
        try:
            work = Path(tempfile.mkdtemp(prefix="clone-", dir=cache_folder(self._home(), "remote")))
        except OSError as exc:
            raise KustomizeError(f"{redact(where)}: cache {self._cache()}: {exc.strerror}") from None
        try:
            _checkout(spec, work, self.timeout, where)
            if not pinned:
                self._scratch.append(work)
                return work.resolve()
            cache_folder(self._home(), "remote", "git")
            try:
                work.rename(kept)
            except OSError:  # another build kept it first, or what stands there is no folder of ours
                if cached_folder(self._home(), "remote", "git", digest) is None:
                    self._scratch.append(work)
                    return work.resolve()
                shutil.rmtree(work, ignore_errors=True)
            return kept.resolve()
        except BaseException:
            shutil.rmtree(work, ignore_errors=True)
            raise

    def close(self) -> None:
        """Remove the clones that are not kept."""
        if not self._scratch:
            return
        import shutil

        for path in self._scratch:
            shutil.rmtree(path, ignore_errors=True)
        self._scratch.clear()


def _checkout(spec: GitSpec, work: Path, timeout: float, where: str) -> None:
    """The tree of spec.ref at work/, without .git: nothing of the URL stays on disk. The URL
    goes to git on the command line, never into a config file."""
    import shutil

    import git  # GitPython; imported only when a remote base is used

    import time

    # One total deadline for the base's fetch, both tries (limits.LIMITS "remote-time").
    deadline = time.monotonic() + seconds_for("remote-time")
    repo = git.Repo.init(work)
    repo.git.update_environment(GIT_TERMINAL_PROMPT="0")
    try:
        try:
            # As little history as the ref allows.
            repo.git.fetch("--depth=1", "--", spec.repo, spec.ref or "HEAD",
                           kill_after_timeout=max(1.0, deadline - time.monotonic()), env=git_env(spec.repo))
            commit = "FETCH_HEAD"
        except git.GitCommandError:
            # Servers may refuse a shallow fetch of a commit id: fetch all, then look it up.
            repo.git.fetch("--tags", "--", spec.repo, "+refs/heads/*:refs/remotes/origin/*",
                           kill_after_timeout=max(1.0, deadline - time.monotonic()), env=git_env(spec.repo))
            commit = _resolve_ref(repo, spec.ref)
            if commit is None:
                raise git.GitCommandError("fetch", 1, stderr=f"ref {spec.ref!r} not found") from None
        repo.git.checkout("--detach", commit)
    except git.GitCommandError as exc:
        msg = (exc.stderr or str(exc)).strip().splitlines()
        # GitPython quotes git's stderr as "stderr: '...'"; keep git's own words.
        detail = re.sub(r"^stderr:\s*'?", "", msg[-1].strip()).strip("'") if msg else "git failed"
        raise KustomizeError(
            f"{redact(where)}: cannot fetch {redact(spec.repo)} at ref {spec.ref or 'HEAD'!r}: "
            f"{redact(detail)}"
        ) from None
    finally:
        repo.close()
    shutil.rmtree(work / ".git", ignore_errors=True)


def _resolve_ref(repo, ref: str) -> str | None:
    for candidate in (f"refs/tags/{ref}", f"refs/remotes/origin/{ref}", ref):
        try:
            return repo.git.rev_parse("--verify", "--quiet", f"{candidate}^{{commit}}")
        except Exception:  # GitCommandError: not this form of the ref
            continue
    return None
