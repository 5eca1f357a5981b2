"""Check git URLs and refs before any git process sees them.

git treats a ref or URL that starts with `-` as an option (`--upload-pack=…` runs a command) and
`<transport>::<address>` URLs such as `ext::sh -c …` as a command transport, so both are refused
here, and the git environment is restricted again in `gitrepo.py` (defence in depth).
"""

from __future__ import annotations

import re

from trainerctl.errors import InputError
from trainerctl.trust.redact import redact_url, register_url, strip_userinfo
from trainerctl.trust.safe_text import clean

# Transports trainerctl fetches over; `ext`, `fd` and helper transports (`foo::bar`) are refused.
ALLOWED_SCHEMES = ("https", "http", "ssh", "git", "file")

_SCHEME_URL = re.compile(r"^(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*)://(?P<rest>\S+)$")
# scp-like `user@host:path`, the form ssh remotes are usually written in.
_SCP_URL = re.compile(r"^[A-Za-z0-9._-]+@[A-Za-z0-9.-]+:(?![-:/])\S+$")
_REF = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._/+-]*$")
_COMMIT = re.compile(r"^[0-9a-f]{40}$")


def shown_url(url: str) -> str:
    """A URL as every message shows it: its password masked (as kubectl and git do), one line."""
    return redact_url(clean(url, 300))


def validate_url(url: str) -> str:
    """Return `url` if it is a plain https/http/ssh/git/file URL or scp-like ssh address."""
    register_url(url)
    shown = repr(shown_url(url)) if url else "''"
    if not url or url.startswith("-") or any(c.isspace() or ord(c) < 32 for c in url):
        raise InputError(f"source URL {shown}: expected a git URL without spaces or a leading '-'")
    if "::" in url.split("/", 1)[0] or url.lower().startswith("ext:"):
        raise InputError(
            f"source URL {shown}: command transports such as ext:: are not allowed; "
            f"use one of {', '.join(s + '://' for s in ALLOWED_SCHEMES)}"
        )
    match = _SCHEME_URL.match(url)
    if match:
        if match["scheme"].lower() not in ALLOWED_SCHEMES:
            raise InputError(
                f"source URL {shown}: scheme {clean(match['scheme'], 40)!r} is not allowed; "
                f"use one of {', '.join(s + '://' for s in ALLOWED_SCHEMES)}"
            )
        if match["rest"].startswith("-"):
            raise InputError(f"source URL {shown}: host must not start with '-'")
        return url
    if _SCP_URL.match(url):
        return url
    raise InputError(
        f"source URL {shown}: expected https://, http://, ssh://, git://, file:// or user@host:path"
    )


def is_commit(ref: str) -> bool:
    return bool(_COMMIT.match(ref))


def validate_ref(ref: str) -> str:
    """Return `ref` if it is a tag/branch name or a full 40-hex commit SHA (git check-ref-format rules)."""
    problem = None
    if not ref:
        problem = "must not be empty"
    elif len(ref) > 200:
        problem = "is longer than 200 characters"
    elif not _REF.match(ref):
        problem = "must start with a letter or digit and contain only letters, digits and . _ / + -"
    elif ".." in ref or "//" in ref or "/." in ref or ref.endswith(("/", ".", ".lock")):
        problem = "is not a valid git ref name"
    if problem:
        raise InputError(f"ref {clean(ref, 100)!r} {problem} (expected a tag, branch or 40-hex commit)")
    return ref


def normalize_url(url: str) -> str:
    """The form pins, lock files and the cache compare: no user info (a credential is not part of
    the source's identity), no trailing slash or `.git`, lower-case host for https."""
    url = strip_userinfo(url).rstrip("/")
    if url.endswith(".git"):
        url = url[:-4]
    match = _SCHEME_URL.match(url)
    if match and match["scheme"].lower() in ("https", "http"):
        host, _, path = match["rest"].partition("/")
        url = f"{match['scheme'].lower()}://{host.lower()}/{path}"
    return url


_SCP_LIKE = re.compile(r"^[A-Za-z0-9._-]+@[A-Za-z0-9.-]+:")


def is_git_url(value: str) -> bool:
    """A --source value that names a git remote (anything else is a local checkout)."""
    return "://" in value or "::" in value or value.startswith("-") or bool(_SCP_LIKE.match(value))
