"""The images of a render, each with every object and container that runs it and the setting that
chooses it: the params.env keys holding it (and the RELATED_IMAGE_* variables that set those), or,
for an image written in the upstream manifests themselves, its name (a kustomize `images:` entry)."""

from __future__ import annotations

from dataclasses import dataclass, field

from trainerctl.render.image_refs import describe, image_fields, related_images
from trainerctl.registry.names import Location, locate

_UNKNOWN_ORIGIN = "the rendered objects"


@dataclass(frozen=True)
class Use:
    """One place an image runs: an object's container, or an ImageStream tag."""

    kind: str
    name: str
    namespace: str | None
    field: str
    container: str | None = None
    tag: str | None = None
    component: str | None = None  # the render's set: manifests, runtimes, imagestreams

    def to_dict(self) -> dict:
        return {k: v for k, v in (("kind", self.kind), ("namespace", self.namespace), ("name", self.name),
                                  ("container", self.container), ("tag", self.tag), ("field", self.field),
                                  ("component", self.component)) if v is not None}

    def identity(self) -> tuple:
        return self.kind, self.namespace, self.name, self.field

    def shown(self) -> str:
        where = f"container {self.container}" if self.container else f"tag {self.tag}" if self.tag else self.field
        return f"{describe({'kind': self.kind, 'metadata': {'name': self.name, 'namespace': self.namespace}})} {where}"


@dataclass
class ListedImage:
    image: str  # as rendered
    location: Location
    origin: str  # the setting that put it there (an override, a params.env key, the manifests)
    keys: tuple[str, ...] = ()  # params.env keys holding it; empty: written in the manifests
    variables: tuple[str, ...] = ()  # RELATED_IMAGE_* variables that set those keys (or this image name)
    uses: list[Use] = field(default_factory=list)
    digest: str | None = None  # its digest: the one it names, or the one its registry gave (--pin-digests)

    @property
    def pinned(self) -> str | None:
        return self.location.pinned(self.digest) if self.digest else None

    def to_dict(self) -> dict:
        loc = self.location
        out = {"image": self.image, "registry": loc.registry, "repository": loc.repository, "tag": loc.tag,
               "digest": self.digest, "pinned": self.pinned, "origin": self.origin,
               "paramsKeys": list(self.keys), "relatedImages": list(self.variables),
               "usedBy": [u.to_dict() for u in self.uses]}
        return {k: v for k, v in out.items() if v is not None}


def _variables(keys: tuple[str, ...], name: str) -> tuple[str, ...]:
    return tuple(var for var, spec in related_images().items()
                 if set(keys) & set(spec.params) or (not keys and name in spec.images))


def list_images(objects: list[dict], *, origins: dict[str, str] | None = None,
                image_keys: dict[str, tuple[str, ...]] | None = None,
                components: dict[str, list[dict]] | None = None) -> list[ListedImage]:
    """Every image of `objects`, sorted, each once, with its uses in object order. `origins`,
    `image_keys` and `components` come from the render (RenderResult); a rendered file (-f) has
    none of them."""
    component_of = {id(o): name for name, objs in (components or {}).items() for o in objs}
    found: dict[str, ListedImage] = {}
    for obj in objects:
        meta = obj.get("metadata") or {}
        for f in image_fields(obj):
            listed = found.get(f.image)
            if listed is None:
                loc = locate(f.image, f"{describe(obj)} {f.path}")
                keys = tuple((image_keys or {}).get(f.image, ()))
                listed = found[f.image] = ListedImage(f.image, loc, (origins or {}).get(f.image, _UNKNOWN_ORIGIN),
                                                      keys, _variables(keys, loc.name), digest=loc.digest)
            listed.uses.append(Use(str(obj.get("kind")), str(meta.get("name")), meta.get("namespace"), f.path,
                                   f.container, f.tag, component_of.get(id(obj))))
    return [found[image] for image in sorted(found)]
