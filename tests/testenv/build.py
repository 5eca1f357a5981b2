"""Build the test cluster's binaries from the Go module proxy.

Four cache entries, each keyed by its pinned versions and a hash of what builds it, so a second
run (or a second CI run on the same machine) reuses them:

- the base cluster (kube-apiserver, etcd, pki) that every cluster test needs;
- the e2e parts (kube-controller-manager, kube-scheduler, kwok, and the real Trainer and JobSet
  controllers at every version an e2e test installs), which only `e2e` tests need;
- the Flux controllers (source-controller, kustomize-controller, their CRDs) the GitOps e2e test runs;
- the registries the `images` tests push to and ask (crane, the distribution registry).

Go's own module and build caches stay at their defaults so rebuilds after a change are warm too.

Run as a script to build them all and print the base bin dir: ``python tests/testenv/build.py``
(``--base`` builds only the base cluster, ``--no-flux`` all but the Flux controllers).
"""

from __future__ import annotations

import fcntl
import hashlib
import json
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
# Bump when the go build command line changes in a way the hashed files and flags do not show.
BUILD_RECIPE = "1"

# The e2e parts. kube-controller-manager and kube-scheduler come from the same wrapper module as
# kube-apiserver (shared compile work). The rest are built with `go install pkg@version`, so each
# is exactly what its project released: its own go.mod and go.sum decide every dependency.
KWOK_VERSION = "v0.8.0"
# The real Helm, for the Helm takeover tests (tests/e2e/test_e2e_helm.py): built inside its released
# module like the rest, with the version its Makefile stamps in (else `helm version` says v4.3).
HELM_VERSION = "v4.3.2"
HELM_LDFLAGS = f"-X helm.sh/helm/v4/internal/version.version={HELM_VERSION}"
WRAPPER_E2E_BINARIES = ("kube-controller-manager", "kube-scheduler")
E2E_RECIPE = "1"

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
    digest.update(GC_FLAGS.encode())
    for rel in ("go.mod", "go.sum", "etcd/main.go", "pki/main.go"):
        digest.update(rel.encode())
        digest.update((GOMOD_DIR / rel).read_bytes())
    return f"kube-apiserver-{KUBERNETES_VERSION}_etcd-{ETCD_VERSION}_{digest.hexdigest()[:10]}"


def bin_dir() -> Path:
    """Where the binaries for the current wrapper module live (they may not be built yet)."""
    return cache_root() / cache_key() / "bin"


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
    # The compiler and linker are Go programs whose own garbage collection is a large part of a
    # build: with no collection until a process holds 2 GiB, building kube-apiserver from an empty
    # cache took 538 CPU-s instead of 764 (with GC_FLAGS; its biggest package needs 2.3 GB either
    # way). The user's own settings win.
    if "GOGC" not in os.environ and "GOMEMLIMIT" not in os.environ:
        env["GOGC"], env["GOMEMLIMIT"] = "off", "2GiB"
    return env


def _run(cmd: list[str], env: dict[str, str], log, cwd: Path = GOMOD_DIR) -> None:
    log(f"testenv: {' '.join(cmd)}")
    proc = subprocess.run(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if proc.returncode != 0:
        tail = "\n".join(proc.stdout.strip().splitlines()[-30:])
        raise BuildError(f"`{' '.join(cmd)}` failed (exit {proc.returncode}) in {cwd}:\n{tail}")


def _version_ldflags() -> str:
    return " ".join(
        f"-X k8s.io/component-base/version.{key}={value}"
        for key, value in (
            ("gitVersion", KUBERNETES_VERSION),
            ("gitMajor", KUBERNETES_VERSION.lstrip("v").split(".")[0]),
            ("gitMinor", KUBERNETES_VERSION.split(".")[1]),
            ("gitTreeState", "clean"),
        )
    )


# No DWARF: every binary is linked with -s -w, which drops it anyway, and not writing it saves
# about 7% of the compile.
GC_FLAGS = "all=-dwarf=false"
# Parts that run a few commands or reconciles per test session, where nothing measures their speed,
# are compiled without optimisation and inlining as well: about 20% less CPU again (measured on the
# Trainer v2.3.0 controller from an empty build cache: 149 CPU-s instead of 190).
TEST_ONLY_GCFLAGS = "all=-N -l -dwarf=false"


# readonly: the committed go.sum is the whole truth; a build never edits the checkout.
def _go_build(go: str, gcflags: str = GC_FLAGS) -> list[str]:
    return [go, "build", "-mod=readonly", "-trimpath", f"-gcflags={gcflags}"]


def _build(go: str, out: Path, log) -> None:
    env = _go_env(go, log)
    common = _go_build(go)
    _run([*common, "-ldflags", f"-s -w {_version_ldflags()}", "-o", str(out / "kube-apiserver"),
          "k8s.io/kubernetes/cmd/kube-apiserver"], env, log)
    _run([*common, "-ldflags", "-s -w", "-o", str(out / "etcd"), "./etcd"], env, log)
    _run([*common, "-ldflags", "-s -w", "-o", str(out / "pki"), "./pki"], env, log)


# -- e2e parts ----------------------------------------------------------------------------
def _module_builds() -> list[tuple[str, str, str, str]]:
    """(file name in the e2e bin dir, Go module, main package, version) for the parts built from
    their own released module (its go.mod and go.sum decide every dependency, as in its image)."""
    try:
        from tests.testenv.known_images import KNOWN
    except ImportError:  # run as a script, where PYTHONSAFEPATH (as .ci/run sets) keeps this folder off sys.path
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        from known_images import KNOWN

    out = [("kwok", "sigs.k8s.io/kwok", "sigs.k8s.io/kwok/cmd/kwok", KWOK_VERSION),
           ("helm", "helm.sh/helm/v4", "helm.sh/helm/v4/cmd/helm", HELM_VERSION)]
    for image in KNOWN:
        out.extend((image.binary(v), image.module, image.package, v) for v in image.versions)
    return out


# kwok's own stage definitions (node-fast, heartbeat, pod-fast), copied from its module at build
# time; tests/testenv/e2e.py adds the process-pod exclusion to the pod stages.
KWOK_STAGES = ("node/fast/node-initialize.yaml", "node/heartbeat-with-lease/node-heartbeat-with-lease.yaml",
               "pod/fast/pod-ready.yaml", "pod/fast/pod-complete.yaml", "pod/fast/pod-delete.yaml")
# kwok's Logs API, from its module's crd/bases: the process kubelet names each pod's log files in a
# Logs object, and kwok serves them as the node's /containerLogs (tests/testenv/kubelet.py).
KWOK_CRDS = ("kwok.x-k8s.io_logs.yaml",)


def e2e_binaries() -> tuple[str, ...]:
    return (*WRAPPER_E2E_BINARIES, *(name for name, _, _, _ in _module_builds()), "kwok-stages", "kwok-crds")


# Extra -ldflags per module (its own build stamps them in; the others need none).
MODULE_LDFLAGS = {"helm.sh/helm/v4": HELM_LDFLAGS}
# Helm and the Flux controllers are test-only builds (TEST_ONLY_GCFLAGS). The parts that run all
# session long (API server, controller manager, scheduler, kwok, the Trainer and JobSet
# controllers) stay optimised, but for the versions only one story runs (the Trainer v2.1.0
# controller and its JobSet v0.10.1, for the 2.1 -> 2.2 upgrade story): they share k8s.io v0.34,
# which no other part compiles, so that is a build of its own for a few minutes of running.
MODULE_GCFLAGS = {"helm.sh/helm/v4": TEST_ONLY_GCFLAGS}
VERSION_GCFLAGS = {("github.com/kubeflow/trainer/v2", "v2.1.0"): TEST_ONLY_GCFLAGS,
                   ("sigs.k8s.io/jobset", "v0.10.1"): TEST_ONLY_GCFLAGS}


def _gcflags(module: str, version: str) -> str:
    return VERSION_GCFLAGS.get((module, version)) or MODULE_GCFLAGS.get(module) or GC_FLAGS


def e2e_cache_key() -> str:
    digest = hashlib.sha256(E2E_RECIPE.encode())
    digest.update(f"{GC_FLAGS} {TEST_ONLY_GCFLAGS}".encode())
    digest.update(repr(sorted(MODULE_LDFLAGS.items())).encode())
    digest.update(repr(sorted(MODULE_GCFLAGS.items())).encode())
    digest.update(repr(sorted(VERSION_GCFLAGS.items())).encode())
    for rel in ("go.mod", "go.sum"):
        digest.update((GOMOD_DIR / rel).read_bytes())
    for part in (*_module_builds(), KWOK_STAGES, KWOK_CRDS):
        digest.update(repr(part).encode())
    return f"e2e-{KUBERNETES_VERSION}_{digest.hexdigest()[:10]}"


def e2e_bin_dir() -> Path:
    return cache_root() / e2e_cache_key() / "bin"


def _download(go: str, env: dict[str, str], module: str, version: str) -> Path:
    """The module's source in the module cache (fetched from the proxy if needed)."""
    proc = subprocess.run([go, "mod", "download", "-json", f"{module}@{version}"], env=env, capture_output=True,
                          text=True)
    if proc.returncode != 0:
        raise BuildError(f"`go mod download {module}@{version}` failed: {proc.stdout.strip()} {proc.stderr.strip()}")
    return Path(json.loads(proc.stdout)["Dir"])


def _build_e2e(go: str, out: Path, log) -> None:
    env = _go_env(go, log)
    common = _go_build(go)
    for name in WRAPPER_E2E_BINARIES:
        _run([*common, "-ldflags", f"-s -w {_version_ldflags()}", "-o", str(out / name),
              f"k8s.io/kubernetes/cmd/{name}"], env, log)
    for name, module, package, version in _module_builds():
        # Built inside the module's own directory, so its go.mod is the main module (as in its
        # Dockerfile). Not `go install pkg@version`: that asks the proxy for the version list
        # (deprecation check), which the proxy refuses for some modules.
        source = _download(go, env, module, version)
        relative = package[len(module):].lstrip("/") or "."
        ldflags = " ".join(["-s -w", MODULE_LDFLAGS.get(module, "")]).strip()
        _run([*_go_build(go, _gcflags(module, version)), "-ldflags", ldflags, "-o", str(out / name),
              f"./{relative}" if relative != "." else "."], env, log, cwd=source)
    kustomize = _download(go, env, "sigs.k8s.io/kwok", KWOK_VERSION) / "kustomize"
    (out / "kwok-stages").mkdir()
    for rel in KWOK_STAGES:
        shutil.copyfile(kustomize / "stage" / rel, out / "kwok-stages" / Path(rel).name)
    (out / "kwok-crds").mkdir()
    for name in KWOK_CRDS:
        shutil.copyfile(kustomize / "crd" / "bases" / name, out / "kwok-crds" / name)


# -- Flux (tests/e2e/test_e2e_gitops.py) ------------------------------------------------------
# The Flux controllers that apply `render --gitops flux` folders. v1.7.3 is the newest 1.7 patch
# the module proxy serves for both (kustomize-controller v1.7.0 and v1.7.1 answer 403 there).
# Their own cache entry: they are big builds that only the GitOps e2e test needs, and adding
# them to the e2e entry would rebuild every e2e part.
FLUX_CONTROLLERS = (("source-controller", "github.com/fluxcd/source-controller", "v1.7.3"),
                    ("kustomize-controller", "github.com/fluxcd/kustomize-controller", "v1.7.3"))
FLUX_RECIPE = "2"


def flux_binaries() -> tuple[str, ...]:
    return (*(name for name, _, _ in FLUX_CONTROLLERS), "crds")


def flux_cache_key() -> str:
    digest = hashlib.sha256(FLUX_RECIPE.encode())
    digest.update(TEST_ONLY_GCFLAGS.encode())
    digest.update(repr(FLUX_CONTROLLERS).encode())
    return f"flux-{'_'.join(f'{n}-{v}' for n, _, v in FLUX_CONTROLLERS)}_{digest.hexdigest()[:10]}"


def flux_bin_dir() -> Path:
    return cache_root() / flux_cache_key() / "bin"


def _replaced_api(source: Path, module: str) -> str | None:
    """The version of `module`/api the controller requires, when its go.mod replaces it by ./api."""
    text = (source / "go.mod").read_text()
    if not re.search(rf"^replace {re.escape(module)}/api => \./api\s*$", text, re.M):
        return None
    match = re.search(rf"^\s*{re.escape(module)}/api (v\S+)", text, re.M)
    if not match:
        raise BuildError(f"{module}: go.mod replaces {module}/api by ./api but requires no version of it")
    return match.group(1)


def _build_flux(go: str, out: Path, log) -> None:
    env = _go_env(go, log)
    (out / "crds").mkdir()
    for name, module, version in FLUX_CONTROLLERS:
        source = _download(go, env, module, version)
        # The release builds in its repository, where go.mod's `replace .../api => ./api` finds the
        # api folder of the same tag; the module zip leaves that nested module out. Its own module
        # (tagged api/<version>, the version go.mod requires) goes back in a writable copy.
        work = Path(tempfile.mkdtemp(prefix=f"{name}.", dir=out.parent))
        try:
            tree = work / "src"
            shutil.copytree(source, tree)
            api = _replaced_api(source, module)
            if api:
                shutil.copytree(_download(go, env, f"{module}/api", api), tree / "api")
            for path in (tree, *tree.rglob("*")):
                path.chmod(path.stat().st_mode | 0o200)
            _run([*_go_build(go, TEST_ONLY_GCFLAGS), "-ldflags", "-s -w",
                  "-o", str(out / name), "."], env, log, cwd=tree)
        finally:
            shutil.rmtree(work, ignore_errors=True)
        for crd in sorted((source / "config" / "crd" / "bases").glob("*.yaml")):
            shutil.copyfile(crd, out / "crds" / crd.name)


# -- the registry (tests/registry/) ----------------------------------------------------------
# `trainerctl images` is tested against real registries: `crane registry serve` holds the images
# the tests push (with `crane`), and the distribution registry stands in front of it as a
# pull-through proxy with TLS and htpasswd basic or token auth, as a mirror registry would. Their
# own cache entry: only the registry tests need them. The distribution registry's main and the
# bcrypt htpasswd writer (registry/*/main.go) are built inside a copy of distribution's module,
# so its go.mod and go.sum decide every dependency.
CRANE_MODULE, CRANE_VERSION = "github.com/google/go-containerregistry", "v0.22.1"
DISTRIBUTION_MODULE, DISTRIBUTION_VERSION = "github.com/distribution/distribution/v3", "v3.0.0"
REGISTRY_MAINS = Path(__file__).resolve().parent / "registry"
REGISTRY_PROGRAMS = ("registry", "htpasswd")  # folders of REGISTRY_MAINS, built in distribution's module
REGISTRY_RECIPE = "1"


def registry_binaries() -> tuple[str, ...]:
    return ("crane", *REGISTRY_PROGRAMS)


def registry_cache_key() -> str:
    digest = hashlib.sha256(REGISTRY_RECIPE.encode())
    digest.update(GC_FLAGS.encode())
    for name in REGISTRY_PROGRAMS:
        digest.update(name.encode())
        digest.update((REGISTRY_MAINS / name / "main.go").read_bytes())
    return f"registry-crane-{CRANE_VERSION}_distribution-{DISTRIBUTION_VERSION}_{digest.hexdigest()[:10]}"


def registry_bin_dir() -> Path:
    return cache_root() / registry_cache_key() / "bin"


def _build_registry(go: str, out: Path, log) -> None:
    env = _go_env(go, log)
    crane = _download(go, env, CRANE_MODULE, CRANE_VERSION)
    _run([*_go_build(go), "-ldflags", "-s -w", "-o", str(out / "crane"), "./cmd/crane"],
         env, log, cwd=crane)
    source = _download(go, env, DISTRIBUTION_MODULE, DISTRIBUTION_VERSION)
    work = Path(tempfile.mkdtemp(prefix="distribution.", dir=out.parent))
    try:
        tree = work / "src"
        shutil.copytree(source, tree)
        for path in (tree, *tree.rglob("*")):
            path.chmod(path.stat().st_mode | 0o200)
        for name in REGISTRY_PROGRAMS:
            (tree / "cmd" / f"trainerctl-{name}").mkdir()
            shutil.copyfile(REGISTRY_MAINS / name / "main.go", tree / "cmd" / f"trainerctl-{name}" / "main.go")
            _run([*_go_build(go), "-ldflags", "-s -w", "-o", str(out / name),
                  f"./cmd/trainerctl-{name}"], env, log, cwd=tree)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def ensure_registry_binaries(log=None) -> Path:
    """Return the bin dir holding crane, the distribution registry and htpasswd, building them
    first if missing. Raises BuildError like ensure_binaries."""
    return _ensure(registry_bin_dir(), registry_binaries(), _build_registry,
                   f"crane {CRANE_VERSION} and the distribution registry {DISTRIBUTION_VERSION}", "registry-*",
                   log or _stderr_log)


# -- the cache ----------------------------------------------------------------------------
# Another checkout (a branch with a different go.mod) may be using an older entry right now, and
# a cluster starts its binaries per test: only entries nobody used for a day are removed.
STALE_AFTER_SECONDS = 24 * 3600


def _prune_stale(keep: Path, pattern: str, log) -> None:
    """Drop binaries built from other inputs once unused, so the cache stays about one build big."""
    for entry in cache_root().glob(pattern):
        if entry.is_dir() and entry != keep and time.time() - entry.stat().st_mtime > STALE_AFTER_SECONDS:
            log(f"testenv: removing stale build {entry}")
            shutil.rmtree(entry, ignore_errors=True)


def _ensure(target: Path, names: tuple[str, ...], build, what: str, prune_pattern: str, log) -> Path:
    def complete() -> bool:
        return all(os.access(target / name, os.X_OK) for name in names)

    if complete():
        os.utime(target.parent)  # in use: not stale for another day
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    # Two pytest sessions (or pytest and CI) may race here; one builds, the other waits.
    with open(target.parent / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if complete():
            return target
        go = find_go()
        if go is None:
            raise BuildError(GO_MISSING_HINT)
        log(f"testenv: building {what} into {target} (first build takes several minutes)")
        started = time.monotonic()
        staging = Path(tempfile.mkdtemp(prefix="bin.", dir=target.parent))
        staging.chmod(0o755)
        try:
            build(go, staging, log)
            if target.exists():
                shutil.rmtree(target)
            staging.rename(target)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
        log(f"testenv: built in {time.monotonic() - started:.0f}s")
        _prune_stale(target.parent, prune_pattern, log)
    return target


def _stderr_log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def ensure_binaries(log=None) -> Path:
    """Return the bin dir holding kube-apiserver, etcd and pki, building them first if missing.

    Raises BuildError with a how-to-fix message when Go is missing or the build fails.
    """
    return _ensure(bin_dir(), BINARIES, _build, f"kube-apiserver {KUBERNETES_VERSION} and etcd {ETCD_VERSION}",
                   "kube-apiserver-*", log or _stderr_log)


def ensure_e2e_binaries(log=None) -> Path:
    """Return the bin dir of the e2e parts (controller manager, scheduler, kwok, the real
    controllers), building them first if missing. Raises BuildError like ensure_binaries."""
    names = e2e_binaries()
    what = ", ".join(names)
    return _ensure(e2e_bin_dir(), names, _build_e2e, what, "e2e-*", log or _stderr_log)


def ensure_flux_binaries(log=None) -> Path:
    """Return the bin dir holding source-controller, kustomize-controller and their CRDs (crds/),
    building them first if missing. Raises BuildError like ensure_binaries."""
    names = flux_binaries()
    return _ensure(flux_bin_dir(), names, _build_flux, ", ".join(n for n, _, _ in FLUX_CONTROLLERS), "flux-*",
                   log or _stderr_log)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    try:
        path = ensure_binaries()
        if "--base" not in argv:
            ensure_e2e_binaries()
            ensure_registry_binaries()
            if "--no-flux" not in argv:
                ensure_flux_binaries()
    except BuildError as exc:
        print(f"error: {exc}", file=sys.stderr)
        # Locally a missing Go only means cluster tests skip; in CI it must fail the run.
        return 1 if os.environ.get("CI", "").lower() == "true" else 0
    print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
