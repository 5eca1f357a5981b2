"""Reading input from outside: only what is a file, never more than its limit, one line if not.
And every limit on what trainerctl takes from outside, in one table (LIMITS): bytes and seconds.

Every reader of a file a user or a source names (kubeconfig, token file, CA and client
certificates, lock, config, `-f`, stdin, params.env) goes through `read_input`, and the HTTP
client bounds API responses with `limit_for("api-response")`. So /dev/zero, a FIFO, a socket, a
symlink loop or a 5,000-character path each end in one line and exit 2, never in a hang, an
out-of-memory kill or a traceback.

What counts as a file: a regular file. Streams are read where a user hands one over on purpose:
`-` (stdin) where a flag allows it, and `/dev/fd/N`, `/dev/stdin`, `/proc/self/fd/N` (the paths a
shell's process substitution `<(cmd)` gives), as kubectl reads them too. A named FIFO, a device
or a socket anywhere else is refused (kubectl would block on a FIFO, or read /dev/zero forever).

Limits are generous for real inputs and can be raised per input with an environment variable,
e.g. `TRAINERCTL_MAX_FILE=1Gi` (docs/trust.md).

What an API server sends is bounded here too: each answer's bytes and each request's seconds, a
container log's bytes and seconds, each support-bundle part's seconds, and what server data is
decoded into (`b64decode`, `gunzip`, `load_json`: base64, gzip and JSON payloads inside objects,
e.g. a Helm release record), so a 4 MB gzip never expands towards 4 GiB.
"""

from __future__ import annotations

import base64
import binascii
import errno
import json
import os
import re
import selectors
import signal
import stat
import subprocess
import sys
import time
import zlib
from dataclasses import dataclass
from typing import Any

from trainerctl.errors import InputError, TrainerctlError
from trainerctl.trust.safe_text import clean

_KI, _MI, _GI = 1024, 1024 ** 2, 1024 ** 3


@dataclass(frozen=True)
class Limit:
    """How many bytes one kind of input may have (or how many seconds one exchange may take), and
    the variable that raises it."""

    name: str  # the key callers use
    env: str  # raises it
    default: int  # bytes, or seconds for a time limit, or a count
    what: str  # for the docs and messages
    unit: str = "bytes"  # or "seconds", or "objects"


LIMITS = {limit.name: limit for limit in (
    Limit("kubeconfig", "TRAINERCTL_MAX_KUBECONFIG", 16 * _MI, "each kubeconfig file"),
    Limit("token-file", "TRAINERCTL_MAX_TOKEN_FILE", 1 * _MI, "a kubeconfig user's tokenFile"),
    Limit("certificate", "TRAINERCTL_MAX_CERTIFICATE", 4 * _MI, "a CA, client certificate or client key file"),
    Limit("exec-output", "TRAINERCTL_MAX_EXEC_OUTPUT", 4 * _MI, "an exec credential plugin's output"),
    Limit("lock", "TRAINERCTL_MAX_LOCK", 1 * _MI, "trainerctl.lock"),
    Limit("config", "TRAINERCTL_MAX_CONFIG", 4 * _MI, "trainerctl.yaml (--config)"),
    Limit("file", "TRAINERCTL_MAX_FILE", 256 * _MI,
          "-f FILE, stdin with -f -, or a file or remote resource a kustomize build reads"),
    Limit("params-env", "TRAINERCTL_MAX_PARAMS_ENV", 4 * _MI, "a params.env file of the source"),
    Limit("source-file", "TRAINERCTL_MAX_SOURCE_FILE", 64 * _MI, "another file of the source read outside kustomize"),
    Limit("api-response", "TRAINERCTL_MAX_API_RESPONSE", 512 * _MI, "one API server response body"),
    Limit("cache-file", "TRAINERCTL_MAX_CACHE_FILE", 64 * _MI, "a file of trainerctl's own cache"),
    Limit("registry-response", "TRAINERCTL_MAX_REGISTRY_RESPONSE", 4 * _MI,
          "one container registry response body (a manifest, a token)"),
    Limit("registry-config", "TRAINERCTL_MAX_REGISTRY_CONFIG", 4 * _MI,
          "a registry credentials file (docker config.json, containers auth.json)"),
    Limit("images-file", "TRAINERCTL_MAX_IMAGES_FILE", 4 * _MI, "an image overrides file (--images-from)"),
    # What the server sends, beyond one answer's bytes.
    Limit("decoded", "TRAINERCTL_MAX_DECODED", 64 * _MI,
          "a payload inside a server object once decoded and decompressed (a Helm release record)"),
    Limit("log", "TRAINERCTL_MAX_LOG", 4 * _MI, "one container log read (diagnosis, support bundle)"),
    Limit("upgrade-objects", "TRAINERCTL_MAX_UPGRADE_OBJECTS", 100_000,
          "custom resources upgrade-check reads of each CRD version it checks", "objects"),
    Limit("request-time", "TRAINERCTL_REQUEST_TIMEOUT", 60, "one API request, from connecting to the last byte",
          "seconds"),
    Limit("log-time", "TRAINERCTL_LOG_TIMEOUT", 30, "one container log read", "seconds"),
    Limit("remote-time", "TRAINERCTL_REMOTE_TIMEOUT", 60,
          "one remote kustomize resource (an https file, redirects and retries included, or a git base's fetch)",
          "seconds"),
    Limit("bundle-part-time", "TRAINERCTL_BUNDLE_PART_TIMEOUT", 60,
          "each part of a support bundle (an object, the events, one container's log, ...)", "seconds"),
)}

# Nesting deeper than this in a document from outside is refused before anything walks it (the
# walk would recurse). Real Kubernetes objects, CRD schemas included, stay far below it.
MAX_DEPTH = 200

_SIZE = re.compile(r"^\s*(\d+)\s*(|k|Ki|M|Mi|G|Gi|K|KB|MB|GB)\s*$")
_UNITS = {"": 1, "k": 1000, "K": 1000, "KB": 1000, "Ki": _KI, "M": 1000 ** 2, "MB": 1000 ** 2, "Mi": _MI,
          "G": 1000 ** 3, "GB": 1000 ** 3, "Gi": _GI}
_STREAM_PATH = re.compile(r"^/(dev/fd/\d+|dev/stdin|proc/self/fd/\d+)$")


def parse_size(text: str, where: str) -> int:
    match = _SIZE.match(text)
    if not match:
        raise InputError(f"{where}: {text!r}: expected a size in bytes, or with Ki, Mi or Gi (e.g. 64Mi)")
    return int(match[1]) * _UNITS[match[2]]


_SECONDS = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(s|m|)\s*$")


def parse_seconds(text: str, where: str) -> float:
    match = _SECONDS.match(text)
    value = float(match[1]) * (60 if match[2] == "m" else 1) if match else 0.0
    if not 0 < value < 366 * 86400:
        raise InputError(f"{where}: {clean(text, 40)!r}: expected a number of seconds (e.g. 30, 30s or 2m)")
    return value


def limit_for(name: str) -> int:
    """The limit in bytes of one kind of input, raised by its environment variable if set."""
    limit = LIMITS[name]
    value = os.environ.get(limit.env)
    if value is None or not value.strip():
        return limit.default
    return parse_size(value, limit.env)


def seconds_for(name: str) -> float:
    """A time limit in seconds, changed by its environment variable if set."""
    limit = LIMITS[name]
    value = os.environ.get(limit.env)
    if value is None or not value.strip():
        return float(limit.default)
    return parse_seconds(value, limit.env)


def too_large(name: str, max_bytes: int) -> str:
    """The words for input beyond a byte limit: the limit, what it is for, and how to raise it."""
    return (f"larger than the {human_size(max_bytes)} limit for {LIMITS[name].what} "
            f"(raise it with {LIMITS[name].env}=SIZE)")


def human_size(n: int) -> str:
    for unit, size in (("Gi", _GI), ("Mi", _MI), ("Ki", _KI)):
        if n >= size and n % size == 0:
            return f"{n // size} {unit}B"
    return f"{n} bytes"


def shown_path(path: str) -> str:
    """A path as messages show it: control characters escaped, and a very long path shortened
    (the message stays one readable line)."""
    text = "".join(c if c.isprintable() else f"\\x{ord(c):02x}" if ord(c) < 256 else f"\\u{ord(c):04x}"
                   for c in str(path))
    return text if len(text) <= 160 else f"{text[:80]}…{text[-60:]} ({len(text)} characters)"


def _kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISLNK(mode):
        return "a symlink"
    return "not a regular file"


def os_problem(exc: OSError) -> str:
    """What an OSError on an input path means, in words (no errno, no Python names)."""
    return {
        errno.ENOENT: "file not found",
        errno.EISDIR: "is a directory, not a file",
        errno.ELOOP: "too many levels of symbolic links (a symlink loop?)",
        errno.ENAMETOOLONG: "the path is too long",
        errno.EACCES: "permission denied",
        errno.EPERM: "permission denied",
        errno.ENOTDIR: "a part of the path is not a directory",
        errno.ENXIO: "not a regular file (a socket or a device without a reader)",
    }.get(exc.errno, (exc.strerror or str(exc)).lower())


def read_input(path: str, label: str, limit: str, *, stdin: bool = False, follow: bool = True) -> bytes:
    """The bytes of the file at `path`, for the message prefix `label` (e.g. "--config x.yaml").

    `stdin`: "-" means standard input. `follow=False`: a symlink at `path` is refused, not read
    through (a file of trainerctl's cache: trainerctl.cachedir). Raises InputError (one line,
    exit 2) for anything that is not a readable file of at most the limit.
    """
    max_bytes = limit_for(limit)
    if stdin and path == "-":
        if sys.stdin is None:
            raise InputError(f"{label}: standard input is closed")
        if sys.stdin.isatty():
            raise InputError(f"{label}: standard input is a terminal; pipe the input in, or name a file")
        return _read_fd(sys.stdin.fileno(), label, limit, max_bytes)
    if not isinstance(path, str) or not path or "\0" in path:
        raise InputError(f"{label}: expected a file path")
    stream_ok = follow and bool(_STREAM_PATH.match(path))
    try:
        before = os.stat(path) if follow else os.lstat(path)
        if not stat.S_ISREG(before.st_mode) and not (stream_ok and (stat.S_ISFIFO(before.st_mode)
                                                                     or stat.S_ISSOCK(before.st_mode)
                                                                     or stat.S_ISCHR(before.st_mode))):
            raise InputError(f"{label}: {_kind(before.st_mode)}; expected a regular file")
        fd = os.open(path, os.O_RDONLY | os.O_NOCTTY | os.O_CLOEXEC | (0 if stream_ok else os.O_NONBLOCK)
                     | (0 if follow else os.O_NOFOLLOW))
    except OSError as exc:
        raise InputError(f"{label}: cannot read: {os_problem(exc)}") from None
    try:
        mode = os.fstat(fd).st_mode
        if not stream_ok and not stat.S_ISREG(mode):  # swapped between stat and open
            raise InputError(f"{label}: {_kind(mode)}; expected a regular file")
        if stream_ok and os.isatty(fd):
            raise InputError(f"{label}: a terminal; pipe the input in, or name a file")
        return _read_fd(fd, label, limit, max_bytes)
    finally:
        os.close(fd)


def _read_fd(fd: int, label: str, limit: str, max_bytes: int) -> bytes:
    data = bytearray()
    try:
        while True:
            chunk = os.read(fd, min(1 << 20, max_bytes + 1 - len(data)))
            if not chunk:
                return bytes(data)
            data += chunk
            if len(data) > max_bytes:
                raise InputError(f"{label}: {too_large(limit, max_bytes)}")
    except BlockingIOError:
        raise InputError(f"{label}: not a regular file (nothing to read without waiting)") from None
    except OSError as exc:
        raise InputError(f"{label}: cannot read: {os_problem(exc)}") from None


def read_text(path: str, label: str, limit: str, *, stdin: bool = False, expected: str = "text") -> str:
    """read_input decoded as UTF-8 (a byte-order mark is dropped, as YAML allows)."""
    data = read_input(path, label, limit, stdin=stdin)
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(f"{label}: not UTF-8 text (byte {exc.start}); expected {expected}") from None


def too_deep(value: Any, limit: int = MAX_DEPTH) -> bool:
    """Whether a parsed document nests deeper than `limit`. Walked level by level, without
    recursion and without a record per node: every install walks megabytes of CRD schema."""
    containers = (dict, list)
    level = [value] if isinstance(value, containers) else []
    depth = 0
    while level:
        depth += 1
        if depth > limit:
            return True
        level = [child for item in level for child in (item.values() if isinstance(item, dict) else item)
                 if isinstance(child, containers)]
    return False


def check_depth(value: Any, label: str) -> Any:
    if too_deep(value):
        raise InputError(f"{label}: nested deeper than {MAX_DEPTH} levels")
    return value


def load_yaml(text: str, label: str, *, expected: str = "YAML") -> Any:
    """One YAML document of outside input: safe types only, bounded nesting and alias expansion
    (the same budget as server data: a 1 KB alias bomb in a kubeconfig or trainerctl.yaml is
    refused before anything is built), one-line errors that never quote the input (a wrong file,
    say /etc/shadow, must not be echoed)."""
    import yaml

    try:
        if not alias_expansion_ok(text):
            raise InputError(f"{label}: not valid {expected}: its aliases expand to more than "
                             f"{ALIAS_SLACK:,} nodes (an alias bomb?)")
        data = yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except yaml.YAMLError as exc:
        raise InputError(f"{label}: not valid {expected}: {yaml_problem(exc)}") from None
    except RecursionError:
        raise InputError(f"{label}: nested deeper than {MAX_DEPTH} levels") from None
    return check_depth(data, label)


def yaml_problem(exc: Exception) -> str:
    """A YAML error as one line with its position, without the snippet of input PyYAML adds.
    Every form: a parser's or scanner's (a problem at a mark), or the reader's (a character the
    stream may not hold, at a position), whose own text runs over several lines."""
    problem = getattr(exc, "problem", None) or getattr(exc, "context", None) or str(exc).split("\n", 1)[0] \
        or "invalid YAML"
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    position = getattr(exc, "position", None)
    where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark is not None \
        else f" (character {position + 1})" if isinstance(position, int) else ""
    return clean(str(problem), 200) + where


def kill_process_tree(proc: subprocess.Popen, group: bool) -> None:
    """Kill a program we started and, when it was started as the leader of its own process group
    (`group`: Popen(process_group=0)), everything left in that group, even once the leader has
    exited: what it started must not outlive us either. Safe from a signal handler."""
    if group:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
            return
        except (ProcessLookupError, PermissionError):
            pass
    try:
        proc.kill()
    except OSError:
        pass


def read_process(proc: subprocess.Popen, limit: str, timeout: float, what: str,
                 error: type[TrainerctlError] = TrainerctlError, group: bool = False) -> tuple[bytes, bytes]:
    """stdout (at most the `limit` input's bytes) and stderr (its first 64 KiB) of a program that
    hands over a credential (an exec plugin, a docker credential helper), within `timeout`;
    killed otherwise, with its process group when it leads one (`group`). `what` names it in the
    one line `error` carries."""
    out, err = bytearray(), bytearray()
    most = limit_for(limit)
    deadline = time.monotonic() + timeout
    sel = selectors.DefaultSelector()
    try:
        for stream in (proc.stdout, proc.stderr):
            if stream is not None:
                sel.register(stream, selectors.EVENT_READ)
        while sel.get_map():
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise error(f"{what} did not finish within {timeout:.0f}s")
            for key, _ in sel.select(min(remaining, 1.0)):
                chunk = os.read(key.fileobj.fileno(), 65536)
                if not chunk:
                    sel.unregister(key.fileobj)
                    continue
                if key.fileobj is proc.stdout:
                    out += chunk
                    if len(out) > most:
                        raise error(f"{what} wrote more than {human_size(most)} "
                                    f"(raise it with {LIMITS[limit].env}=SIZE)")
                elif len(err) < 65536:
                    err += chunk
        proc.wait(max(0.1, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        raise error(f"{what} did not finish within {timeout:.0f}s") from None
    finally:
        sel.close()
        if proc.poll() is None or (group and sys.exc_info()[0] is not None):
            kill_process_tree(proc, group)  # on a failure, also what it left running in its group
            proc.wait()
        for stream in (proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()
    return bytes(out), bytes(err)
# -- payloads inside server data ----------------------------------------------------------------
class Undecodable(ValueError):
    """A payload inside server data that does not decode within its limits; the message says why
    in words (the caller names the object and field)."""


def b64decode(text: str | bytes, limit: str = "decoded") -> bytes:
    """Strict base64 (no stray characters), refused before decoding when the result would pass
    the limit."""
    max_bytes = limit_for(limit)
    if len(text) // 4 * 3 > max_bytes:
        raise Undecodable(too_large(limit, max_bytes))
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        raise Undecodable("not base64") from None


def gunzip(data: bytes, limit: str = "decoded") -> bytes:
    """gzip data (one or more members) decompressed a bounded piece at a time: a small bomb is
    refused once its output passes the limit, never expanded whole."""
    max_bytes = limit_for(limit)
    out = bytearray()
    rest = data
    while rest:
        inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
        try:
            chunk = inflater.decompress(rest, max_bytes + 1 - len(out))
            out += chunk
            while inflater.unconsumed_tail and len(out) <= max_bytes:
                out += inflater.decompress(inflater.unconsumed_tail, max_bytes + 1 - len(out))
        except zlib.error:
            raise Undecodable("bad gzip data") from None
        if len(out) > max_bytes:
            raise Undecodable(too_large(limit, max_bytes))
        if not inflater.eof:
            raise Undecodable("gzip data cut short")
        rest = inflater.unused_data
    return bytes(out)


def load_json(data: str | bytes, limit: str = "decoded") -> Any:
    """JSON from server data: within the byte limit and MAX_DEPTH levels of nesting."""
    max_bytes = limit_for(limit)
    if len(data) > max_bytes:
        raise Undecodable(too_large(limit, max_bytes))
    try:
        value = json.loads(data)
    except RecursionError:
        raise Undecodable(f"nested deeper than {MAX_DEPTH} levels") from None
    except json.JSONDecodeError as exc:
        raise Undecodable(f"not JSON ({clean(exc.msg, 80)}, line {exc.lineno} column {exc.colno})") from None
    except UnicodeDecodeError:
        raise Undecodable("not UTF-8 text") from None
    except ValueError:  # Python refuses integers of more than 4,300 digits
        raise Undecodable("not JSON trainerctl reads (a number of thousands of digits)") from None
    if too_deep(value):
        raise Undecodable(f"nested deeper than {MAX_DEPTH} levels")
    return value


# Aliases may repeat what an anchor holds; past this many nodes beyond the text's own, a document
# is an alias bomb (a kilobyte expanding to billions of nodes), refused before it is built.
ALIAS_SLACK = 100_000


def alias_expansion_ok(text: str, slack: int = ALIAS_SLACK) -> bool:
    """Whether a YAML stream's aliases add at most `slack` nodes to those it spells out: counted
    on the parser's events, so a bomb is found without building (or walking) what it expands to."""
    import yaml

    if "*" not in text:  # no alias without one: nothing to count (most inputs)
        return True
    sizes: dict[str, int] = {}
    stack: list[list] = []  # [anchor, nodes] per open collection
    added = 0
    for event in yaml.parse(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)):
        if isinstance(event, yaml.CollectionStartEvent):
            stack.append([event.anchor, 1])
            continue
        if isinstance(event, yaml.CollectionEndEvent):
            anchor, nodes = stack.pop()
        elif isinstance(event, yaml.ScalarEvent):
            anchor, nodes = event.anchor, 1
        elif isinstance(event, yaml.AliasEvent):
            anchor, nodes = None, sizes.get(event.anchor, 1)
            added += nodes
            if added > slack:
                return False
        else:
            continue
        if anchor is not None:
            sizes[anchor] = nodes
        if stack:
            stack[-1][1] += nodes
    return True


def load_yaml_stream(text: str, limit: str = "decoded") -> list:
    """Every document of a YAML stream inside server data (a Helm release's manifest): safe types,
    within the byte limit, MAX_DEPTH levels and the alias budget; Undecodable says why not."""
    import yaml

    max_bytes = limit_for(limit)
    if len(text) > max_bytes:
        raise Undecodable(too_large(limit, max_bytes))
    try:
        if not alias_expansion_ok(text):
            raise Undecodable(f"its aliases expand to more than {ALIAS_SLACK:,} nodes (an alias bomb?)")
        docs = list(yaml.load_all(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)))
    except yaml.YAMLError as exc:
        raise Undecodable(f"not YAML: {yaml_problem(exc)}") from None
    except RecursionError:
        raise Undecodable(f"nested deeper than {MAX_DEPTH} levels") from None
    if any(too_deep(doc) for doc in docs):
        raise Undecodable(f"nested deeper than {MAX_DEPTH} levels")
    return docs
