"""Trust for one registry, as container runtimes set it up.

The system's roots, plus `--registry-ca FILE` (a PEM bundle, for every registry), plus the
registry's own folder in a certs.d directory, where podman, CRI-O and docker look (first found
wins, as for containers/image):

  ~/.config/containers/certs.d/HOST[:PORT]/   (rootless podman)
  /etc/containers/certs.d/HOST[:PORT]/        (podman, CRI-O, OpenShift nodes)
  /etc/docker/certs.d/HOST[:PORT]/            (docker)

In that folder `*.crt` files are CAs, and a `NAME.cert` with a `NAME.key` is a client certificate.
"""

from __future__ import annotations

import os
import ssl
from pathlib import Path

from trainerctl.errors import InputError
from trainerctl.trust.bounded_read import read_input, shown_path


def certs_dirs(env=None) -> list[Path]:
    env = os.environ if env is None else env
    home = Path(env.get("HOME") or os.path.expanduser("~"))
    return [Path(env.get("XDG_CONFIG_HOME") or home / ".config") / "containers" / "certs.d",
            Path("/etc/containers/certs.d"), Path("/etc/docker/certs.d")]


def host_dir(registry: str, dirs: list[Path]) -> Path | None:
    for base in dirs:
        candidate = base / registry
        if candidate.is_dir():
            return candidate
    return None


def _never_prompt() -> bytes:
    raise InputError("an encrypted client key needs a passphrase, which trainerctl never asks for")


def _add_ca(context: ssl.SSLContext, path: str, label: str) -> None:
    pem = read_input(path, label, "certificate")
    try:
        context.load_verify_locations(cadata=pem.decode("ascii"))
    except (ssl.SSLError, ValueError, UnicodeDecodeError):
        raise InputError(f"{label}: expected PEM certificates (-----BEGIN CERTIFICATE-----)") from None


def tls_context(registry: str, ca_file: str | None, dirs: list[Path]) -> ssl.SSLContext:
    """The TLS settings for `registry` (host[:port])."""
    context = ssl.create_default_context()
    if ca_file:
        _add_ca(context, ca_file, f"--registry-ca {shown_path(ca_file)}")
    folder = host_dir(registry, dirs)
    if folder is not None:
        for crt in sorted(folder.glob("*.crt")):
            _add_ca(context, str(crt), f"certs.d {shown_path(str(crt))}")
        for cert in sorted(folder.glob("*.cert")):
            key = cert.with_suffix(".key")
            label = f"certs.d {shown_path(str(cert))}"
            if not key.is_file():
                raise InputError(f"{label}: a client certificate needs its key beside it ({key.name})")
            read_input(str(cert), label, "certificate")  # a FIFO or a huge file is refused first
            read_input(str(key), f"certs.d {shown_path(str(key))}", "certificate")
            try:
                context.load_cert_chain(str(cert), str(key), password=_never_prompt)
            except (ssl.SSLError, ValueError):
                raise InputError(f"{label}: not a PEM certificate matching {key.name} (an unencrypted key)") from None
    return context
