"""The few git operations trainerctl needs, through GitPython, in a restricted git environment."""

from __future__ import annotations

import os
from pathlib import Path

from trainerctl.errors import InputError, TrainerctlError
from trainerctl.net.redirects import git_env
from trainerctl.source.tree import check_link_target
from trainerctl.source.validate import ALLOWED_SCHEMES, shown_url
from trainerctl.trust.redact import redact_url
from trainerctl.trust.safe_text import clean

# Network operations give up instead of hanging a pipeline forever.
GIT_TIMEOUT_SECONDS = 300

# Only the transports validate.py allows, never a credential prompt on a pipeline's terminal.
_SAFE_ENV = {
    "GIT_ALLOW_PROTOCOL": ":".join(ALLOWED_SCHEMES),
    "GIT_TERMINAL_PROMPT": "0",
}

SYMLINK_MODE = 0o120000


class FetchError(TrainerctlError):
    """The remote could not be reached or read (exit 1: retry, or use a cache/--source)."""


def _git_error_line(exc: Exception) -> str:
    stderr = getattr(exc, "stderr", "") or str(exc)
    lines = [ln.strip() for ln in str(stderr).splitlines() if ln.strip()]
    lines = [ln[len("stderr: "):] if ln.startswith("stderr: ") else ln for ln in lines]
    lines = [ln.strip("'").strip() for ln in lines if ln.strip("'").strip()]
    # git's words may quote the URL (with its password) or hold a remote's escape sequences.
    return redact_url(clean(lines[-1], 300)) if lines else "git failed"


def open_bare_repo(path: Path):
    """The bare repository in `path`, a cache folder the caller made (trainerctl.cachedir)."""
    import git

    if (path / "HEAD").is_file():
        repo = git.Repo(path)
    else:
        repo = git.Repo.init(path, bare=True)
    repo.git.update_environment(**_SAFE_ENV)
    return repo


def ls_remote(repo, url: str, ref: str) -> tuple[str, str]:
    """Resolve `ref` (tag, else branch) at `url` to (commit SHA, remote ref name); one round trip."""
    import git

    patterns = [f"refs/tags/{ref}", f"refs/tags/{ref}^{{}}", f"refs/heads/{ref}"]
    try:
        out = repo.git.ls_remote("--", url, *patterns, kill_after_timeout=GIT_TIMEOUT_SECONDS, env=git_env(url))
    except git.GitCommandError as exc:
        raise FetchError(f"cannot reach {shown_url(url)}: {_git_error_line(exc)}") from None
    found = dict(reversed(line.split("\t", 1)) for line in out.splitlines() if "\t" in line)
    if patterns[1] in found:  # an annotated tag: the commit it peels to
        return found[patterns[1]], patterns[0]
    for pattern in (patterns[0], patterns[2]):
        if pattern in found:
            return found[pattern], pattern
    raise InputError(f"ref {clean(ref, 100)!r} not found at {shown_url(url)} (expected a tag or branch of that repository)")


def fetch_commit(repo, url: str, remote_ref: str | None, commit: str) -> None:
    """Fetch only `commit` (depth 1), through the remote ref that points at it, or by SHA."""
    import git

    local = f"refs/trainerctl/{commit}"
    refspec = f"+{remote_ref or commit}:{local}"
    try:
        # --no-write-fetch-head: FETCH_HEAD would record the URL, and with it any password in it.
        repo.git.fetch("--depth=1", "--no-tags", "--no-write-fetch-head", "--", url, refspec,
                       kill_after_timeout=GIT_TIMEOUT_SECONDS, env=git_env(url))
        fetched = repo.commit(local).hexsha
    except git.GitCommandError as exc:
        what = remote_ref or commit
        raise FetchError(f"cannot fetch {what} from {shown_url(url)}: {_git_error_line(exc)}") from None
    if fetched != commit:  # the ref moved between ls-remote and fetch
        raise FetchError(f"{remote_ref} at {shown_url(url)} moved while fetching ({commit} -> {fetched}); retry")


def extract_manifests(repo, commit: str, dest: Path, subdir: str = "manifests") -> None:
    """Write `subdir` of `commit` to dest, refusing symlinks that leave it."""
    import git

    try:
        tree = repo.commit(commit).tree / subdir
    except KeyError:
        raise InputError(f"commit {commit} has no {subdir}/ directory") from None
    except (ValueError, git.BadName) as exc:
        raise FetchError(f"commit {commit} is missing from the cache: {exc}") from None
    dest.mkdir(parents=True, exist_ok=True)
    for item in tree.traverse():
        rel = item.path[len(subdir) + 1:]
        target = dest / rel
        if item.type == "tree":
            target.mkdir(parents=True, exist_ok=True)
        elif item.type == "blob":
            data = item.data_stream.read()
            if item.mode == SYMLINK_MODE:
                link = data.decode()
                check_link_target(dest, rel, link)
                os.symlink(link, target)
            else:
                target.write_bytes(data)
                if item.mode & 0o111:
                    target.chmod(0o755)
        else:
            raise InputError(f"{subdir}/{rel} in {commit}: submodules are not supported")
