"""Each command's options, made from its Settings in one place: the render's RenderOptions and
the cluster actions (Install, Uninstall) take the settings of their own field names
(`Settings.options_for`), and the session they run over the namespace, ownership label and field
manager (`session`); what is not a setting (the controller options made of the
`manager:` block and --set, the entries of --images-from's file, the upgrade check, a value found
on the cluster) is added here, and so are the registry settings."""

from __future__ import annotations

from typing import Any

from trainerctl.cli.flags import REGISTRY
from trainerctl.errors import InputError
from trainerctl.settings import CONFIG_FILE, Settings


def render_options(s: Settings, **found: Any):
    """RenderOptions; `found`: what the cluster decided (its platform, the namespace a hand-over
    installs into). Errors name the flag, or the settings file and field, a bad value came from."""
    from trainerctl import ui
    from trainerctl.render.controller import resolve as resolve_manager
    from trainerctl.render.options import RenderOptions

    manager = None
    if s.manager is not None or s.set_values or s.ha:  # only then pay for parsing
        manager = resolve_manager(s.manager, list(s.set_values), ha=s.ha, source=s.config or CONFIG_FILE)
        for warning in manager.warnings:
            ui.warn(warning)
    images, origins = dict(s.images), {**s.origins, "source_url": s.where("source"), "source_path": s.where("source")}
    if s.images_from is not None:  # over the settings file's images:, under --image
        from trainerctl.render.overrides_file import read_overrides

        for key, value in read_overrides(s.images_from).items():
            if f"images.{key}" not in s.command_line:
                images[key] = value
                origins[f"images.{key}"] = f"--images-from {s.images_from}: images: {key}"
    return s.options_for(RenderOptions, manager=manager, images=images, origins=origins, **found)


def session(s: Settings, api, *, namespace: str | None = None, owner_label=None, progress_of: int | None = None):
    """The session a cluster command's action runs over (manager/session.py): the namespace and
    ownership label of the settings unless the target found others (a hand-over's namespace, the
    label a render was made with); progress shown for `progress_of` objects (install, rollback,
    uninstall), every object with -v."""
    from trainerctl.cluster.manager.session import Session
    from trainerctl.ui import Progress

    shown = Progress(progress_of or 0, enabled=progress_of is not None, verbose=s.verbose)
    return Session(api, namespace or s.namespace, owner_label or s.owner_label, s.field_manager, shown)


def install_options(s: Settings, **extra: Any):
    """The Install action; `extra`: what the command adds (how the render was asked, for the history)."""
    from trainerctl.cluster.install import Install
    from trainerctl.upgrade import guard

    return s.options_for(Install, **{"upgrade_guard": guard, **extra})


def registry_settings(s: Settings):
    """trainerctl.registry.client.RegistrySettings, every value checked."""
    from trainerctl.registry.client import RegistrySettings
    from trainerctl.render.images import validate_registry

    for host in s.plain_http:
        if "/" in validate_registry(host, "--plain-http").rstrip("/"):
            raise InputError(f"--plain-http {host!r}: expected a registry host[:port], without a path")
    return RegistrySettings(config_file=s.registry_config, ca_file=s.registry_ca,
                            plain_http=frozenset(h.rstrip("/") for h in s.plain_http))


def registries_for(s: Settings, asked: bool, step: str):
    """The registry settings when `step` (--images, --check-images) was asked for, else None; the
    registry flags alone, which would change nothing, are refused."""
    if not asked:
        given = [s.where(name) for name in REGISTRY if name in s.command_line]
        if given:
            raise InputError(f"{given[0]}: only used with {step} (the registries are not asked otherwise)")
        return None
    return registry_settings(s).checked()


def uninstall_options(s: Settings):
    """The Uninstall action."""
    from trainerctl.cluster.uninstall import Uninstall

    return s.options_for(Uninstall)
