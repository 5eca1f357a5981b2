"""Build the test cluster's binaries (kube-apiserver, etcd, pki) from the Go module proxy.

The binaries go to a cache outside the checkout, keyed by the pinned versions and a hash of the
wrapper module, so a second run (or a second CI run on the same machine) reuses them. Go's own
module and build caches stay at their defaults so rebuilds after a wrapper change are warm too.

Run as a script to build and print the bin dir: ``python tests/testenv/build.py``.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

KUBERNETES_VERSION = "v1.37.2"
ETCD_VERSION = "v3.7.0"
GOMOD_DIR = Path(__file__).resolve().parent / "gomod"
BINARIES = ("kube-apiserver", "etcd", "pki")
# Bump when the go build command line changes in a way the hashed files do not show.
BUILD_RECIPE = "1"

# The wrapper module's `go` line; an older go (>= 1.21) fetches this toolchain from the module proxy.
MIN_GO = (1, 26)
FALLBACK_TOOLCHAIN = "go1.26.8"

GO_MISSING_HINT = (
    "Go is needed to build the test cluster (kube-apiserver + etcd from the Go module proxy): "
    "install Go >= 1.26, or any Go >= 1.21 (e.g. Debian's golang-go where new enough) which then "
    f"fetches {FALLBACK_TOOLCHAIN} from the module proxy; put `go` on PATH and run "
    "`python tests/testenv/build.py` (first build ~10-20 min on 2 cores; cached in ~/.cache/trainerctl-testenv)"
)


class BuildError(RuntimeError):
    """The test cluster binaries could not be built (message says why and how to fix)."""


def cache_root() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "trainerctl-testenv"


def cache_key() -> str:
    digest = hashlib.sha256(BUILD_RECIPE.encode())
    for rel in ("go.mod", "go.sum", "etcd/main.go", "pki/main.go"):
        digest.update(rel.encode())
        digest.update((GOMOD_DIR / rel).read_bytes())
    return f"kube-apiserver-{KUBERNETES_VERSION}_etcd-{ETCD_VERSION}_{digest.hexdigest()[:10]}"


def bin_dir() -> Path:
    """Where the binaries for the current wrapper module live (they may not be built yet)."""
    return cache_root() / cache_key() / "bin"


def _complete(directory: Path) -> bool:
    return all(os.access(directory / name, os.X_OK) for name in BINARIES)


def find_go() -> str | None:
    """$TRAINERCTL_GO if set, else `go` from PATH, else the usual install places (CI may run
    with a leaner PATH)."""
    if "TRAINERCTL_GO" in os.environ:
        explicit = os.environ["TRAINERCTL_GO"]
        return explicit if os.access(explicit, os.X_OK) else None
    found = shutil.which("go")
    if found:
        return found
    for candidate in (Path("/usr/local/go/bin/go"), Path.home() / "go" / "bin" / "go", Path("/usr/lib/go/bin/go")):
        if os.access(candidate, os.X_OK):
            return str(candidate)
    return None


def _go_version(go: str) -> tuple[int, int]:
    out = subprocess.run([go, "env", "GOVERSION"], capture_output=True, text=True).stdout
    match = re.match(r"go(\d+)\.(\d+)", out.strip())
    return (int(match.group(1)), int(match.group(2))) if match else (0, 0)


def _go_env(go: str, log) -> dict[str, str]:
    env = dict(os.environ)
    if _go_version(go) < MIN_GO and "GOTOOLCHAIN" not in os.environ:
        log(f"testenv: {go} is older than go{MIN_GO[0]}.{MIN_GO[1]}; using GOTOOLCHAIN={FALLBACK_TOOLCHAIN}")
        env["GOTOOLCHAIN"] = FALLBACK_TOOLCHAIN
    # Static binaries: no C toolchain needed and nothing to break when libc changes.
    env["CGO_ENABLED"] = "0"
    return env


def _run(cmd: list[str], env: dict[str, str], log) -> None:
    log(f"testenv: {' '.join(cmd)}")
    proc = subprocess.run(cmd, cwd=GOMOD_DIR, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if proc.returncode != 0:
        tail = "\n".join(proc.stdout.strip().splitlines()[-30:])
        raise BuildError(f"`{' '.join(cmd)}` failed (exit {proc.returncode}) in {GOMOD_DIR}:\n{tail}")


def _build(go: str, out: Path, log) -> None:
    env = _go_env(go, log)
    version_flags = " ".join(
        f"-X k8s.io/component-base/version.{key}={value}"
        for key, value in (
            ("gitVersion", KUBERNETES_VERSION),
            ("gitMajor", KUBERNETES_VERSION.lstrip("v").split(".")[0]),
            ("gitMinor", KUBERNETES_VERSION.split(".")[1]),
            ("gitTreeState", "clean"),
        )
    )
    # readonly: the committed go.sum is the whole truth; a build never edits the checkout.
    common = [go, "build", "-mod=readonly", "-trimpath"]
    _run([*common, "-ldflags", f"-s -w {version_flags}", "-o", str(out / "kube-apiserver"),
          "k8s.io/kubernetes/cmd/kube-apiserver"], env, log)
    _run([*common, "-ldflags", "-s -w", "-o", str(out / "etcd"), "./etcd"], env, log)
    _run([*common, "-ldflags", "-s -w", "-o", str(out / "pki"), "./pki"], env, log)


def _prune_stale(keep: Path, log) -> None:
    """Drop binaries built from older wrapper modules so the cache stays one build big."""
    for entry in cache_root().glob("kube-apiserver-*"):
        if entry.is_dir() and entry != keep:
            log(f"testenv: removing stale build {entry}")
            shutil.rmtree(entry, ignore_errors=True)


def ensure_binaries(log=None) -> Path:
    """Return the bin dir holding kube-apiserver, etcd and pki, building them first if missing.

    Raises BuildError with a how-to-fix message when Go is missing or the build fails.
    """
    log = log or (lambda msg: print(msg, file=sys.stderr, flush=True))
    target = bin_dir()
    if _complete(target):
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    # Two pytest sessions (or pytest and CI) may race here; one builds, the other waits.
    with open(target.parent / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if _complete(target):
            return target
        go = find_go()
        if go is None:
            raise BuildError(GO_MISSING_HINT)
        log(f"testenv: building kube-apiserver {KUBERNETES_VERSION} and etcd {ETCD_VERSION} into {target} "
            "(first build takes several minutes)")
        started = time.monotonic()
        staging = Path(tempfile.mkdtemp(prefix="bin.", dir=target.parent))
        staging.chmod(0o755)
        try:
            _build(go, staging, log)
            if target.exists():
                shutil.rmtree(target)
            staging.rename(target)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
        log(f"testenv: built in {time.monotonic() - started:.0f}s")
        _prune_stale(target.parent, log)
    return target


def main() -> int:
    try:
        path = ensure_binaries()
    except BuildError as exc:
        print(f"error: {exc}", file=sys.stderr)
        # Locally a missing Go only means cluster tests skip; in CI it must fail the run.
        return 1 if os.environ.get("CI", "").lower() == "true" else 0
    print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
