"""`trainerctl kustomize DIR [--remote-mirror P=R]...` starts without typer (its import is a
tenth of the command's time) and ends exactly as the typer command line does: same stdout,
stderr and exit code; any other form of the command goes through typer."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.kustomize_cases import CM, write_tree
from trainerctl.entry import _kustomize_args

PROBE = ("import sys, runpy; sys.argv = ['trainerctl', *sys.argv[1:]]\n"
         "try:\n    runpy.run_module('trainerctl', run_name='__main__')\n"
         "finally:\n    sys.stderr.write('typer imported\\n' if 'typer' in sys.modules else '')\n")


def _run(*args: str, typer_path: bool = False, env: dict | None = None) -> subprocess.CompletedProcess:
    if typer_path:  # the same command through typer, as every other command runs
        code = "import sys; from trainerctl.cli import main; sys.exit(main(sys.argv[1:]))"
    else:
        code = PROBE
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True,
                          env=dict(os.environ, NO_COLOR="1", **(env or {})), timeout=120)


@pytest.mark.parametrize("args, quick", [
    (["kustomize", "DIR"], ("DIR", [])),
    (["kustomize", "--remote-mirror", "a=b", "DIR", "--remote-mirror=c=d"], ("DIR", ["a=b", "c=d"])),
    (["kustomize"], None), (["kustomize", "DIR", "other"], None), (["kustomize", "-h"], None),
    (["kustomize", "DIR", "--remote-mirror"], None), (["kustomize", "DIR", "--remote-mirror", "-x"], None),
    (["kustomize", "--", "DIR"], None), (["kustomize", "DIR", "--bogus"], None), (["render", "DIR"], None),
])
def test_which_forms_take_the_quick_path(args, quick):
    assert _kustomize_args(args) == quick


def test_the_quick_path_ends_as_the_typer_path(tmp_path):
    ok = write_tree(tmp_path / "ok", {"kustomization.yaml": "resources: [cm.yaml]\n", "cm.yaml": CM})
    bad = write_tree(tmp_path / "bad", {"kustomization.yaml": "resources: [nope.yaml]\n"})
    cases = [[str(ok)], [str(bad)], [str(tmp_path / "missing")], [str(ok), "--remote-mirror", "no-equals"],
             [str(ok), "--remote-mirror=https://a=https://b"]]
    for args in cases:
        quick = _run("kustomize", *args)
        slow = _run("kustomize", *args, typer_path=True)
        assert "typer imported" not in quick.stderr, args
        assert (quick.returncode, quick.stdout, quick.stderr) == (slow.returncode, slow.stdout, slow.stderr)
    assert _run("kustomize", str(ok)).stdout.startswith("apiVersion: v1\n")


def test_other_forms_go_through_typer(tmp_path):
    for args in (["kustomize"], ["kustomize", "-h"], ["kustomize", str(tmp_path), "--bogus"]):
        proc = _run(*args)
        assert "typer imported" in proc.stderr, args


def test_an_internal_error_is_one_line_on_the_quick_path(tmp_path):
    """A bug in the engine still ends as one line with the way to get the traceback."""
    ok = write_tree(tmp_path / "ok", {"kustomization.yaml": "resources: [cm.yaml]\n", "cm.yaml": CM})
    code = ("import sys, trainerctl.kustomize.top as b\n"
            "def boom(*a, **k): raise ZeroDivisionError('boom')\n"
            "b._build_resources = boom\n"
            "from trainerctl.entry import main; sys.exit(main(sys.argv[1:]))\n")
    proc = subprocess.run([sys.executable, "-c", code, "kustomize", str(ok)], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 1 and proc.stdout == ""
    assert proc.stderr == ("error: internal error: ZeroDivisionError: boom (set TRAINERCTL_DEBUG=1 "
                           "for the traceback)\n")
