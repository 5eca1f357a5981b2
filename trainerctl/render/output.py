"""Writing a render: one YAML stream (kustomize's style) or JSON, or one file per object."""

from __future__ import annotations

import json
import re
from pathlib import Path

from trainerctl.errors import InputError
from trainerctl.kustomize.cachedwrite import dump_all as cached_dump_all
from trainerctl.kustomize.yamlio import dump, dump_all
from trainerctl.parsed_cache import ParsedCache
from trainerctl.trust.bounded_read import os_problem, read_input, shown_path
from trainerctl.trust.document_bounds import load_yaml
from trainerctl.trust.safe_write import LinkedFolder, linked_folder, remove_quietly, write_tree

FORMATS = ("yaml", "json")
_MARKER = "# Written by `trainerctl render --output-dir`; files listed here are replaced on the next run.\n"
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def write_stream(objects: list[dict], fmt: str = "yaml", cache: ParsedCache | None = None) -> str:
    """The objects as one stream; `cache` keeps large objects' YAML between runs."""
    if fmt == "yaml":
        return cached_dump_all(objects, cache)
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


def check_output_dir(directory: str | Path) -> set[str]:
    """The files earlier runs wrote in `directory` (see owned_files); refuses a path that cannot be ours.

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
            return set()
        # A symlink in the index's place is not ours (and may point anywhere): refuse the folder.
        if not is_ours(index):
            raise InputError(f"{flag}: not empty and not written by trainerctl render")
        return owned_files(directory)
    except OSError as exc:
        raise InputError(f"{flag}: cannot read: {os_problem(exc)}") from None


def is_ours(index: Path) -> bool:
    """Whether `index` is a kustomization.yaml written by `render --output-dir`."""
    return our_index(index) is not None


def our_index(index: Path) -> str | None:
    """The text of `index` when `render --output-dir` wrote it (a regular file, never a symlink,
    starting with our marker), else None."""
    try:
        if index.is_symlink() or not index.is_file():
            return None
        text = read_input(str(index), f"--output-dir: {shown_path(str(index))}", "source-file").decode("utf-8")
    except (OSError, InputError, UnicodeDecodeError):
        return None
    return text if text.startswith(_MARKER) else None


def owned_files(directory: Path) -> set[str]:
    """Paths (relative, "/"-separated) of what earlier runs wrote: every kustomization.yaml under
    `directory` that starts with our marker, and the files it lists. A listed path that would
    leave its folder is never ours."""
    out: set[str] = set()
    root = directory.resolve()
    for index in sorted(directory.rglob("kustomization.yaml")):
        text = our_index(index)
        if text is None:
            continue
        folder = index.parent
        out.add(index.relative_to(directory).as_posix())
        try:
            listed = (load_yaml(text, str(index)) or {}).get("resources") or []
        except (InputError, AttributeError):
            listed = []
        for name in listed:
            if not isinstance(name, str) or "/" in name or name in ("", ".", ".."):
                continue
            path = folder / name
            resolved = path.resolve()
            if resolved.parent == folder.resolve() and resolved.is_relative_to(root) and not resolved.is_dir():
                out.add(path.relative_to(directory).as_posix())
    return out


def file_names(objects: list[dict]) -> list[str]:
    """One file name per object (file_name), made unique where kind and name repeat across API groups."""
    names: list[str] = []
    for obj in objects:
        name = file_name(obj)
        if name in names:  # same kind and name in two API groups
            group = str(obj.get("apiVersion", "")).rpartition("/")[0] or "core"
            name = name[:-5] + "_" + _UNSAFE.sub("-", group) + ".yaml"
        names.append(name)
    return names


def kustomization_file(resources: list[str], metadata: dict | None = None) -> str:
    """A kustomization.yaml listing `resources`, marked as ours."""
    doc: dict = {"apiVersion": "kustomize.config.k8s.io/v1beta1", "kind": "Kustomization"}
    if metadata:
        doc["metadata"] = metadata
    doc["resources"] = list(resources)
    return _MARKER + dump(doc)


def write_files(directory: str | Path, files: dict[str, str]) -> list[Path]:
    """Write `files` (relative path -> text) under `directory`, replacing what earlier runs wrote.

    Files a previous run wrote and this one does not are removed, and folders that leaves empty
    (an object dropped from the render must disappear from a GitOps repo too); a non-empty
    directory trainerctl did not write is refused rather than mixed with.
    """
    directory = Path(directory)
    previous = check_output_dir(directory)
    shown = shown_path(str(directory))
    try:
        written = write_tree(directory, files)
        stale = sorted(previous - set(files), key=lambda rel: -rel.count("/"))
        for rel in stale:
            if not linked_folder(directory, directory / rel):
                remove_quietly(directory / rel)  # a symlink is removed itself, never its target
        for rel in stale:
            for folder in (directory / rel).parents:
                if folder == directory or not folder.is_relative_to(directory) or folder.is_symlink():
                    break
                if folder.is_dir() and not any(folder.iterdir()):
                    folder.rmdir()
    except LinkedFolder as exc:  # it would send our writes out of the directory the user gave
        raise InputError(f"--output-dir {shown}: {exc}") from None
    except OSError as exc:
        raise InputError(f"--output-dir {shown}: cannot write: {os_problem(exc)}") from None
    return written


def write_dir(objects: list[dict], directory: str | Path) -> list[Path]:
    """One file per object plus a kustomization.yaml listing them in apply order."""
    names = file_names(objects)
    files = {name: dump_all([obj]) for obj, name in zip(objects, names)}
    files["kustomization.yaml"] = kustomization_file(names)
    return write_files(directory, files)[:-1]
