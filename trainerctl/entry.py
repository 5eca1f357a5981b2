"""Console entry point (`trainerctl`); the command line itself is trainerctl.cli.

One form runs without typer, whose import is a tenth of its whole time: `trainerctl kustomize
DIR [--remote-mirror PREFIX=REPLACEMENT]...`, the command pipelines run most. Any other form of
it (help, another flag, no DIR, `--`) goes through typer, which gives its own messages.
"""

from __future__ import annotations

import os
import sys


def main(argv: list[str] | None = None) -> int:
    from trainerctl.errors import EXIT_INTERRUPTED

    argv = sys.argv[1:] if argv is None else list(argv)
    completing = any(v.endswith("_COMPLETE") for v in os.environ)  # shell completion: typer's
    quick = None if completing else _kustomize_args(argv)
    if quick is not None:
        from trainerctl import outcome

        rc = outcome.run(lambda: _kustomize(*quick))
    else:
        from trainerctl.cli import main as cli_main

        rc = cli_main(argv)
    if rc == EXIT_INTERRUPTED:
        # Interrupted (again) while requests were in flight: the interpreter would join their
        # worker threads, up to the request time-out, before exiting. Everything of ours is
        # cleaned up by now (credentials included), so leave at once.
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(rc)
    return rc


def _kustomize_args(argv: list[str]) -> tuple[str, list[str]] | None:
    """(DIR, mirrors) of `kustomize DIR [--remote-mirror VALUE | --remote-mirror=VALUE]...`."""
    if argv[:1] != ["kustomize"]:
        return None
    directory, mirrors, rest = None, [], argv[1:]
    while rest:
        arg = rest.pop(0)
        if arg == "--remote-mirror" and rest and not rest[0].startswith("-"):
            mirrors.append(rest.pop(0))
        elif arg.startswith("--remote-mirror="):
            mirrors.append(arg.partition("=")[2])
        elif arg.startswith("-") or directory is not None:
            return None
        else:
            directory = arg
    return None if directory is None else (directory, mirrors)


def _kustomize(directory: str, mirrors: list[str]) -> None:
    from trainerctl.kustomize import build_yaml

    sys.stdout.write(build_yaml(directory, remote_mirrors=mirrors))
