"""The command line's flags, made from the settings that define them (trainerctl.settings).

A command names the settings it offers as flags, in help order (`takes`), and receives its
Settings, built once from those flags, trainerctl.yaml and the environment. Help text: a
sentence, defaults in parentheses (a default the sentence explains is not repeated); every value
flag names its value (METAVAR), so help never shows Python types.
"""

from __future__ import annotations

import functools
import inspect
from typing import Annotated, Any, Optional

import typer

from trainerctl.settings import Settings, setting_of
from trainerctl.settings.spec import CHANNELS, KUBECONFIG_CONTEXTS, OUTPUT_FORMATS, REGISTRY_HOSTS, Setting

# The settings commands offer together.
CLUSTER = ("kubeconfig", "context")  # which cluster
SOURCE = ("config", "channel", "source", "ref", "cache_dir", "lock_file", "use_lock")  # where the manifests come from
RENDER = ("overlay", "platform", "images", "remote_mirrors", "require_registry", "offline", "refresh",
          "set_values", "ha", "images_from", "require_digests")  # how they are rendered
GITOPS = ("gitops", "gitops_repo", "gitops_branch", "gitops_path")  # render --output-dir for a GitOps engine
REGISTRY = ("registry_config", "registry_ca", "plain_http")  # how to reach container registries


def _choices(*values: str):
    def complete(incomplete: str) -> list[str]:
        return [v for v in values if v.startswith(incomplete)]

    return complete


def _contexts(ctx: typer.Context, incomplete: str) -> list[str]:
    """Context names from the kubeconfig(s) being used (merged as kubectl merges them), for shell
    completion; read as every kubeconfig is read (never a FIFO, never more than its limit)."""
    from trainerctl.cluster.client.kubeconfig_files import load_files
    from trainerctl.errors import TrainerctlError

    try:
        names = list(load_files(ctx.params.get("kubeconfig")).contexts)
    except TrainerctlError:  # completion must never fail loudly
        return []
    return [n for n in names if n.startswith(incomplete)]


def _registry_hosts(ctx: typer.Context, incomplete: str) -> list[str]:
    """Registries the user has credentials for (docker's and podman's files), for completion."""
    from trainerctl.errors import TrainerctlError
    from trainerctl.registry.auth import CredentialStore

    try:
        files = CredentialStore(ctx.params.get("registry_config")).files()
    except TrainerctlError:  # completion must never fail loudly
        return []
    hosts = {key.split("/", 1)[0] for f in files for key in (*f.auths, *f.helpers)}
    return sorted(h for h in hosts if h.startswith(incomplete))


def _output_formats(ctx: typer.Context, incomplete: str) -> list[str]:
    formats = ("plain", "json", "oc-mirror") if ctx.info_name == "images" else ("text", "yaml", "json")
    return [f for f in formats if f.startswith(incomplete)]


def _channels(ctx: typer.Context, incomplete: str) -> list[str]:
    from trainerctl.source.pins import channels

    return [name for name in channels() if name.startswith(incomplete)]


_FOUND = {KUBECONFIG_CONTEXTS: _contexts, REGISTRY_HOSTS: _registry_hosts, OUTPUT_FORMATS: _output_formats,
          CHANNELS: _channels}
_TYPES: dict[type, Any] = {str: Optional[str], bool: bool, float: Optional[float], list: list[str]}


@functools.cache
def _option(name: str, command: str | None) -> typer.models.OptionInfo:
    how = setting_of(name)
    complete = _FOUND[how.complete] if isinstance(how.complete, str) else _choices(*how.complete) if how.complete \
        else None
    return typer.Option(*how.flags_for(command), metavar=how.metavar, help=how.help_for(command), rich_help_panel=how.panel,
                        autocompletion=complete)


def _flag_default(how: Setting, default: Any, command: str | None) -> Any:
    """What typer shows as the default (the build tells a default from a given value)."""
    if how.takes is list:
        return []
    if how.takes is bool:
        return False if how.negate else default
    return None if "(default:" in how.help_for(command) else default


def parameter(name: str, default: Any, command: str | None = None) -> inspect.Parameter:
    """The typer parameter of a setting's flag, with the help `command` shows."""
    how = setting_of(name)
    if how is None or not how.flags:
        raise TypeError(f"{name}: not a setting with a flag")
    return inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=_flag_default(how, default, command),
                             annotation=Annotated[_TYPES[how.takes], _option(name, command)])


def takes(*names: str, defaults: dict[str, Any] | None = None, files: bool = True):
    """Offer these settings as flags (in this order in help), and call the command with its
    Settings (the parameter annotated `Settings`) instead; its other parameters (arguments) stay
    its own. `defaults`: this command's own default for a setting; `files`: whether
    trainerctl.yaml and the environment are read. The flags are made when the command is
    registered (`trainerctl.cli.command` calls `bind_command(name)`): a flag's help may differ
    per command (Setting.help_in)."""
    defaults = defaults or {}
    plain = Settings()

    def decorate(command):
        sig = inspect.signature(command, eval_str=True)
        target = next(p.name for p in sig.parameters.values() if p.annotation is Settings)
        own = [p.replace(kind=inspect.Parameter.KEYWORD_ONLY) for p in sig.parameters.values() if p.name != target]
        context = inspect.Parameter("_typer_context", inspect.Parameter.KEYWORD_ONLY, annotation=typer.Context)

        @functools.wraps(command)
        def run(**kwargs):
            from trainerctl.settings.build import build

            ctx = kwargs.pop("_typer_context")
            values = {n: kwargs.pop(n) for n in names}
            given = {n: v for n, v in values.items() if ctx.get_parameter_source(n).name != "DEFAULT"}
            return command(**{target: build(given, defaults=defaults, files=files, command=ctx.info_name)}, **kwargs)

        def bind_command(name: str):
            params = [*own, *(parameter(n, defaults.get(n, getattr(plain, n)), name) for n in names), context]
            if len({p.name for p in params}) != len(params):
                raise TypeError(f"{command.__name__}: a flag is defined twice: {sorted(p.name for p in params)}")
            run.__signature__ = sig.replace(parameters=params)
            run.__annotations__ = {p.name: p.annotation for p in params}
            return run

        del run.__wrapped__  # typer must read the merged signature, not the command's
        run.bind_command = bind_command
        run.reads_files = files  # for the command reference (scripts/gen_reference.py)
        return run

    return decorate
