"""Writing a render: one YAML stream (kustomize's style) or JSON, or one file per object."""

from __future__ import annotations

import json
import re
from pathlib import Path

from trainerctl.bounded_read import os_problem, read_input, shown_path
from trainerctl.errors import InputError
from trainerctl.safe_write import remove_quietly, write_atomic
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
    flag = f"--output-dir {shown_path(str(directory))}"
    if str(directory).strip() == "":
        raise InputError("--output-dir '': expected a directory")
    index = directory / "kustomization.yaml"
    try:
        for parent in (directory, *directory.parents):
            if parent.exists() and not parent.is_dir():
                raise InputError(f"{flag}: {shown_path(str(parent))} is a file, not a directory")
            if parent.exists():
                break
        if not (directory.exists() and any(directory.iterdir())):
            return []
        # A symlink in the index's place is not ours (and may point anywhere): refuse the folder.
        ours = index.is_file() and not index.is_symlink()
        text = read_input(str(index), f"{flag}: kustomization.yaml", "source-file").decode("utf-8") if ours else ""
    except UnicodeDecodeError:
        text = ""
    except OSError as exc:
        raise InputError(f"{flag}: cannot read: {os_problem(exc)}") from None
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
    # Each file replaces what stands at its name (write_atomic): a symlink planted there is
    # replaced, and the file it points to, inside the folder or out of it, is left alone.
    try:
        directory.mkdir(parents=True, exist_ok=True)
        for obj, name in zip(objects, names):
            write_atomic(directory / name, dump_all([obj]))
        for stale in set(previous) - set(names):
            if "/" not in stale and "\0" not in stale and stale.endswith(".yaml") and stale not in ("..", "."):
                remove_quietly(directory / stale)  # a symlink is removed itself, never its target
        write_atomic(directory / "kustomization.yaml",
                     _MARKER + "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n"
                     + "".join(f"- {n}\n" for n in names))
    except OSError as exc:
        raise InputError(f"--output-dir {shown_path(str(directory))}: cannot write: {os_problem(exc)}") from None
    return [directory / n for n in names]
