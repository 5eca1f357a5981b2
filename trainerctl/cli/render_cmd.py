"""`trainerctl render` and `trainerctl fetch` on the typer app: both forward their arguments to
trainerctl.render.cli (argparse), which trainerctl.entry also calls directly to skip typer's start-up."""

from __future__ import annotations

import typer

from trainerctl.cli import app
from trainerctl.render.cli import FETCH_HELP, RENDER_HELP, is_git_url, parse_and_run, render_options

__all__ = ["is_git_url", "render_options"]

_PASSTHROUGH = {"allow_extra_args": True, "ignore_unknown_options": True, "help_option_names": []}


@app.command("render", help=RENDER_HELP + " (--help for flags)", context_settings=_PASSTHROUGH, add_help_option=False)
def render_command(ctx: typer.Context) -> None:
    parse_and_run("render", list(ctx.args))


@app.command("fetch", help=FETCH_HELP + " (--help for flags)", context_settings=_PASSTHROUGH, add_help_option=False)
def fetch_command(ctx: typer.Context) -> None:
    parse_and_run("fetch", list(ctx.args))
