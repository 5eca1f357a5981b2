"""`trainerctl completion SHELL`: the completion script for a shell named on the command line.

typer's own `--show-completion` is a flag that detects the shell from the parent processes, so
`--show-completion zsh` prints whatever shell runs the command (in a Dockerfile or a CI step,
none: it fails). Like `kubectl completion zsh` and `helm completion zsh`, the shell is given.
"""

from __future__ import annotations

import enum

import typer
from typer._completion_shared import get_completion_script

from trainerctl.cli import command
from trainerctl.cli.output import verbatim


class Shell(str, enum.Enum):
    bash = "bash"
    zsh = "zsh"
    fish = "fish"
    powershell = "powershell"


@command("completion")
def completion(shell: Shell = typer.Argument(..., help="The shell to print the script for.",
                                             show_default=False)) -> None:
    """Print the shell completion script for SHELL.

    SHELL: bash, zsh, fish or powershell.

    bash: trainerctl completion bash > ~/.local/share/bash-completion/completions/trainerctl
    zsh:  trainerctl completion zsh > "${fpath[1]}/_trainerctl"
    fish: trainerctl completion fish > ~/.config/fish/completions/trainerctl.fish
    """
    verbatim(get_completion_script(prog_name="trainerctl", complete_var="_TRAINERCTL_COMPLETE",
                                   shell=shell.value))
    verbatim("\n")
