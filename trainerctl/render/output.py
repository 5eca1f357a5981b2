"""Writing a render: one YAML stream (kustomize's style) or JSON, or one file per object."""

from __future__ import annotations

import json
import re
from pathlib import Path

import yaml

from trainerctl.errors import InputError
from trainerctl.kustomize.yamlio import dump, dump_all

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


def check_output_dir(directory: str | Path) -> set[str]:
    """The files earlier runs wrote in `directory` (see owned_files); refuses a path that cannot be ours.

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
            return set()
        text = index.read_text(encoding="utf-8") if index.is_file() else ""
        if not text.startswith(_MARKER):
            raise InputError(f"{flag}: not empty and not written by trainerctl render")
        return owned_files(directory)
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"{flag}: cannot read: {getattr(exc, 'strerror', None) or exc}") from None


def is_ours(index: Path) -> bool:
    """Whether `index` is a kustomization.yaml written by `render --output-dir`."""
    try:
        with open(index, encoding="utf-8") as fh:
            return fh.read(len(_MARKER)) == _MARKER
    except (OSError, UnicodeDecodeError):
        return False


def owned_files(directory: Path) -> set[str]:
    """Paths (relative, "/"-separated) of what earlier runs wrote: every kustomization.yaml under
    `directory` that starts with our marker, and the files it lists. A listed path that would
    leave its folder is never ours."""
    out: set[str] = set()
    root = directory.resolve()
    for index in sorted(directory.rglob("kustomization.yaml")):
        text = index.read_text(encoding="utf-8")
        if not text.startswith(_MARKER):
            continue
        folder = index.parent
        out.add(index.relative_to(directory).as_posix())
        try:
            listed = (yaml.safe_load(text) or {}).get("resources") or []
        except (yaml.YAMLError, AttributeError):
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
    try:
        directory.mkdir(parents=True, exist_ok=True)
        for rel, text in files.items():
            path = directory / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        stale = sorted(previous - set(files), key=lambda rel: -rel.count("/"))
        for rel in stale:
            (directory / rel).unlink(missing_ok=True)
        for rel in stale:
            for folder in (directory / rel).parents:
                if folder == directory or not folder.is_relative_to(directory):
                    break
                if folder.is_dir() and not any(folder.iterdir()):
                    folder.rmdir()
    except OSError as exc:
        raise InputError(f"--output-dir {directory}: cannot write: {exc.strerror}") from None
    return [directory / rel for rel in files]


def write_dir(objects: list[dict], directory: str | Path) -> list[Path]:
    """One file per object plus a kustomization.yaml listing them in apply order."""
    names = file_names(objects)
    files = {name: dump_all([obj]) for obj, name in zip(objects, names)}
    files["kustomization.yaml"] = kustomization_file(names)
    return write_files(directory, files)[:-1]
