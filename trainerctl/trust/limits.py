"""Every limit on what trainerctl takes from outside, in one table (LIMITS): bytes, seconds and
counts, each with the environment variable that raises it (e.g. `TRAINERCTL_MAX_FILE=1Gi`,
docs/trust.md), and the one wording of a limit passed."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

from trainerctl.errors import InputError
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


_SIZE = re.compile(r"^\s*(\d+)\s*(|k|Ki|M|Mi|G|Gi|K|KB|MB|GB)\s*$")
_UNITS = {"": 1, "k": 1000, "K": 1000, "KB": 1000, "Ki": _KI, "M": 1000 ** 2, "MB": 1000 ** 2, "Mi": _MI,
          "G": 1000 ** 3, "GB": 1000 ** 3, "Gi": _GI}


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
