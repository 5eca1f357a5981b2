#!/usr/bin/env python3
"""Benchmark `trainerctl install -f` against `kubectl apply --server-side -f` on the same file.

Same objects (kubeflow/trainer v2.3.0 `overlays/manager` with the ownership label: 35 objects,
3.2 MB of YAML; `--overlay odh` for opendatahub-trainer odh-3.5.0 `rhoai`), same real
kube-apiserver (tests/testenv), the fake controller from the tests answering webhooks and
marking Deployments available. Both tools run as whole processes on the same YAML file, and
they are interleaved run by run (A B, B A, A B, ...), so load that drifts during the benchmark
hits both alike; each pair gives one ratio, and the result is the median of those ratios, with
their spread.

  fresh:  a new API server per pair member. kubectl needs two applies (CRDs, then the rest,
          since it cannot map kinds whose CRD is not established yet); the `kubectl wait`
          between them is not timed. trainerctl's own waits (CRD Established, controller
          ready) are subtracted using its -o json stage timings.
  no-op:  the same file again on an installed cluster, one per tool (both up at once), the
          runs alternating between the tools.

Targets: fresh <= 1.0x, no-op <= 0.25x (whole processes). `--trainerctl PATH` adds another build
to the no-op pairs (each pair runs kubectl and every build, in rotating order), so a change is
measured against the build before it in the same run.

    python scripts/bench_install.py [--pairs 3] [--noop-pairs 11] [--overlay kubeflow|odh] [--trainerctl PATH ...]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))


def _yaml_dump(objects: list[dict]) -> str:
    from trainerctl.kustomize.yamlio import dump_all  # as `trainerctl render` writes it

    return dump_all(objects)


def _timed(cmd: list[str], env: dict | None = None) -> tuple[float, str]:
    start = time.perf_counter()
    out = subprocess.run(cmd, capture_output=True, text=True, env=env)
    elapsed = time.perf_counter() - start
    if out.returncode:
        raise SystemExit(f"{' '.join(cmd)} failed ({out.returncode}): {out.stderr[-800:]}")
    return elapsed, out.stdout


def _trainerctl_exe() -> list[str]:
    """The installed console script next to this Python (what users run), else `python -m`."""
    exe = shutil.which("trainerctl", path=os.path.dirname(sys.executable))
    return [exe] if exe else [sys.executable, "-m", "trainerctl"]


def trainerctl(kubeconfig: str, path: Path, exe: list[str] | None = None) -> tuple[float, dict]:
    """Process wall time minus the time spent waiting (per stage in -o json), and the report."""
    env = dict(os.environ, CI="true")  # plain output: no terminal rendering in the timing
    seconds, out = _timed([*(exe or _trainerctl_exe()), "install", "-f", str(path), "--kubeconfig", kubeconfig,
                           "-n", "opendatahub", "-o", "json"], env)
    report = json.loads(out)
    assert not report["summary"].get("failed"), report["summary"]
    return seconds - sum(s["waitedSeconds"] for s in report["stages"]), report


def kubectl(kubeconfig: str, path: Path) -> float:
    return _timed([shutil.which("kubectl", path=os.path.dirname(sys.executable)) or "kubectl", "--kubeconfig", kubeconfig, "apply", "--server-side", "-f", str(path)])[0]


# Run in the trainerctl process by --requests: every request the transport sends is logged with
# its start (seconds since the interpreter began importing trainerctl) and duration.
_REQUEST_HOOK = """
import atexit, json, os, sys, threading, time
start = time.perf_counter()
import trainerctl.net.transport as transport
log, send = [], transport.Transport.request
def request(self, method, target, **kw):
    began = time.perf_counter()
    try:
        return send(self, method, target, **kw)
    finally:
        log.append((method, target.split("?")[0], threading.current_thread().name, began - start,
                    time.perf_counter() - began))
transport.Transport.request = request
atexit.register(lambda: print(json.dumps({"log": log, "end": time.perf_counter() - start}), file=sys.stderr))
sys.argv = ["trainerctl", *sys.argv[1:]]
from trainerctl.entry import main
main()
"""


def request_log(kubeconfig: str, path: Path) -> str:
    """One no-op install with its requests counted per verb and path, and where its time went."""
    out = subprocess.run([sys.executable, "-c", _REQUEST_HOOK, "install", "-f", str(path), "--kubeconfig",
                          kubeconfig, "-n", "opendatahub", "-o", "json"], capture_output=True, text=True,
                         env=dict(os.environ, CI="true"))
    if out.returncode:
        raise SystemExit(f"traced install failed ({out.returncode}): {out.stderr[-800:]}")
    trace = json.loads(out.stderr.strip().splitlines()[-1])
    counts: dict[tuple[str, str], int] = {}
    for method, target, *_ in trace["log"]:
        counts[method, target] = counts.get((method, target), 0) + 1
    lines = [f"{n:3d} {method:6s} {target}" for (method, target), n in sorted(counts.items(), key=lambda kv: kv[0][1])]
    first = min((r[3] for r in trace["log"]), default=0.0)
    last = max((r[3] + r[4] for r in trace["log"]), default=0.0)
    serial = sum(r[4] for r in trace["log"] if r[2] == "MainThread")
    stages = ", ".join(f"{s['name']} {s['seconds']:.3f}s" for s in json.loads(out.stdout)["stages"])
    return "\n".join([f"no-op requests: {len(trace['log'])} ({serial:.3f}s of them one at a time on the main thread)",
                      *lines, f"first request at {first:.3f}s (start-up and reading the file), last answer at "
                      f"{last:.3f}s, process done at {trace['end']:.3f}s; stages: {stages}"])


def _ratios(ours: list[float], theirs: list[float]) -> str:
    ratios = sorted(t / k for t, k in zip(ours, theirs))
    q = statistics.quantiles(ratios, n=4) if len(ratios) >= 4 else [ratios[0], statistics.median(ratios), ratios[-1]]
    return (f"median ratio {statistics.median(ratios):.2f}x (spread {ratios[0]:.2f}-{ratios[-1]:.2f}, "
            f"quartiles {q[0]:.2f}-{q[2]:.2f}, {len(ratios)} pairs); medians trainerctl "
            f"{statistics.median(ours):.2f}s, kubectl {statistics.median(theirs):.2f}s")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=3, help="fresh installs per tool (0: none)")
    parser.add_argument("--noop-pairs", type=int, default=11, help="no-op re-installs per tool")
    parser.add_argument("--overlay", choices=("kubeflow", "odh"), default="kubeflow")
    parser.add_argument("--trainerctl", action="append", metavar="PATH",
                        help="another trainerctl build for the no-op runs, timed in the same pairs (repeatable; "
                             "e.g. main's before a change)")
    parser.add_argument("--requests", action="store_true",
                        help="after the no-op runs, one more (untimed) with its requests counted per verb and path")
    args = parser.parse_args()

    from tests.support.cluster import Env, FakeController, kubeflow_objects, odh_objects, prepare_cluster_for_odh
    from tests.testenv.cluster import TestCluster

    objects = kubeflow_objects("v2.3.0") if args.overlay == "kubeflow" else odh_objects()
    tmp = Path(tempfile.mkdtemp(prefix="bench-install-"))
    everything, crds, rest = tmp / "all.yaml", tmp / "crds.yaml", tmp / "rest.yaml"
    everything.write_text(_yaml_dump(objects))
    crds.write_text(_yaml_dump([o for o in objects if o["kind"] == "CustomResourceDefinition"]))
    rest.write_text(_yaml_dump([o for o in objects if o["kind"] != "CustomResourceDefinition"]))
    print(f"{len(objects)} objects, {everything.stat().st_size / 1e6:.1f} MB; trainerctl: {' '.join(_trainerctl_exe())}")

    def cluster():
        tc = TestCluster()
        tc.start()
        env = Env(tc)
        if args.overlay == "odh":
            prepare_cluster_for_odh(env.cluster)
        return tc, env

    fresh: dict[str, list[float]] = {"trainerctl": [], "kubectl": []}
    for pair in range(args.pairs):
        for tool in ("kubectl", "trainerctl") if pair % 2 == 0 else ("trainerctl", "kubectl"):
            tc, env = cluster()
            try:
                kc = str(tc.admin_kubeconfig)
                with FakeController(env, objects):
                    if tool == "kubectl":
                        _timed(["kubectl", "--kubeconfig", kc, "create", "namespace", "opendatahub"])
                        seconds = kubectl(kc, crds)
                        _timed(["kubectl", "--kubeconfig", kc, "wait", "--for", "condition=Established",
                                "-f", str(crds)])
                        seconds += kubectl(kc, rest)
                    else:
                        seconds = trainerctl(kc, everything)[0]
            finally:
                tc.stop()
            fresh[tool].append(seconds)
            print(f"fresh pair {pair + 1} {tool}: {seconds:.2f}s", file=sys.stderr)

    # One installed cluster per tool, both up at once: the same field manager applying the same
    # file is a true no-op, while two managers on one cluster would conflict or change each other's
    # objects. The fake controller runs for trainerctl's cluster (it waits for the controller);
    # nothing in this file is admitted through a webhook, so kubectl's cluster needs none.
    others = {f"trainerctl {path}": [path] for path in args.trainerctl or []}
    noop: dict[str, list[float]] = {"trainerctl": [], "kubectl": [], **{name: [] for name in others}}
    (ta, envt), (tb, _) = cluster(), cluster()
    try:
        kt, kk = str(ta.admin_kubeconfig), str(tb.admin_kubeconfig)
        with FakeController(envt, objects):
            trainerctl(kt, everything)
            _timed(["kubectl", "--kubeconfig", kk, "create", "namespace", "opendatahub"])
            kubectl(kk, crds)
            _timed(["kubectl", "--kubeconfig", kk, "wait", "--for", "condition=Established", "-f", str(crds)])
            kubectl(kk, rest)
            # Builds of trainerctl share the installed cluster: the same objects and field manager
            # make each run a no-op for all of them.
            tools = list(noop)
            for pair in range(args.noop_pairs):
                for tool in tools[pair % len(tools):] + tools[:pair % len(tools)]:
                    if tool == "kubectl":
                        noop[tool].append(kubectl(kk, everything))
                    else:
                        seconds, report = trainerctl(kt, everything, others.get(tool))
                        assert report["summary"]["changed"] == 0, report["summary"]
                        noop[tool].append(seconds)
            if args.requests:
                print(request_log(kt, everything))
    finally:
        ta.stop()
        tb.stop()

    if fresh["trainerctl"]:
        print(f"fresh (waits excluded), target <= 1.0x: {_ratios(fresh['trainerctl'], fresh['kubectl'])}")
    print(f"no-op re-install,      target <= 0.25x: {_ratios(noop['trainerctl'], noop['kubectl'])}")
    for name in others:
        print(f"  {name}: {_ratios(noop[name], noop['kubectl'])}")
    print(f"load average during the run: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
