"""Benchmark: start-up bound commands (`render`, `kustomize`, `--version`) against kubectl.

Whole processes, run alternately (each round runs every tool once, in turn), median wall time
per tool, and the ratio to kubectl. Pass `--trainerctl PATH` more than once to compare two
builds (e.g. before and after a change) in the same run; absolute times on shared machines are
noise, ratios measured in the same run are the result.

  python scripts/bench_startup.py [--runs 11] [--trainerctl .venv/bin/trainerctl ...]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
ODH = SHARED / "upstream" / "opendatahub-trainer" / "odh-3.5.0"


def cases() -> list[tuple[str, list[str], list[str]]]:
    """(name, trainerctl args, the kubectl command it is compared with)."""
    rhoai = str(ODH / "manifests" / "rhoai")
    return [
        ("kustomize rhoai", ["kustomize", rhoai], ["kustomize", rhoai]),
        ("render --source odh-3.5.0", ["render", "--source", str(ODH)], ["kustomize", rhoai]),
        ("--version", ["--version"], ["version", "--client"]),
        ("bad flag (exit 2)", ["render", "--bogus"], ["kustomize", "--bogus"]),
    ]


def timed(cmd: list[str]) -> float:
    start = time.perf_counter()
    proc = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd="/")
    elapsed = time.perf_counter() - start
    if proc.returncode not in (0, 1, 2):
        raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}): {proc.stderr.decode()[:500]}")
    return elapsed


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=11)
    ap.add_argument("--trainerctl", action="append", help="trainerctl executable (repeatable)")
    args = ap.parse_args()
    if not ODH.is_dir():
        raise SystemExit(f"needs {ODH} (the upstream manifests)")
    tools = [str(Path(t).absolute()) for t in args.trainerctl or [shutil.which("trainerctl") or "trainerctl"]]
    kubectl = shutil.which("kubectl") or "kubectl"
    print(f"{'case':28} " + " ".join(f"{Path(t).parent.parent.name[:14]:>16}" for t in tools) + f" {'kubectl':>9}")
    for name, ours, theirs in cases():
        times: list[list[float]] = [[] for _ in tools]
        ref: list[float] = []
        for _ in range(args.runs):
            for i, tool in enumerate(tools):
                times[i].append(timed([tool, *ours]))
            ref.append(timed([kubectl, *theirs]))
        k = statistics.median(ref)
        cols = " ".join(f"{statistics.median(t):6.3f}s {statistics.median(t) / k:5.2f}x" for t in times)
        print(f"{name:28} {cols} {k:8.3f}s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
