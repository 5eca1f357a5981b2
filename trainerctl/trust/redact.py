"""The credentials of this run, and the one function that takes them out of any text.

Whoever reads a credential registers it here (a kubeconfig token or token file, an exec plugin's
answer, a client key, a password in a URL, the payload of a Secret given with `-f`). Every line
trainerctl prints passes `redact` on its way out (trainerctl.trust.stdio wraps stdout and stderr), so a
credential that reaches a message by any route (a server echoing a header, a library quoting a
value in an exception, a traceback under TRAINERCTL_DEBUG) is printed as REDACTED.

Reports and files are redacted as values, before they are serialized (`scrub`): JSON escapes a
non-ASCII letter, a quote or a backslash, and YAML quotes or folds a long line, so a credential
searched for in the serialized text would be missed in exactly those forms. `scrub` walks the
object instead: the values of anything shaped as a Secret (`kind: Secret`, its `data` and
`stringData`) are registered and blanked, then every registered value is taken out of every
string, keys included. Only then is the object serialized (trainerctl.trust.serialize).

Passwords in URLs are shown the way kubectl shows them (Go's URL.Redacted): `user:xxxxx@host`.
A user name alone in an http(s) URL is hidden the same way, because tokens are often passed as
the user name (`https://<token>@github.com/...`); `ssh://git@host` and `git@host:path` keep
theirs. Files trainerctl writes never hold a URL's user info at all (`strip_userinfo`).
"""

from __future__ import annotations

import base64
import binascii
import json
import re
import threading
from typing import Any

MASK = "REDACTED"
URL_PASSWORD_MASK = "xxxxx"
# Shorter values are not registered: masking every "true" or "1234" would garble every message,
# and so short a value is no credential. A longer credential's lines are registered one by one.
MIN_LENGTH = 8

_lock = threading.Lock()
_values: set[str] = set()
# Built from _values when first needed after a change (a bundle registers many values at once;
# compiling the pattern at each would cost the square of their number).
_built: tuple[re.Pattern | None, tuple[str, ...]] = (None, ())  # the pattern; _values longest first
_stale = False
# Above this length a text is first searched value by value (a C substring search each) and the
# pattern built from the values present only: one pattern of hundreds of alternatives run over a
# 4 MiB log would cost seconds.
_LONG_TEXT = 4096

# scheme://userinfo@ in free text. As in Go's url.Parse, the user info ends at the LAST '@' of the
# authority (which ends at '/', '?', '#' or a space), so a raw '@' in a password is covered too.
_URL_USERINFO = re.compile(r"(?P<scheme>\b[A-Za-z][A-Za-z0-9+.-]*://)(?P<userinfo>[^/?#\s]*)@")
_HIDE_USER_SCHEMES = ("http://", "https://")
# The runs of whitespace a one-line message collapses into one space (safe_text.clean).
WHITESPACE = re.compile(r"[ \t\r\n\v\f\u2028\u2029\x85]+")


def _forms(value: str) -> set[str]:
    """The ways a value can appear in text: as is, per line, with its runs of whitespace collapsed
    as a one-line message shows it (a message made one line before the value was registered),
    JSON- or repr-escaped, base64."""
    if len(value.strip()) < MIN_LENGTH:
        return set()
    collapsed = WHITESPACE.sub(" ", value).strip()
    forms = {value, value.strip(), collapsed}
    for line in value.splitlines():
        forms.add(line.strip())
    for text in {value, collapsed}:
        forms.add(json.dumps(text)[1:-1])
        forms.add(json.dumps(text, ensure_ascii=False)[1:-1])
    forms.add(repr(value)[1:-1])
    forms.add(repr(value.encode("utf-8", "surrogateescape"))[2:-1])
    try:
        raw = value.encode("utf-8", "surrogateescape")
        forms.add(base64.b64encode(raw).decode("ascii"))
        forms.add(base64.b64encode(raw.strip()).decode("ascii"))
    except UnicodeError:
        pass
    return {f for f in forms if len(f) >= MIN_LENGTH}


def register(value: str | bytes | None) -> None:
    """Remember a credential of this run; from now on it never appears in what trainerctl prints."""
    global _stale
    if not value:
        return
    if isinstance(value, bytes):
        value = value.decode("utf-8", "surrogateescape")
    forms = _forms(value)
    if not forms:
        return
    with _lock:
        if forms <= _values:
            return
        _values.update(forms)
        _stale = True


def _current() -> tuple[re.Pattern | None, tuple[str, ...]]:
    global _built, _stale
    if not _stale:
        return _built
    with _lock:
        if _stale:
            # Longest first, so a value wins over a line of itself.
            ordered = tuple(sorted(_values, key=len, reverse=True))
            _built = (re.compile("|".join(re.escape(v) for v in ordered)), ordered)
            _stale = False
        return _built


def registered() -> bool:
    return bool(_values)


def forget_all() -> None:
    """For tests: a fresh run knows no credential."""
    global _built, _stale
    with _lock:
        _values.clear()
        _built, _stale = (None, ()), False


def _mask_userinfo(match: re.Match) -> str:
    scheme, userinfo = match["scheme"], match["userinfo"]
    user, colon, _password = userinfo.partition(":")
    if colon:
        return f"{scheme}{user}:{URL_PASSWORD_MASK}@"
    if scheme.lower() in _HIDE_USER_SCHEMES and user:
        return f"{scheme}{URL_PASSWORD_MASK}@"
    return match.group(0)


def redact(text: str, *, urls: bool = True) -> str:
    """`text` without any registered credential, and (unless urls=False) without URL passwords."""
    pattern, ordered = _current()
    if pattern is not None and len(text) > _LONG_TEXT:
        present = [v for v in ordered if v in text]
        pattern = re.compile("|".join(re.escape(v) for v in present)) if present else None
    if pattern is not None:
        text = pattern.sub(MASK, text)
    if urls and "@" in text:
        text = _URL_USERINFO.sub(_mask_userinfo, text)
    return text


def scrub(value: Any) -> Any:
    """A copy of `value` (JSON-shaped: mappings, lists, strings, numbers) fit to serialize into a
    report or a file: every mapping shaped as a Secret has its `data` and `stringData` values
    registered (as given, and base64-decoded for `data`) and replaced by "REDACTED (N bytes)";
    then every registered credential is taken out of every string, mapping keys included.
    Secrets are registered before anything is replaced, so a value met late in the walk is
    blanked early in it too."""
    _register_secrets(value)
    return _replaced(value)


def mask(value: Any) -> Any:
    """A copy of `value` with every registered credential taken out of every string, mapping keys
    included; a Secret's values are the caller's to show (`diff` shows them as kubectl diff does)."""
    return _replaced(value, blank=False)


_BLANKED = re.compile(re.escape(MASK) + r" \(\d+ bytes\)")


def _secret_values(node: dict) -> list[tuple[str, dict]]:
    """The value mappings of a Secret-shaped mapping, with the key each is under."""
    if node.get("kind") != "Secret":
        return []
    return [(key, node[key]) for key in ("data", "stringData") if isinstance(node.get(key), dict)]


def _walk(value: Any):
    """Every mapping inside `value` (depth first, without recursion: the depth is the data's)."""
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            yield node
            stack.extend(node.values())
        elif isinstance(node, (list, tuple)):
            stack.extend(node)


def _register_secrets(value: Any) -> None:
    for node in _walk(value):
        for key, values in _secret_values(node):
            for item in values.values():
                if not isinstance(item, str) or _BLANKED.fullmatch(item):  # scrubbed already
                    continue
                register(item)
                if key == "data":
                    decoded = _b64(item)
                    if decoded is not None:
                        register(decoded)


def _b64(text: str) -> bytes | None:
    """A Secret's data value decoded (strict base64), None when it is not base64. Base64 only
    shrinks what is already in memory (a bounded API answer or file), so no limit of its own."""
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        return None


def _secret_size(value: Any, b64: bool) -> int:
    if not isinstance(value, str):
        return 0
    decoded = _b64(value) if b64 else value.encode("utf-8", "surrogateescape")
    return len(value) if decoded is None else len(decoded)


def _replaced(value: Any, blank: bool = True) -> Any:
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        out = {_replaced(k) if isinstance(k, str) else k: _replaced(v, blank) for k, v in value.items()}
        for key, values in _secret_values(value) if blank else ():
            out.pop(redact(key), None)  # a value spelled inside "stringData" masked the key: one key stays
            out[key] = {redact(k) if isinstance(k, str) else k:
                        v if isinstance(v, str) and _BLANKED.fullmatch(v) else
                        f"{MASK} ({_secret_size(v, key == 'data')} bytes)" for k, v in values.items()}
        return out
    if isinstance(value, (list, tuple)):
        return [_replaced(v, blank) for v in value]
    return value


def redact_url(url: str) -> str:
    """A URL as messages show it: its password (or token-like user name) replaced by xxxxx."""
    return _URL_USERINFO.sub(_mask_userinfo, url)


def userinfo_secret(url: str) -> str | None:
    """The secret part of a URL's user info (password, or an http(s) user name standing alone)."""
    match = _URL_USERINFO.match(url.strip())
    if not match:
        return None
    user, colon, password = match["userinfo"].partition(":")
    if colon:
        return password or None
    return user if match["scheme"].lower() in _HIDE_USER_SCHEMES and user else None


def register_url(url: str | None) -> None:
    """Register the secret part of a URL's user info (see userinfo_secret), whatever its length
    (`redact` masks it by position anyway; long ones also by value)."""
    if url:
        secret = userinfo_secret(url)
        if secret:
            from urllib.parse import unquote

            register(secret)
            register(unquote(secret))


def strip_userinfo(url: str) -> str:
    """The URL without user info, as git records a remote it was given with credentials: for
    lock files, cache indexes and anything else written to disk."""
    match = _URL_USERINFO.match(url)
    if not match:
        return url
    user, colon, _ = match["userinfo"].partition(":")
    if match["scheme"].lower() in _HIDE_USER_SCHEMES or not user:
        return match["scheme"] + url[match.end():]
    return f"{match['scheme']}{user}@{url[match.end():]}"  # ssh://git@host: a user name, no credential
