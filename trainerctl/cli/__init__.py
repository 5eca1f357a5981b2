"""The command line: parses flags, calls library functions, prints. No work lives here."""

from __future__ import annotations

import sys

import typer

from trainerctl.errors import EXIT_INTERRUPTED, TrainerctlError

app = typer.Typer(
    name="trainerctl",
    help="Install Kubeflow Trainer v2: fetch pinned upstream manifests, render them, apply them.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

# Each module registers its commands on `app`; one module per command family so that
# the families can grow independently.
from trainerctl.cli import kustomize_cmd, render_cmd, cluster_cmd, upgrade_cmd  # noqa: E402,F401


def main(argv: list[str] | None = None) -> int:
    """Entry point: every TrainerctlError becomes one line on stderr and its exit code."""
    try:
        # Without standalone mode click returns a command's typer.Exit code instead of exiting.
        rc = app(args=argv, standalone_mode=False)
        if isinstance(rc, int) and not isinstance(rc, bool):
            return rc
    except TrainerctlError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("error: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except SystemExit as exc:  # typer/click exits for --help and usage errors
        return int(exc.code or 0) if not isinstance(exc.code, str) else 2
    except Exception as exc:  # click usage errors and similar
        import click

        if isinstance(exc, click.exceptions.Exit):
            return exc.exit_code
        if isinstance(exc, click.ClickException):
            exc.show()
            return 2 if isinstance(exc, click.UsageError) else exc.exit_code
        if isinstance(exc, click.exceptions.Abort):
            print("error: aborted", file=sys.stderr)
            return EXIT_INTERRUPTED
        raise
    return 0


if __name__ == "__main__":
    sys.exit(main())
