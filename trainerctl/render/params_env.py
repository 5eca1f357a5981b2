"""Read and rewrite kustomize `params.env` files, keeping order, comments and blank lines.

Only the value of an overridden key changes; every other byte of the file stays as it was, so the
diff between upstream and the rendered copy is exactly the overrides. Parsing follows kustomize's env
file rules: leading whitespace is ignored, `#` starts a comment line, the first `=` splits key
from value, and the value is taken verbatim (no quotes, no trimming on the right).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from trainerctl.errors import InputError
from trainerctl.render.image_refs import parse_image
from trainerctl.trust.bounded_read import read_input, shown_path


@dataclass
class _Line:
    """One line of a params.env file, kept byte for byte; key and value if it sets one."""

    raw: str  # without its line ending
    key: str | None = None
    value: str | None = None


@dataclass
class ParamsEnv:
    """A params.env file as lines, so an edit rewrites only the lines it changes."""

    lines: list[_Line] = field(default_factory=list)
    trailing_newline: bool = True
    source: str = "params.env"

    @classmethod
    def parse(cls, text: str, source: str = "params.env") -> "ParamsEnv":
        # Lines end at "\n" only, as kustomize's line scanner sees them (str.splitlines would also
        # split at \x1c, \u2028, ... inside a value, and render() would then change the file).
        pieces = text.split("\n")
        trailing = pieces[-1] == ""
        if trailing:
            pieces.pop()
        lines = []
        for raw in pieces:
            line = raw[:-1] if raw.endswith("\r") else raw  # the scanner drops a line's \r
            stripped = line.lstrip()
            if not stripped or stripped.startswith("#"):
                lines.append(_Line(raw))
                continue
            key, sep, value = stripped.partition("=")
            # A line without "=" makes kustomize read the value from its own environment.
            lines.append(_Line(raw, key, value if sep else None))
        return cls(lines, trailing, source)

    @classmethod
    def load(cls, path: Path) -> "ParamsEnv":
        text = read_input(str(path), shown_path(str(path)), "params-env")
        try:
            return cls.parse(text.decode("utf-8"), str(path))
        except UnicodeDecodeError as exc:
            raise InputError(f"{shown_path(str(path))}: not UTF-8 text (byte {exc.start}); expected KEY=VALUE lines") \
                from None

    def keys(self) -> list[str]:
        return [ln.key for ln in self.lines if ln.key is not None]

    def get(self, key: str) -> str | None:
        value = None
        for ln in self.lines:
            if ln.key == key:
                value = ln.value
        return value

    def set(self, key: str, value: str) -> bool:
        """Set every line of key to value; False when the file has no such key."""
        if "\n" in value or "\r" in value:
            raise InputError(f"{self.source}: {key}: a value must be a single line")
        found = False
        for ln in self.lines:
            if ln.key == key:
                indent = ln.raw[: len(ln.raw) - len(ln.raw.lstrip())]
                ending = "\r" if ln.raw.endswith("\r") else ""
                ln.value, ln.raw, found = value, f"{indent}{key}={value}{ending}", True
        return found

    def render(self) -> str:
        text = "\n".join(ln.raw for ln in self.lines)
        return text + "\n" if self.trailing_newline and self.lines else text


def image_keys(params: ParamsEnv) -> list[str]:
    """The keys whose values are container images (by the naming every params.env here uses)."""
    return [k for k in params.keys() if "image" in k.lower()]


def check_image_values(params: ParamsEnv) -> None:
    """Every image value must be a valid image reference; messages name `params.source` and the key."""
    for key in image_keys(params):
        value = params.get(key)
        if value is not None:  # no "=": kustomize reads it from its environment, not ours to judge
            parse_image(value, f"{params.source}: {key}")
