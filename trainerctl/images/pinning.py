"""Ask the registries: each image's digest (`--pin-digests`), or whether it exists (the checklist's
`images` check: `check --images`, `install --check-images`). Images are asked for in parallel, a
few at a time."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Callable, TypeVar

from trainerctl.images.image_uses import ListedImage, list_images
from trainerctl.registry.client import NotFound, Registries, RegistryError, RegistrySettings

WORKERS = 8
T = TypeVar("T")


def _each(images: list[ListedImage], ask: Callable[[ListedImage], T]) -> list[T]:
    if len(images) <= 1:
        return [ask(i) for i in images]
    pool = ThreadPoolExecutor(max_workers=min(WORKERS, len(images)), thread_name_prefix="trainerctl-registry")
    try:
        futures = [pool.submit(ask, i) for i in images]
        return [f.result() for f in futures]
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def _outcome(registries: Registries, listed: ListedImage) -> tuple[str | None, RegistryError | None]:
    try:
        return registries.digest(listed.location), None
    except RegistryError as exc:
        return None, exc


def pin_digests(images: list[ListedImage], registries: Registries) -> None:
    """Set each image's digest from its registry; one line naming the failures if any fails."""
    outcomes = _each(images, lambda listed: _outcome(registries, listed))
    failed = [(listed, exc) for listed, (_, exc) in zip(images, outcomes) if exc is not None]
    if failed:
        first = failed[0][1]
        more = f" (and {len(failed) - 1} more image(s) failed)" if len(failed) > 1 else ""
        raise type(first)(f"--pin-digests: {first}{more}")
    for listed, (digest, _) in zip(images, outcomes):
        listed.digest = digest


def image_problems(objects: list[dict], registries: Registries) -> list[str]:
    """One line per image that does not exist or cannot be asked about, naming where it runs."""
    images = list_images(objects)
    outcomes = _each(images, lambda listed: _outcome(registries, listed))
    lines = []
    for listed, (_, exc) in zip(images, outcomes):
        if exc is not None:
            used = listed.uses[0].shown() + (f" and {len(listed.uses) - 1} more" if len(listed.uses) > 1 else "")
            verdict = "missing" if isinstance(exc, NotFound) else "cannot be checked"
            lines.append(f"{verdict}: {exc} (used by {used})")
    return lines


@dataclass(frozen=True)
class ImageCheck:
    """The checklist's `images` check (cluster/trainer/checklist.py): the images' problems, asked of
    their registries (none: all exist); `flag`, how the user asked for it, which its finding names."""

    settings: RegistrySettings
    flag: str

    def __call__(self, objects: list[dict]) -> list[str]:
        registries = Registries(self.settings)
        try:
            return image_problems(objects, registries)
        finally:
            registries.close()
