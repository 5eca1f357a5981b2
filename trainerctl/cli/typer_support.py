"""What trainerctl adds to typer: cheap value conversion and one-line usage errors (the flags
themselves are made from the settings: cli/flags.py).

- Conversion. typer 0.29 converts every flag value through a pydantic TypeAdapter built on
  first use; importing pydantic and building the adapters costs 0.1-0.4 s per process, more than
  `trainerctl render` itself. Our flags are plain str, bool, int, float and list[str], so
  `Command`/`Group` hand typer a converter for those (typer 0.26-0.28 use click-style types and
  need none). Anything else still goes through typer's own conversion.
- Usage errors. `usage_error_line` turns typer's usage exceptions (vendored click, private in
  typer) into one line, found by their attributes rather than by importing click.
"""

from __future__ import annotations

import math

import typer
import typer.core


class _Convert:
    """typer's runtime-parameter interface (`coerce`) for the plain types our flags use."""

    def __init__(self, annotation):
        self.annotation = annotation

    def coerce(self, value, param, ctx):
        if value is None:
            return () if param.multiple or param.nargs == -1 else None
        if param.multiple:
            return [self._one(v, param, ctx) for v in value]
        return self._one(value, param, ctx)

    def _one(self, value, param, ctx):
        kind = self.annotation
        if kind is list or getattr(kind, "__origin__", None) is list:
            kind = str
        if kind is bool:
            if isinstance(value, bool):
                return value
            text = str(value).strip().lower()
            if text in ("1", "true", "yes", "y", "on"):
                return True
            if text in ("0", "false", "no", "n", "off", ""):
                return False
            raise typer.BadParameter(f"{value!r} is not true or false.", ctx=ctx, param=param)
        if kind in (int, float):
            try:
                number = kind(value)
            except (TypeError, ValueError):
                what = "an integer" if kind is int else "a number"
                raise typer.BadParameter(f"{value!r} is not {what}.", ctx=ctx, param=param) from None
            if kind is float and not math.isfinite(number):
                raise typer.BadParameter(f"{value!r} is not a finite number.", ctx=ctx, param=param)
            return number
        return value if isinstance(value, str) else str(value)


_PLAIN = (str, bool, int, float)


def _is_plain(annotation) -> bool:
    if annotation in _PLAIN:
        return True
    return getattr(annotation, "__origin__", None) is list and getattr(annotation, "__args__", (None,))[0] is str


def _prepare(params: list) -> list:
    for param in params:
        # typer 0.29+: `_runtime_param` None means "build the pydantic converter on first use".
        descriptor = getattr(param, "type_descriptor", None)
        if descriptor is not None and getattr(param, "_runtime_param", False) is None and _is_plain(descriptor.annotation):
            param._runtime_param = _Convert(descriptor.annotation)
        # A flag takes no value, and an argument is named by its metavar: neither shows a Python
        # type in help (typer 0.29 would print `<bool>`, `<str>`).
        if getattr(param, "is_flag", False) and getattr(param, "metavar", None) is None:
            param.metavar = ""
        if getattr(param, "param_type_name", "") == "argument" and hasattr(param, "display_type_rich"):
            param.display_type_rich = lambda ctx: None
    return params


class Command(typer.core.TyperCommand):
    def get_params(self, ctx):
        return _prepare(super().get_params(ctx))

    def invoke(self, ctx):
        # typer turns Ctrl-C into a silent exit 130; ours says so on stderr.
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt:
            from trainerctl.errors import Interrupted

            raise Interrupted() from None


class Group(typer.core.TyperGroup):
    def get_params(self, ctx):
        return _prepare(super().get_params(ctx))


def usage_error_line(exc: BaseException) -> tuple[str, int] | None:
    """(one line, exit code) for typer's usage errors (bad flag, value, command); None otherwise."""
    code = getattr(exc, "exit_code", None)
    format_message = getattr(exc, "format_message", None)
    if not isinstance(code, int) or not callable(format_message):
        return None
    message = " ".join(str(format_message()).split()).rstrip(".")
    ctx = getattr(exc, "ctx", None)
    path = getattr(ctx, "command_path", None) or "trainerctl"
    return f"{path}: {message} (see '{path} --help')", code
