"""Registry credentials, found where docker and podman keep them.

Files, first match wins per registry: `--registry-config FILE` alone when given, else
$REGISTRY_AUTH_FILE alone when set, else podman's ${XDG_RUNTIME_DIR}/containers/auth.json and
~/.config/containers/auth.json, then docker's $DOCKER_CONFIG/config.json (~/.docker/config.json).

In each file, as docker reads it: `credHelpers[host]` names a helper for that registry, else
`credsStore` one for all; a helper runs as `docker-credential-NAME get` with the server on stdin
and answers {"ServerURL", "Username", "Secret"} (Username `<token>`: Secret is an identity token).
A helper that has nothing for the registry leaves the `auths` entry to answer: `auth` (base64
user:password), `username`/`password`, `identitytoken` (an OAuth2 refresh token for the token
server) or `registrytoken` (a bearer token as is). Keys may be a host, a URL
(`https://index.docker.io/v1/`) or, as podman allows, host/namespace[/repository]; the most
specific wins.

Helpers are bounded like kubeconfig exec plugins (a time-out, a size limit on their output, their
error output cleaned); every secret is registered with trainerctl.trust.redact; nothing is written.
"""

from __future__ import annotations

import base64
import binascii
import json
import os
import re
import shutil
import subprocess
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping

from trainerctl.errors import InputError, TrainerctlError
from trainerctl.registry.names import DOCKER_HUB, DOCKER_HUB_ALIASES
from trainerctl.trust import redact
from trainerctl.trust.bounded_process import read_process
from trainerctl.trust.bounded_read import read_input, shown_path
from trainerctl.trust.safe_text import clean, field_name

HELPER_TIMEOUT = 60.0
DOCKER_HUB_SERVER = "https://index.docker.io/v1/"  # the key docker stores Docker Hub under
_HELPER_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
_NOT_FOUND = "credentials not found"


class HelperFailed(TrainerctlError):
    """A credential helper could not answer (exit 1: the user's helper or store is at fault)."""


@dataclass(frozen=True)
class Credential:
    """What to present to one registry, and where it came from (for messages, never the value)."""

    where: str
    username: str = ""
    password: str = ""
    identity_token: str = ""  # an OAuth2 refresh token for the token server
    registry_token: str = ""  # a bearer token, sent as is


@dataclass
class _AuthFile:
    path: str
    auths: dict = field(default_factory=dict)
    helpers: dict = field(default_factory=dict)
    store: str | None = None


def default_files(env: Mapping[str, str] | None = None) -> list[str]:
    """The credential files docker and podman read, in the order they read them."""
    env = os.environ if env is None else env
    if env.get("REGISTRY_AUTH_FILE"):
        return [env["REGISTRY_AUTH_FILE"]]
    home = Path(env.get("HOME") or os.path.expanduser("~"))
    files = []
    if env.get("XDG_RUNTIME_DIR"):
        files.append(str(Path(env["XDG_RUNTIME_DIR"]) / "containers" / "auth.json"))
    files.append(str(Path(env.get("XDG_CONFIG_HOME") or home / ".config") / "containers" / "auth.json"))
    files.append(str(Path(env.get("DOCKER_CONFIG") or home / ".docker") / "config.json"))
    return files


def _key(server: str) -> str:
    """An auths key as a host[/path]: scheme, trailing slash and docker's /v1/ or /v2/ dropped,
    Docker Hub's aliases made one."""
    key = re.sub(r"^[A-Za-z][A-Za-z0-9+.-]*://", "", server.strip()).rstrip("/")
    key = re.sub(r"/v[12]$", "", key)
    host, sep, path = key.partition("/")
    host = host.lower()
    if host in DOCKER_HUB_ALIASES:
        host = DOCKER_HUB
    return host + sep + path


class CredentialStore:
    """The credentials of this run's registries, looked up once per registry and repository."""

    def __init__(self, config_file: str | None = None, env: Mapping[str, str] | None = None):
        self.env = os.environ if env is None else env
        self.explicit = config_file
        self._files: list[_AuthFile] | None = None
        self._found: dict[tuple[str, str], Credential | None] = {}
        self._lock = threading.Lock()

    def files(self) -> list[_AuthFile]:
        """The credential files, read on first use; an explicit file must exist."""
        with self._lock:
            if self._files is None:
                if self.explicit is not None:
                    self._files = [self._read(self.explicit, "--registry-config")]
                else:
                    self._files = [f for f in (self._read(p, None) for p in default_files(self.env)) if f]
            return self._files

    def _read(self, path: str, flag: str | None) -> _AuthFile | None:
        label = f"{flag} {shown_path(path)}" if flag else f"registry credentials {shown_path(path)}"
        if flag is None and not os.path.lexists(path):
            return None
        raw = read_input(path, label, "registry-config")
        try:
            data = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError, RecursionError):
            raise InputError(f"{label}: not JSON; expected a docker config.json or containers auth.json") from None
        if not isinstance(data, dict):
            raise InputError(f"{label}: expected a JSON object with `auths`, `credHelpers` or `credsStore`")
        auths, helpers, store = data.get("auths", {}), data.get("credHelpers", {}), data.get("credsStore")
        if not isinstance(auths, dict) or not all(isinstance(v, dict) for v in auths.values()):
            raise InputError(f"{label}: auths: expected a mapping of registry to {{\"auth\": …}}")
        if not isinstance(helpers, dict) or not all(isinstance(v, str) for v in helpers.values()):
            raise InputError(f"{label}: credHelpers: expected a mapping of registry to a helper name")
        if store is not None and not isinstance(store, str):
            raise InputError(f"{label}: credsStore: expected a helper name")
        for name in [*helpers.values(), *([store] if store else [])]:
            if not _HELPER_NAME.match(name):
                raise InputError(f"{label}: credential helper {clean(name, 60)!r}: expected a name such as "
                                 "`ecr-login` (run as docker-credential-NAME), not a path")
        for entry in auths.values():  # registered before anything could print one
            for value in entry.values():
                if isinstance(value, str):
                    redact.register(value)
                    try:
                        redact.register(base64.b64decode(value, validate=True))
                    except (binascii.Error, ValueError):
                        pass
        return _AuthFile(path, {_key(k): v for k, v in auths.items()}, {_key(k): v for k, v in helpers.items()},
                         store or None)

    def lookup(self, registry: str, repository: str) -> Credential | None:
        """The credential for `repository` at `registry` (host[:port]), None: anonymous."""
        key = (registry, repository)
        if key not in self._found:
            self._found[key] = self._lookup(registry, repository)
        return self._found[key]

    def _lookup(self, registry: str, repository: str) -> Credential | None:
        host = _key(registry)
        parts = repository.split("/")
        scoped = [f"{host}/{'/'.join(parts[:n])}" for n in range(len(parts), 0, -1)] + [host]
        for auth_file in self.files():
            helper = auth_file.helpers.get(host) or auth_file.store
            if helper:
                found = self._from_helper(helper, registry, auth_file)
                if found is not None:
                    return found
            for candidate in scoped:
                if candidate in auth_file.auths:
                    return _from_entry(auth_file.auths[candidate], f"{shown_path(auth_file.path)}: auths.{candidate}")
        return None

    def _from_helper(self, name: str, registry: str, auth_file: _AuthFile) -> Credential | None:
        program = f"docker-credential-{name}"
        what = f"{shown_path(auth_file.path)}: credential helper {program}"
        path = shutil.which(program, path=self.env.get("PATH"))
        if path is None:
            raise InputError(f"{what}: not found on PATH (install it, or remove it from the file)")
        server = DOCKER_HUB_SERVER if _key(registry) == DOCKER_HUB else registry
        try:
            proc = subprocess.Popen([path, "get"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, env=dict(self.env))
        except OSError as exc:
            raise HelperFailed(f"{what}: cannot run: {clean((exc.strerror or str(exc)).lower(), 200)}") from None
        try:
            proc.stdin.write(server.encode() + b"\n")
            proc.stdin.close()
        except OSError:
            pass  # it exited without reading; its exit code says why
        out, err = read_process(proc, "exec-output", HELPER_TIMEOUT, what, HelperFailed)
        said = " ".join(clean(line, 300) for line in (out + b"\n" + err).decode("utf-8", "replace").splitlines()
                        if line.strip())
        if proc.returncode != 0:
            if _NOT_FOUND in said.lower():
                return None
            raise HelperFailed(f"{what} failed with exit code {proc.returncode}" + (f": {said[:300]}" if said else ""))
        try:
            answer = json.loads(out.decode("utf-8"))
        except (UnicodeDecodeError, ValueError, RecursionError):
            raise HelperFailed(f"{what}: its answer is not JSON (expected {{\"Username\": …, \"Secret\": …}})") from None
        if not isinstance(answer, dict) or not all(isinstance(answer.get(k, ""), str) for k in ("Username", "Secret")):
            raise HelperFailed(f"{what}: its answer lacks the strings Username and Secret")
        user, secret = answer.get("Username", ""), answer.get("Secret", "")
        redact.register(secret)
        if not secret:
            return None
        if user == "<token>":
            return Credential(what, identity_token=secret)
        return Credential(what, username=user, password=secret)


def _from_entry(entry: dict, where: str) -> Credential | None:
    for name in ("auth", "username", "password", "identitytoken", "registrytoken"):
        if name in entry and not isinstance(entry[name], str):
            raise InputError(f"{where}: {field_name(name)}: expected a string")
    if entry.get("registrytoken"):
        return Credential(where, registry_token=entry["registrytoken"])
    if entry.get("identitytoken"):
        return Credential(where, username=entry.get("username", ""), identity_token=entry["identitytoken"])
    if entry.get("auth"):
        try:
            decoded = base64.b64decode(entry["auth"], validate=True).decode("utf-8")
        except (binascii.Error, ValueError, UnicodeDecodeError):
            raise InputError(f"{where}: auth: expected base64 of user:password") from None
        user, sep, password = decoded.partition(":")
        if not sep:
            raise InputError(f"{where}: auth: expected base64 of user:password (no ':' in it)")
        redact.register(password)
        return Credential(where, username=user, password=password)
    if entry.get("username") or entry.get("password"):
        return Credential(where, username=entry.get("username", ""), password=entry.get("password", ""))
    return None
