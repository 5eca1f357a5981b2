"""The `--set manager.KEY=VALUE` and `--ha` flags, shared by render, install and diff.

Commands declare `set_values: list[str] = SetOpt, ha: bool = HaOpt` and pass the result of
`manager_from_flags(config.get("manager"), set_values, ha, config_path)` as RenderOptions.manager.
"""

from __future__ import annotations

import typer

SetOpt = typer.Option(
    [], "--set",
    help="manager.KEY=VALUE (repeatable): replicas, podDisruptionBudget.*, topologySpreadConstraints, "
         "priorityClassName, affinity, nodeSelector, tolerations, resources. Values are YAML.")
HaOpt = typer.Option(
    False, "--ha",
    help="Highly available controller: 2 replicas, a PodDisruptionBudget (minAvailable 1), soft pod anti-affinity.")


def manager_from_flags(config_block, set_values: list[str], ha: bool, config_path=None):
    """Validated ManagerOptions (file < --set, over the --ha preset); warnings go to stderr."""
    from trainerctl import ui
    from trainerctl.manager_options import resolve

    options = resolve(config_block, set_values, ha=ha, source=str(config_path or "trainerctl.yaml"))
    for warning in options.warnings:
        ui.warn(warning)
    return options
