"""Production options for the Trainer controller Deployment (`manager:`), and their patches.

Options come from a `manager:` block in trainerctl.yaml, from `--set manager.KEY=VALUE` flags and
from the `--ha` preset, in that order of increasing precedence (the preset is the base layer).
They are validated here, once, so the render only sees well-formed values; then `manager_overlay`
turns them into JSON6902 patches for the controller Deployment plus extra resources (the PDB),
and `apply_manager_options` applies the same patches to already rendered objects.

Everything is off by default, and with nothing set no patch and no resource is produced, so the
render stays byte-identical to a render without this feature.

Rooms: controller_options.py (the validated options), parse.py (--set, the file block, the --ha preset, their
layering), validate.py (one line per bad value), controller_patches.py (Deployment patches and the PDB).
"""

from trainerctl.render.controller.controller_options import (DEFAULT_CONTAINER, DEFAULT_DEPLOYMENT, NO_OPTIONS, ManagerOptions,
                                                             PodDisruptionBudget)
from trainerctl.render.controller.parse import HA_PRESET, parse_set, resolve
from trainerctl.render.controller.controller_patches import (apply_manager_options, deployment_ops, find_deployment, ha_anti_affinity,
                                                manager_overlay, pdb_resource, selector_labels)
from trainerctl.render.controller.validate import validate

__all__ = ["DEFAULT_CONTAINER", "DEFAULT_DEPLOYMENT", "HA_PRESET", "NO_OPTIONS", "ManagerOptions",
           "PodDisruptionBudget", "apply_manager_options", "deployment_ops", "find_deployment", "ha_anti_affinity",
           "manager_overlay", "parse_set", "pdb_resource", "resolve", "selector_labels", "validate"]
