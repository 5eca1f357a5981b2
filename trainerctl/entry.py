"""Console entry point. `trainerctl kustomize` skips the typer/rich import (about 0.1-0.2 s):
it is a drop-in for `kubectl kustomize` and is judged on start-up time."""

from __future__ import annotations

import sys


def _kustomize(argv: list[str]) -> int:
    import argparse

    from trainerctl.errors import report

    parser = argparse.ArgumentParser(prog="trainerctl kustomize", add_help=False)
    parser.add_argument("directory")
    parser.add_argument("--remote-mirror", action="append", default=[])
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return int(exc.code or 2)

    def build() -> None:
        from trainerctl.kustomize import build_yaml

        sys.stdout.write(build_yaml(args.directory, remote_mirrors=args.remote_mirror))

    return report(build)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["kustomize"] and not {"-h", "--help"} & set(argv):
        return _kustomize(argv[1:])
    if argv[:1] in (["render"], ["fetch"]):  # argparse too, for the same reason (trainerctl/render/cli.py)
        from trainerctl.render.cli import run

        return run(argv[0], argv[1:])
    from trainerctl.cli import main as cli_main

    return cli_main(argv)
