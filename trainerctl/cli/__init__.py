"""The command line: one typer app. It parses flags and prints; the work lives in library modules.

Every error ends as one `error:` line on stderr and a documented exit code (docs/exit-codes.md):
TrainerctlError carries its own, usage errors are 2, Ctrl-C is 130.
"""

from __future__ import annotations

import os
import sys

import typer

from trainerctl.trust import interrupts
from trainerctl.trust.stdio import error as print_error

from trainerctl.cli.typer_support import Command, Group, usage_error_line
from trainerctl.errors import EXIT_BAD_INPUT, EXIT_FAILED, EXIT_INTERRUPTED, EXIT_OK, TrainerctlError

app = typer.Typer(
    name="trainerctl",
    cls=Group,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def command(name: str, **kwargs):
    """Register a command on the app (with our Command class: cheap flag parsing, Ctrl-C). A
    command made by flags.takes gets its flags here, each with the help this command shows."""
    register = app.command(name, cls=Command, **kwargs)

    def decorate(fn):
        bind = getattr(fn, "bind_command", None)
        return register(bind(name) if bind else fn)

    return decorate


def _version(value: bool) -> None:
    if value:
        from trainerctl import __version__
        from trainerctl.cli.output import verbatim

        verbatim(f"trainerctl {__version__}\n")
        raise typer.Exit(0)


@app.callback()
def _root(
    version: bool = typer.Option(False, "--version", is_eager=True, callback=_version,
                                 help="Print the version and exit."),
) -> None:
    """Install Kubeflow Trainer v2: fetch pinned upstream manifests, render them, apply them."""


# One module per command family; each registers its commands on `app` when imported. A run
# imports only the module of its command (help, completion and unknown commands import all).
COMMAND_MODULES = {
    "kustomize": "kustomize_cmd", "render": "render_cmd", "fetch": "render_cmd", "install": "cluster_cmd",
    "uninstall": "cluster_cmd", "diff": "cluster_cmd", "status": "cluster_cmd", "upgrade-check": "upgrade_cmd",
    "check": "cluster_cmd", "support-bundle": "cluster_cmd", "completion": "completion_cmd", "images": "images_cmd",
    "history": "history_cmd", "rollback": "history_cmd", "verify": "verify_cmd", "channels": "channels_cmd",
}


def _load_commands(name: str | None = None) -> None:
    import importlib

    modules = [COMMAND_MODULES[name]] if name in COMMAND_MODULES else dict.fromkeys(COMMAND_MODULES.values())
    for module in modules:
        importlib.import_module(f"{__name__}.{module}")


def full_app() -> typer.Typer:
    """The app with every command registered (for help, completion and tests)."""
    _load_commands()
    return app


def main(argv: list[str] | None = None) -> int:
    """Run one command; returns its exit code."""
    argv = sys.argv[1:] if argv is None else list(argv)
    previous = interrupts.install()  # Ctrl-C, SIGTERM, SIGHUP: abort requests in flight, unwind
    try:
        return _run(argv)
    finally:
        interrupts.restore(previous)


def _app_for(argv: list[str]) -> typer.Typer:
    """The app with only the command being run: typer builds every command's flags before it
    parses, and building them all costs more than parsing (render and kustomize pay it on
    every pipeline run). Help, completion and unknown commands get the whole app."""
    name = argv[0] if argv else None
    completing = any(v.endswith("_COMPLETE") for v in os.environ)
    if argv == ["--version"]:
        return app
    _load_commands(None if completing else name)
    chosen = [c for c in app.registered_commands if c.name == name]
    if not chosen or completing:
        return full_app()
    one = typer.Typer(name=app.info.name, cls=Group, pretty_exceptions_enable=False,
                      context_settings=app.info.context_settings)
    one.registered_callback = app.registered_callback
    one.registered_commands = chosen
    return one


def _run(argv: list[str]) -> int:
    try:
        rc = _app_for(argv)(args=argv, prog_name="trainerctl", standalone_mode=False)
    except TrainerctlError as exc:
        if exc.exit_code == EXIT_INTERRUPTED and str(exc) == "interrupted":
            interrupts.say_interrupted(print_error)  # the hard exit may say it too: once
        else:
            print_error(str(exc))
        return exc.exit_code
    except KeyboardInterrupt:
        interrupts.say_interrupted(print_error)
        return EXIT_INTERRUPTED
    except typer.Abort:  # a prompt got EOF
        print_error("aborted")
        return EXIT_INTERRUPTED
    except SystemExit as exc:  # shell completion exits by itself
        return exc.code if isinstance(exc.code, int) else (EXIT_OK if exc.code is None else EXIT_FAILED)
    except BrokenPipeError:  # `trainerctl render | head`: the reader left, nothing to say
        _quiet_stdout()
        return EXIT_FAILED
    except Exception as exc:
        return _unexpected(exc)
    return rc if isinstance(rc, int) and not isinstance(rc, bool) else EXIT_OK


def _unexpected(exc: Exception) -> int:
    if type(exc).__name__ == "NoArgsIsHelpError":  # bare `trainerctl`: help, like kubectl
        text = exc.format_message()  # typer's rich help has printed itself already
        if text.strip():
            from trainerctl.cli.output import verbatim

            verbatim(f"{text}\n")
        return EXIT_OK
    usage = usage_error_line(exc)
    if usage is not None:
        print_error(usage[0])
        return usage[1]
    if isinstance(exc, RecursionError):  # input nested so deep that a walk over it gave up
        print_error("the input is nested too deeply to process")
        return EXIT_BAD_INPUT
    if isinstance(exc, OSError) and not isinstance(exc, (BrokenPipeError, ConnectionError)):
        # A path that is not what it should be (too long, a symlink loop, no permission, ...)
        # reached a reader that does not name its own flag: still one line, exit 2.
        from trainerctl.trust.bounded_read import os_problem, shown_path

        where = shown_path(str(exc.filename)) if exc.filename else "a file"
        print_error(f"{where}: {os_problem(exc)}")
        return EXIT_BAD_INPUT
    if isinstance(exc, MemoryError):
        print_error("out of memory (an input larger than this machine can hold?)")
        return EXIT_FAILED
    if os.environ.get("TRAINERCTL_DEBUG"):
        raise exc
    # A bug, not bad input: still one line, and a way to get the traceback.
    print_error(f"internal error: {type(exc).__name__}: {exc} (set TRAINERCTL_DEBUG=1 for the traceback)")
    return EXIT_FAILED


def _quiet_stdout() -> None:
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


__all__ = ["app", "full_app", "main"]
