"""kubeconfig files read and merged the way kubectl 1.37 (client-go's clientcmd) reads them.

Which files: `--kubeconfig FILE` alone (it must exist); else every file of `$KUBECONFIG` (a
list, `:`-separated; empty entries, repeats and missing files skipped); else ~/.kube/config.

Merging (clientcmd's ClientConfigLoadingRules.Load): the first file to define a cluster, user or
context name wins, whole; `current-context` comes from the first file that sets it. Relative paths
(certificate-authority, client-certificate, client-key, tokenFile, an exec command holding a `/`)
are relative to the file that holds them.

Choosing (DirectClientConfig): `--context` must name a context; else `current-context`. The
context's cluster needs a server. kubectl's checks of the chosen user and cluster are made here
too (one auth method only, both halves of a certificate pair, a complete exec section) and each
failure is one line naming the file. Nothing is run and no file but the kubeconfig is read here:
that is credentials.py's job, after the command has checked its own input.

Every credential met while parsing, in any file and for any user, is registered with
trainerctl.trust.redact before anything could print it.
"""

from __future__ import annotations

import base64
import binascii
import ipaddress
import os
import re
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from trainerctl.errors import InputError
from trainerctl.trust import redact
from trainerctl.trust.bounded_read import read_text, shown_path
from trainerctl.trust.document_bounds import load_yaml
from trainerctl.trust.safe_text import clean

EXEC_API_VERSIONS = ("client.authentication.k8s.io/v1", "client.authentication.k8s.io/v1beta1")
INTERACTIVE_MODES = ("Never", "IfAvailable", "Always")
EXEC_EXTENSION = "client.authentication.k8s.io/exec"  # cluster extension handed to exec plugins
IN_CLUSTER_TOKEN = "/var/run/secrets/kubernetes.io/serviceaccount/token"
IN_CLUSTER_CA = "/var/run/secrets/kubernetes.io/serviceaccount/ca.crt"


@dataclass
class ExecConfig:
    command: str
    args: list[str] = field(default_factory=list)
    env: list[tuple[str, str]] = field(default_factory=list)
    api_version: str = ""
    install_hint: str = ""
    provide_cluster_info: bool = False
    interactive_mode: str = ""


@dataclass
class User:
    token: str = ""
    token_file: str = ""
    client_certificate: str = ""
    client_certificate_data: bytes = b""
    client_key: str = ""
    client_key_data: bytes = b""
    username: str = ""
    password: str = ""
    impersonate: str = ""
    impersonate_uid: str = ""
    impersonate_groups: list[str] = field(default_factory=list)
    impersonate_extra: dict[str, list[str]] = field(default_factory=dict)
    auth_provider: dict | None = None  # {"name": ..., "config": {...}}
    exec: ExecConfig | None = None
    origin: str = ""  # the file it came from


@dataclass
class ClusterEntry:
    server: str = ""
    tls_server_name: str = ""
    insecure_skip_tls_verify: bool = False
    certificate_authority: str = ""
    certificate_authority_data: bytes = b""
    proxy_url: str = ""
    disable_compression: bool = False
    exec_extension: Any = None  # extensions[client.authentication.k8s.io/exec], for exec plugins
    origin: str = ""


@dataclass
class ContextEntry:
    cluster: str = ""
    user: str = ""
    namespace: str = ""
    origin: str = ""


@dataclass
class Kubeconfig:
    clusters: dict[str, ClusterEntry] = field(default_factory=dict)
    users: dict[str, User] = field(default_factory=dict)
    contexts: dict[str, ContextEntry] = field(default_factory=dict)
    current_context: str = ""
    files: list[str] = field(default_factory=list)


@dataclass
class Selected:
    """What one run connects to, and as whom."""

    context: str
    cluster_name: str
    user_name: str
    cluster: ClusterEntry
    user: User
    namespace: str
    where: str  # "kubeconfig FILE: context NAME", the prefix of every later message about it

    @property
    def secure(self) -> bool:
        """kubectl sends credentials (and runs exec plugins) only to an https server."""
        return urlsplit(self.cluster.server).scheme == "https"


# --- which files ------------------------------------------------------------------------------
def kubeconfig_paths(explicit: str | None) -> tuple[list[str], bool]:
    """The files to read, and whether they were named explicitly (then the file must exist)."""
    if explicit is not None:
        if not explicit.strip():
            raise InputError("--kubeconfig '': expected a kubeconfig file")
        return [explicit], True
    env = os.environ.get("KUBECONFIG", "")
    if env:
        seen: list[str] = []
        for item in env.split(os.pathsep):
            if item and item not in seen:
                seen.append(item)
        return seen, False
    return [os.path.join(os.path.expanduser("~"), ".kube", "config")], False


# --- one file ---------------------------------------------------------------------------------
class _Fields:
    """Typed access to one mapping of a kubeconfig, with errors naming the file and the field."""

    def __init__(self, data: Any, where: str, path: str):
        if data is None:
            data = {}
        if not isinstance(data, dict):
            raise InputError(f"{where}: {path}: expected a mapping")
        self.data, self.where, self.path = data, where, path

    def _fail(self, key: str, expected: str):
        raise InputError(f"{self.where}: {self.path}.{key}: expected {expected}")

    def str(self, key: str) -> str:
        value = self.data.get(key)
        if value is None:
            return ""
        if not isinstance(value, str):
            self._fail(key, "a string")
        return value

    def bool(self, key: str) -> bool:
        value = self.data.get(key)
        if value is None:
            return False
        if not isinstance(value, bool):
            self._fail(key, "true or false")
        return value

    def bytes(self, key: str) -> bytes:
        text = self.str(key)
        if not text:
            return b""
        try:  # Go's encoding/json: standard base64, line breaks ignored
            return base64.b64decode("".join(text.split()), validate=True)
        except (binascii.Error, ValueError):
            self._fail(key, "base64 data")

    def strings(self, key: str) -> list[str]:
        value = self.data.get(key)
        if value is None:
            return []
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            self._fail(key, "a list of strings")
        return list(value)

    def mapping(self, key: str) -> "_Fields":
        return _Fields(self.data.get(key), self.where, f"{self.path}.{key}")

    def named(self, key: str) -> list[tuple[str, Any, str]]:
        """A list of {name: ..., <key>: ...} items, as (name, item, path)."""
        value = self.data.get(key)
        if value is None:
            return []
        if not isinstance(value, list):
            self._fail(key, "a list")
        out = []
        for i, item in enumerate(value):
            path = f"{key}[{i}]"
            if not isinstance(item, dict):
                raise InputError(f"{self.where}: {path}: expected a mapping with name")
            name = item.get("name", "")
            if not isinstance(name, str):
                raise InputError(f"{self.where}: {path}.name: expected a string")
            out.append((name, item, path))
        return out


def _register_secrets(user: User, cluster_urls: list[str]) -> None:
    for value in (user.token, user.password, user.client_key_data):
        redact.register(value)
    if user.client_key_data:
        redact.register(base64.b64encode(user.client_key_data).decode())
    if user.auth_provider:
        for key, value in (user.auth_provider.get("config") or {}).items():
            if key in ("id-token", "refresh-token", "client-secret", "access-token") or "secret" in key:
                redact.register(value)
    for url in cluster_urls:
        redact.register_url(url)


def _resolve(base: str, path: str) -> str:
    return path if not path or os.path.isabs(path) else os.path.join(base, path)


def _exec_config(f: _Fields) -> ExecConfig:
    env = []
    raw_env = f.data.get("env")
    if raw_env is not None:
        if not isinstance(raw_env, list):
            f._fail("env", "a list of name/value pairs")
        for i, item in enumerate(raw_env):
            e = _Fields(item, f.where, f"{f.path}.env[{i}]")
            env.append((e.str("name"), e.str("value")))
    api_version = f.str("apiVersion")
    mode = f.str("interactiveMode")
    if not mode and api_version in ("client.authentication.k8s.io/v1beta1", "client.authentication.k8s.io/v1alpha1"):
        mode = "IfAvailable"  # clientcmd's default for the beta API (SetDefaults_ExecConfig)
    hint = clean(f.str("installHint"), 300)
    return ExecConfig(f.str("command"), f.strings("args"), env, api_version, hint,
                      f.bool("provideClusterInfo"), mode)


def parse(text: str, file: str) -> Kubeconfig:
    """One kubeconfig file's text (YAML or JSON). Paths in it are made relative to its folder."""
    where = f"kubeconfig {shown_path(file)}"
    data = load_yaml(text, where, expected="YAML (a kubeconfig)")
    top = _Fields(data, where, "kubeconfig")
    top.path = ""
    base = os.path.abspath(os.path.dirname(file))
    config = Kubeconfig(files=[file])
    config.current_context = top.str("current-context")

    def dup(kind: str, name: str) -> None:
        raise InputError(f"{where}: {kind}: the name {clean(name, 100)!r} appears twice")

    for name, item, path in top.named("clusters"):
        c = _Fields(item.get("cluster"), where, f"{path}.cluster")
        extension = None
        for ext_name, ext, _ in c.named("extensions"):
            if ext_name == EXEC_EXTENSION:
                extension = ext.get("extension")
        entry = ClusterEntry(c.str("server"), c.str("tls-server-name"), c.bool("insecure-skip-tls-verify"),
                             _resolve(base, c.str("certificate-authority")), c.bytes("certificate-authority-data"),
                             c.str("proxy-url"), c.bool("disable-compression"), extension, file)
        if name in config.clusters:
            dup("clusters", name)
        config.clusters[name] = entry
    for name, item, path in top.named("users"):
        u = _Fields(item.get("user"), where, f"{path}.user")
        extra = u.data.get("as-user-extra")
        if extra is not None and (not isinstance(extra, dict) or not all(
                isinstance(k, str) and isinstance(v, list) and all(isinstance(s, str) for s in v)
                for k, v in extra.items())):
            u._fail("as-user-extra", "a mapping of lists of strings")
        provider = None
        if u.data.get("auth-provider") is not None:
            p = u.mapping("auth-provider")
            config_map = p.data.get("config") or {}
            if not isinstance(config_map, dict) or not all(isinstance(v, str) for v in config_map.values()):
                p._fail("config", "a mapping of strings")
            provider = {"name": p.str("name"), "config": dict(config_map)}
        exec_config = _exec_config(u.mapping("exec")) if u.data.get("exec") is not None else None
        if exec_config is not None and os.sep in exec_config.command:
            exec_config.command = _resolve(base, exec_config.command)
        user = User(u.str("token"), _resolve(base, u.str("tokenFile")), _resolve(base, u.str("client-certificate")),
                    u.bytes("client-certificate-data"), _resolve(base, u.str("client-key")),
                    u.bytes("client-key-data"), u.str("username"), u.str("password"), u.str("as"),
                    u.str("as-uid"), u.strings("as-groups"), dict(extra or {}), provider, exec_config, file)
        if name in config.users:
            dup("users", name)
        config.users[name] = user
    for name, item, path in top.named("contexts"):
        c = _Fields(item.get("context"), where, f"{path}.context")
        if name in config.contexts:
            dup("contexts", name)
        config.contexts[name] = ContextEntry(c.str("cluster"), c.str("user"), c.str("namespace"), file)
    for user in config.users.values():
        _register_secrets(user, [])
    for cluster in config.clusters.values():
        _register_secrets(User(), [cluster.server, cluster.proxy_url])
    return config


def read(file: str) -> Kubeconfig:
    where = f"kubeconfig {shown_path(file)}"
    return parse(read_text(file, where, "kubeconfig", expected="YAML (a kubeconfig)"), file)


def merge(configs: list[Kubeconfig]) -> Kubeconfig:
    """clientcmd's merge: the first file to set a name (or current-context) wins."""
    merged = Kubeconfig()
    for config in configs:
        merged.files.extend(config.files)
        for mine, theirs in ((merged.clusters, config.clusters), (merged.users, config.users),
                             (merged.contexts, config.contexts)):
            for name, entry in theirs.items():
                mine.setdefault(name, entry)
        if not merged.current_context:
            merged.current_context = config.current_context
    return merged


def load_files(explicit: str | None) -> Kubeconfig:
    paths, named = kubeconfig_paths(explicit)
    configs = []
    for path in paths:
        try:
            os.lstat(path)
            exists = True
        except FileNotFoundError:
            exists = False
        except (OSError, ValueError):
            exists = True  # too long, a loop, ...: the reader says what is wrong with it
        if not exists and not named:
            continue  # clientcmd skips missing files of the list
        if not exists:
            raise InputError(f"--kubeconfig {shown_path(path)}: file not found")
        configs.append(read(path))
    return merge(configs)


# --- the chosen context -----------------------------------------------------------------------
def select(config: Kubeconfig, context: str | None) -> Selected:
    """The context to use, checked as kubectl checks it before connecting."""
    if context is not None and not context.strip():
        raise InputError("--context '': expected a context name")
    files = ", ".join(shown_path(f) for f in config.files) or "(none)"
    if not config.files:
        raise InputError("no kubeconfig found: pass --kubeconfig, set KUBECONFIG, or create ~/.kube/config")
    name = context or config.current_context
    if not name:
        raise InputError(f"kubeconfig {files}: no current-context is set; pass --context")
    ctx = config.contexts.get(name)
    if ctx is None:
        known = ", ".join(sorted(config.contexts)[:20]) or "none"
        how = "--context" if context else "current-context"
        raise InputError(f"kubeconfig {files}: {how}: unknown context {clean(name, 100)!r} (known: {clean(known, 400)})")
    where = f"kubeconfig {shown_path(ctx.origin)}: context {clean(name, 100)}"
    cluster = config.clusters.get(ctx.cluster)
    if cluster is None:
        raise InputError(f"{where}: cluster {clean(ctx.cluster, 100)!r} does not exist")
    if ctx.user and ctx.user not in config.users:
        raise InputError(f"{where}: user {clean(ctx.user, 100)!r} does not exist")
    user = config.users.get(ctx.user) or User()
    selected = Selected(name, ctx.cluster, ctx.user, cluster, user, ctx.namespace, where)
    check_cluster(selected)
    check_user(selected)
    return selected


def check_server(server: Any, where: str) -> str:
    """The cluster's server must be an http(s) URL with a host; anything else is bad input."""
    parts = urlsplit(server) if isinstance(server, str) else None
    try:
        port_ok = parts is not None and (parts.port is None or parts.port > 0)
    except ValueError:
        port_ok = False
    if parts is None or parts.scheme not in ("https", "http") or not parts.hostname or not port_ok \
            or any(c.isspace() or not c.isprintable() for c in server):
        shown = redact.redact_url(clean(str(server), 200))
        raise InputError(f"{where}: server {shown!r}: expected a URL such as https://host:6443")
    return server


_LABEL = re.compile(r"^[A-Za-z0-9_]([A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?$")


def _host_name(name: str) -> bool:
    """A DNS name (IDNA allowed) or an IP address, as a TLS server name must be."""
    try:
        ipaddress.ip_address(name)
        return True
    except ValueError:
        pass
    try:
        ascii_name = name.encode("idna").decode("ascii").rstrip(".")
    except UnicodeError:
        return False
    return 0 < len(ascii_name) <= 253 and all(_LABEL.match(label) for label in ascii_name.split("."))


def check_cluster(s: Selected) -> None:
    c, where = s.cluster, f"{s.where}: cluster {clean(s.cluster_name, 100)}"
    if not c.server:
        raise InputError(f"{where}: no server defined")
    check_server(c.server, where)
    if c.proxy_url:
        proxy = urlsplit(c.proxy_url)
        if proxy.scheme not in ("http", "https", "socks5") or not proxy.hostname:
            raise InputError(f"{where}: proxy-url {redact.redact_url(clean(c.proxy_url, 200))!r}: "
                             "expected an http://, https:// or socks5:// URL")
    if c.tls_server_name and not _host_name(c.tls_server_name):
        raise InputError(f"{where}: tls-server-name {clean(c.tls_server_name, 100)!r}: expected a host name")
    if c.certificate_authority and c.certificate_authority_data:
        raise InputError(f"{where}: certificate-authority and certificate-authority-data are both set; keep one")
    if c.insecure_skip_tls_verify and (c.certificate_authority or c.certificate_authority_data):
        raise InputError(f"{where}: insecure-skip-tls-verify cannot be combined with a certificate authority "
                         "(kubectl refuses it too)")


def check_user(s: Selected) -> None:
    u, where = s.user, f"{s.where}: user {clean(s.user_name, 100)}"
    methods = [m for m, on in (("token", u.token), ("basic auth", u.username or u.password)) if on]
    if len(methods) > 1:
        raise InputError(f"{where}: more than one authentication method ({', '.join(methods)}); only one is allowed")
    if u.client_certificate or u.client_certificate_data:
        if u.client_certificate and u.client_certificate_data:
            raise InputError(f"{where}: client-certificate and client-certificate-data are both set; keep one")
        if u.client_key and u.client_key_data:
            raise InputError(f"{where}: client-key and client-key-data are both set; keep one")
        if not (u.client_key or u.client_key_data):
            raise InputError(f"{where}: a client certificate needs client-key or client-key-data")
    elif u.client_key or u.client_key_data:
        raise InputError(f"{where}: a client key needs client-certificate or client-certificate-data")
    if u.exec is not None:
        e = u.exec
        if u.auth_provider is not None:
            raise InputError(f"{where}: auth-provider and exec cannot both be set")
        if not e.command:
            raise InputError(f"{where}: exec.command: expected the credential plugin to run")
        if not e.api_version:
            raise InputError(f"{where}: exec.apiVersion: expected {' or '.join(EXEC_API_VERSIONS)}")
        if e.api_version not in EXEC_API_VERSIONS:
            raise InputError(f"{where}: exec.apiVersion {clean(e.api_version, 100)!r}: expected "
                             f"{' or '.join(EXEC_API_VERSIONS)} (v1alpha1 was removed)")
        if any(not name for name, _ in e.env):
            raise InputError(f"{where}: exec.env: every variable needs a name")
        if not e.interactive_mode:
            raise InputError(f"{where}: exec.interactiveMode: must be set for {e.api_version} "
                             f"(one of {', '.join(INTERACTIVE_MODES)})")
        if e.interactive_mode not in INTERACTIVE_MODES:
            raise InputError(f"{where}: exec.interactiveMode {clean(e.interactive_mode, 50)!r}: expected one of "
                             f"{', '.join(INTERACTIVE_MODES)}")
    if u.auth_provider is not None:
        name = u.auth_provider.get("name") or ""
        if name in ("gcp", "azure"):
            raise InputError(f"{where}: the {name} auth-provider was removed from kubectl; use its exec credential "
                             f"plugin ({'gke-gcloud-auth-plugin' if name == 'gcp' else 'kubelogin'}) instead")
        if name != "oidc":
            raise InputError(f"{where}: auth-provider {clean(name, 50)!r} is not known (kubectl 1.37 knows oidc)")
    if (u.impersonate_uid or u.impersonate_groups or u.impersonate_extra) and not u.impersonate:
        raise InputError(f"{where}: as-uid, as-groups or as-user-extra need `as` (the user to impersonate)")


def in_cluster_possible() -> bool:
    return bool(os.environ.get("KUBERNETES_SERVICE_HOST") and os.environ.get("KUBERNETES_SERVICE_PORT")
                and os.path.isfile(IN_CLUSTER_TOKEN))


def in_cluster() -> Selected:
    """The pod's service account, as rest.InClusterConfig builds it."""
    host, port = os.environ["KUBERNETES_SERVICE_HOST"], os.environ["KUBERNETES_SERVICE_PORT"]
    host = f"[{host}]" if ":" in host else host
    cluster = ClusterEntry(server=f"https://{host}:{port}", certificate_authority=IN_CLUSTER_CA,
                           origin="in-cluster")
    user = User(token_file=IN_CLUSTER_TOKEN, origin="in-cluster")
    return Selected("in-cluster", "in-cluster", "in-cluster", cluster, user, "", "in-cluster config")


def load(explicit: str | None, context: str | None) -> Selected:
    """The context a command connects to (kubectl's DeferredLoadingClientConfig)."""
    config = load_files(explicit)
    # Nothing chosen by the user and nothing to choose from: a pod uses its service account.
    if explicit is None and context is None and not config.current_context and not config.contexts \
            and in_cluster_possible():
        return in_cluster()
    return select(config, context)
