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
from trainerctl.trust.bounded_read import shown_path


def render_options(s: Settings, **found: Any):
    """RenderOptions; `found`: what the cluster decided (its platform, the namespace a hand-over
    installs into). Errors name the flag, or the settings file and field, a bad value came from."""
    from trainerctl import ui
    from trainerctl.render.controller import resolve as resolve_manager
    from trainerctl.render.render_options import RenderOptions

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


def read_first(s: Settings):
    """-f FILE (trainerctl.target.manifest_files), read and checked before anything reads the
    kubeconfig: a bad file is said first, and no credential (a token file, an exec plugin) is
    touched for a command that cannot run anyway; None without -f."""
    if not s.filename:
        return None
    from trainerctl.target.manifest_files import from_file

    return from_file(s.filename, s.namespace, s.owner_label, s.cache_dir)


def given_alone(s: Settings, given=None):
    """-f FILE (`given`, when read_first already read it), refused beside a flag that changes the
    render."""
    flags = s.render_flags_given()
    if flags:
        raise InputError(f"-f {shown_path(s.filename)} and {flags[0]}: {flags[0]} changes the render, and -f "
                         "FILE is already rendered (render it with that flag instead)")
    return given or read_first(s)


def target(on, s: Settings, given=None, *, hand_over: bool = False):
    """What the command works on (trainerctl.target): -f FILE (`given`, when read_first already
    read it), or a render of these settings for the session `on`'s cluster (its options checked
    before the cluster is asked). `hand_over` (install): with --take-over-operator or
    --take-over-helm and no namespace named, the one the cluster says the hand-over installs into."""
    import dataclasses

    namespace = None
    if hand_over and not s.is_set("namespace"):
        from trainerctl.cluster.trainer.handover_namespace import handover_namespace

        namespace = handover_namespace(on, take_over_operator=s.take_over_operator, take_over_helm=s.take_over_helm)

    if s.filename:
        goal = given_alone(s, given)
        return dataclasses.replace(goal, namespace=namespace or s.namespace)
    from trainerctl.target.rendered import rendered

    options = render_options(s, **({"namespace": namespace} if namespace else {}))
    return rendered(on, options, manager=s.manager, set_values=s.set_values, ha=s.ha)


_CONNECT = object()  # session(): connect to the settings' cluster


def session(s: Settings, api=_CONNECT, *, namespace: str | None = None, owner_label=None,
            progress_of: int | None = None):
    """The session a cluster command's action runs over (manager/session.py): a connection to the
    settings' cluster (`api`: one made already), the namespace and ownership label of the settings
    unless the target found others (a hand-over's namespace, the label a render was made with);
    progress shown for `progress_of` objects (install, rollback, uninstall), every object with -v."""
    from trainerctl.cluster.manager.session import Session
    from trainerctl.ui import Progress

    if api is _CONNECT:
        from trainerctl.cluster.client.client import connect

        api = connect(s.kubeconfig, s.context, stdin_in_use=s.filename == "-")
    shown = Progress(progress_of or 0, enabled=progress_of is not None, verbose=s.verbose)
    return Session(api, namespace or s.namespace, owner_label or s.owner_label, s.field_manager, shown)


def install_options(s: Settings, **extra: Any):
    """The Install action; `extra`: what the command adds (how the render was asked, for the history)."""
    from trainerctl.cluster.install import Install
    from trainerctl.upgrade import guard

    return s.options_for(Install, **{"upgrade_guard": guard, **extra})


def rollback_action(s: Settings, revision: int | None, show_diff):
    """The Rollback action: the install it runs, and the source named for it on the command line
    (never trainerctl.yaml's, which names what `install` installs); a channel names a pinned
    source. With --dry-run it gives `show_diff` the diff first."""
    from trainerctl.cluster.diff import Diff
    from trainerctl.cluster.rollback import Rollback
    from trainerctl.render.recipe import Named
    from trainerctl.source import pins

    given = s.command_line
    chosen = pins.channel(s.channel) if "channel" in given else None
    named = Named(source_url=chosen.url if chosen else s.source_url if "source" in given else None,
                  source_path=s.source_path if "source" in given else None,
                  ref=chosen.ref if chosen else s.ref if "ref" in given else None,
                  remote_mirrors=tuple(s.remote_mirrors), owner_label=s.owner_label)
    return Rollback(install_options(s), revision, named, s.cache_dir, s.offline, preview=Diff(), show_diff=show_diff)


def registry_settings(s: Settings):
    """trainerctl.registry.client.RegistrySettings, every value checked."""
    from trainerctl.registry.client import RegistrySettings
    from trainerctl.render.image_refs import validate_registry

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


def image_check(s: Settings, command: str):
    """The checklist's `images` check when the settings ask for it (install --check-images, check
    --images: one setting, spelled per command), else None."""
    from trainerctl.settings import setting_of

    flag = setting_of("check_images").flag_in(command)
    registries = registries_for(s, s.check_images, flag)
    if registries is None:
        return None
    from trainerctl.images.pinning import ImageCheck

    return ImageCheck(registries, flag)


def uninstall_options(s: Settings):
    """The Uninstall action."""
    from trainerctl.cluster.uninstall import Uninstall

    return s.options_for(Uninstall)
