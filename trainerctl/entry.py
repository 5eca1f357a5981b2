"""Console entry point (`trainerctl`); the command line itself is trainerctl.cli."""

from __future__ import annotations


def main(argv: list[str] | None = None) -> int:
    from trainerctl.cli import main as cli_main

    return cli_main(argv)
