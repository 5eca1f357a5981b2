"""Writing a render: one YAML stream (kustomize's style) or JSON, or one file per object."""

from __future__ import annotations

import json
import re
from pathlib import Path

from trainerctl.errors import InputError
from trainerctl.kustomize.yamlio import dump_all

FORMATS = ("yaml", "json")
_MARKER = "# Written by `trainerctl render --output-dir`; files listed here are replaced on the next run.\n"
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def write_stream(objects: list[dict], fmt: str = "yaml") -> str:
    if fmt == "yaml":
        return dump_all(objects)
    if fmt == "json":
        return json.dumps({"apiVersion": "v1", "kind": "List", "items": objects}, indent=2, ensure_ascii=False) + "\n"
    raise InputError(f"-o {fmt!r}: expected one of {', '.join(FORMATS)}")


def file_name(obj: dict) -> str:
    """kind[_namespace]_name.yaml, lower case kind; stable across runs, so git diffs stay small."""
    meta = obj.get("metadata") or {}
    parts = [str(obj.get("kind", "object")).lower()]
    if meta.get("namespace"):
        parts.append(meta["namespace"])
    parts.append(str(meta.get("name", "unnamed")))
    return _UNSAFE.sub("-", "_".join(parts)) + ".yaml"


def check_output_dir(directory: str | Path) -> list[str]:
    """The files a previous run listed in `directory`; refuses a path that cannot be ours.

    Called before rendering too, so a bad --output-dir fails before any work is done.
    """
    directory = Path(directory)
    flag = f"--output-dir {directory}"
    if str(directory).strip() == "":
        raise InputError("--output-dir '': expected a directory")
    for parent in (directory, *directory.parents):
        if parent.exists() and not parent.is_dir():
            raise InputError(f"{flag}: {parent} is a file, not a directory")
        if parent.exists():
            break
    index = directory / "kustomization.yaml"
    try:
        if not (directory.exists() and any(directory.iterdir())):
            return []
        text = index.read_text(encoding="utf-8") if index.is_file() else ""
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"{flag}: cannot read: {getattr(exc, 'strerror', None) or exc}") from None
    if not text.startswith(_MARKER):
        raise InputError(f"{flag}: not empty and not written by trainerctl render")
    return [ln[2:].strip() for ln in text.splitlines() if ln.startswith("- ")]


def write_dir(objects: list[dict], directory: str | Path) -> list[Path]:
    """One file per object plus a kustomization.yaml listing them in apply order.

    Files a previous run wrote and this one does not are removed (an object dropped from the
    render must disappear from a GitOps repo too); a non-empty directory trainerctl did not
    write is refused rather than mixed with.
    """
    directory = Path(directory)
    previous = check_output_dir(directory)
    names: list[str] = []
    for obj in objects:
        name = file_name(obj)
        if name in names:  # same kind and name in two API groups
            group = str(obj.get("apiVersion", "")).rpartition("/")[0] or "core"
            name = name[:-5] + "_" + _UNSAFE.sub("-", group) + ".yaml"
        names.append(name)
    try:
        directory.mkdir(parents=True, exist_ok=True)
        for obj, name in zip(objects, names):
            (directory / name).write_text(dump_all([obj]), encoding="utf-8")
        for stale in set(previous) - set(names):
            if "/" not in stale and stale.endswith(".yaml"):
                (directory / stale).unlink(missing_ok=True)
        (directory / "kustomization.yaml").write_text(
            _MARKER + "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n"
            + "".join(f"- {n}\n" for n in names),
            encoding="utf-8",
        )
    except OSError as exc:
        raise InputError(f"--output-dir {directory}: cannot write: {exc.strerror}") from None
    return [directory / n for n in names]
