#!/usr/bin/env python3
"""Benchmark `trainerctl install -f` against `kubectl apply --server-side -f` on the same objects.

Same rendered objects (opendatahub-trainer odh-3.5.0 `rhoai`, the ownership label, no
ImageStreams), same real kube-apiserver (tests/testenv), the fake controller from the tests
answering webhooks. Both tools run as processes on the same YAML file.

  fresh:  a new API server per run. kubectl needs two applies (CRDs, then the rest, since it
          cannot map kinds whose CRD is not established yet); `kubectl wait` between them is not
          timed. trainerctl's own waits (CRD Established, controller ready) are subtracted using
          its -o json stage timings.
  no-op:  the same apply again on the installed cluster (kubectl: one apply of everything).

Prints medians and the ratios trainerctl/kubectl. Targets: fresh <= 1.0x, no-op <= 0.5x.

    python scripts/bench_install.py [--runs 3] [--noop-runs 5]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))


def _yaml_dump(objects: list[dict]) -> str:
    import yaml

    return yaml.safe_dump_all(objects, sort_keys=False)


def _timed(cmd: list[str], env: dict | None = None) -> tuple[float, str]:
    start = time.perf_counter()
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, env=env)
    return time.perf_counter() - start, out.stdout


def _trainerctl(kubeconfig: str, path: Path) -> tuple[float, float]:
    """(process wall time, apply phase), both minus the time spent waiting (per stage in -o json).

    The apply phase starts with the objects in memory, as in `trainerctl install` after its
    render; the process time adds Python start-up, importing the kubernetes client and parsing
    the YAML file, which kubectl's time includes too."""
    cmd = [sys.executable, "-m", "trainerctl", "install", "-f", str(path), "--kubeconfig", kubeconfig,
           "-n", "opendatahub", "-o", "json"]
    env = dict(os.environ, CI="true")  # plain output: no terminal rendering in the timing
    seconds, out = _timed(cmd, env)
    report = json.loads(out)
    assert not report["summary"].get("failed"), report["summary"]
    waited = sum(s["waitedSeconds"] for s in report["stages"])
    return seconds - waited, report["seconds"] - waited


def _kubectl(kubeconfig: str, path: Path) -> float:
    seconds, _ = _timed(["kubectl", "--kubeconfig", kubeconfig, "apply", "--server-side", "-f", str(path)])
    return seconds


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="fresh installs per tool")
    parser.add_argument("--noop-runs", type=int, default=5, help="no-op re-installs per tool")
    args = parser.parse_args()

    from tests.test_cluster_support import Env, FakeController, odh_objects, prepare_cluster_for_odh
    from tests.testenv.cluster import TestCluster

    objects = odh_objects()
    tmp = Path(tempfile.mkdtemp(prefix="bench-install-"))
    everything, crds, rest = tmp / "all.yaml", tmp / "crds.yaml", tmp / "rest.yaml"
    everything.write_text(_yaml_dump(objects))
    crds.write_text(_yaml_dump([o for o in objects if o["kind"] == "CustomResourceDefinition"]))
    rest.write_text(_yaml_dump([o for o in objects if o["kind"] != "CustomResourceDefinition"]))

    results: dict[str, dict[str, list[float]]] = {"trainerctl": {"fresh": [], "noop": []},
                                                  "kubectl": {"fresh": [], "noop": []},
                                                  "trainerctl apply phase": {"fresh": [], "noop": []}}
    for run in range(args.runs):
        for tool in ("kubectl", "trainerctl") if run % 2 == 0 else ("trainerctl", "kubectl"):
            tc = TestCluster()
            tc.start()
            try:
                env = Env(tc)
                prepare_cluster_for_odh(env.cluster)
                kc = str(tc.admin_kubeconfig)
                with FakeController(env, objects):
                    if tool == "kubectl":
                        _timed(["kubectl", "--kubeconfig", kc, "create", "namespace", "opendatahub"])
                        fresh = _kubectl(kc, crds)
                        _timed(["kubectl", "--kubeconfig", kc, "wait", "--for", "condition=Established",
                                "-f", str(crds)])
                        fresh += _kubectl(kc, rest)
                        noop = [_kubectl(kc, everything) for _ in range(args.noop_runs if run == 0 else 0)]
                    else:
                        fresh, phase = _trainerctl(kc, everything)
                        pairs = [_trainerctl(kc, everything) for _ in range(args.noop_runs if run == 0 else 0)]
                        noop = [p[0] for p in pairs]
                        results["trainerctl apply phase"]["fresh"].append(phase)
                        results["trainerctl apply phase"]["noop"].extend(p[1] for p in pairs)
                results[tool]["fresh"].append(fresh)
                results[tool]["noop"].extend(noop)
            finally:
                tc.stop()
            print(f"run {run + 1} {tool}: fresh {fresh:.2f}s" + (f", no-op {statistics.median(noop):.2f}s" if noop else ""),
                  file=sys.stderr)

    med = {t: {k: statistics.median(v) for k, v in r.items()} for t, r in results.items()}
    print(f"objects: {len(objects)} (+ the namespace), fresh runs: {args.runs}, no-op runs: {args.noop_runs}")
    k = med["kubectl"]
    for name in ("trainerctl", "trainerctl apply phase"):
        t = med[name]
        print(f"{name + ':':24} fresh {t['fresh']:.2f}s vs kubectl {k['fresh']:.2f}s = {t['fresh'] / k['fresh']:.2f}x "
              f"(target <= 1.0x, waits excluded); no-op {t['noop']:.2f}s vs {k['noop']:.2f}s = "
              f"{t['noop'] / k['noop']:.2f}x (target <= 0.5x)")
    import os as _os

    print(f"load average during the run: {_os.getloadavg()[0]:.1f} on {_os.cpu_count()} CPUs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
