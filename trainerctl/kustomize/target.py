"""One kustomization's build: accumulate resources and bases, generate, transform.

The order follows kustomize's KustTarget: resources → configurations → generators →
components → transformers (patchesStrategicMerge, patches, namespace, prefix/suffix, labels,
annotations, patchesJson6902, replicas, images, replacements). Name hashes, name references
and local-config pruning happen once, at the top (see `build`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from trainerctl.kustomize import generators, kustfile, remote, yamlio
from trainerctl.kustomize.config import TransformerConfig
from trainerctl.kustomize.errors import KustomizeError
from trainerctl.kustomize.loader import Loader, find_kustomization
from trainerctl.kustomize.resource import Resource
from trainerctl.kustomize.transformers import patches, replacements, simple


@dataclass
class Accumulated:
    resources: list[Resource] = field(default_factory=list)
    config: TransformerConfig = field(default_factory=TransformerConfig.default)
    kustomization: dict = field(default_factory=dict)

    def append(self, r: Resource, where: str) -> None:
        key = r.id.key()
        for existing in self.resources:
            if existing.id.key() == key:
                raise KustomizeError(
                    f"{where}: may not add resource with an already registered id: {r.id}"
                )
        self.resources.append(r)

    def absorb_generated(self, r: Resource, where: str) -> None:
        gvk, name = r.gvk, r.name
        want_ns = r.id.effective_namespace
        matches = [
            e for e in self.resources
            if e.gvk == gvk and any(
                n == name and ("" if gvk.cluster_scoped else (ns or "default")) == want_ns
                for n, ns in e.all_names()
            )
        ]
        if not matches:
            if r.behavior in ("merge", "replace"):
                raise KustomizeError(f"{where}: {r.id} does not exist; cannot merge or replace")
            self.append(r, where)
            return
        old = matches[0]
        if r.behavior == "create":
            raise KustomizeError(f"{where}: {r.id} exists; behavior must be merge or replace")
        md = r.metadata
        labels = {**old.labels(), **r.labels()}
        annotations = {**old.annotations(), **r.annotations()}
        if labels:
            md["labels"] = labels
        if annotations:
            md["annotations"] = annotations
        md["name"] = old.name
        if old.namespace:
            md["namespace"] = old.namespace
        if r.behavior == "merge":
            for key in ("data", "binaryData"):
                merged = {**(old.obj.get(key) or {}), **(r.obj.get(key) or {})}
                if merged or key in old.obj or key in r.obj:
                    r.obj[key] = merged
        r.previous = list(old.previous)
        r.affixes = list(old.affixes)
        self.resources[self.resources.index(old)] = r


def _load_file_resources(text: str, source: str) -> list[Resource]:
    out = []
    for doc in yamlio.load_all(text, source):
        if not isinstance(doc, dict):
            raise KustomizeError(f"{source}: expected a Kubernetes object, got {type(doc).__name__}")
        items = [doc]
        if doc.get("kind") == "List" or (doc.get("kind", "").endswith("List") and "items" in doc
                                         and "metadata" not in doc):
            items = [i for i in (doc.get("items") or []) if i]
        for obj in items:
            if not isinstance(obj, dict) or not obj.get("kind"):
                raise KustomizeError(f"{source}: missing `kind` in object {_brief(obj)}")
            md = obj.get("metadata")
            if not isinstance(md, dict) or not md.get("name"):
                raise KustomizeError(f"{source}: missing metadata.name in object {_brief(obj)}")
            out.append(Resource(obj, source))
    return out


def _brief(obj) -> str:
    text = repr(obj)
    return text if len(text) < 80 else text[:77] + "..."


class Builder:
    """Builds kustomization directories; shares the remote fetcher across the whole build."""

    def __init__(self, fetcher: remote.Fetcher):
        self.fetcher = fetcher

    def build_dir(self, loader: Loader, component_parent: Accumulated | None = None) -> Accumulated:
        kfile = find_kustomization(loader.root, loader.name(""))
        kname = loader.name(kfile.name)
        k = kustfile.parse(_read(kfile, kname), kname)
        is_component = k.get("kind") == "Component"
        if (component_parent is not None) != is_component:
            if is_component:
                raise KustomizeError(f"{kname}: a Component can only be used under `components`")
            raise KustomizeError(f"{kname}: expected kind Component for a `components` entry")
        acc = component_parent if component_parent is not None else Accumulated()
        acc.kustomization = k

        for path in list(k.get("resources") or []) + list(k.get("bases") or []):
            self._accumulate(acc, loader, path, kname)

        for cfg_path in k.get("configurations") or []:
            acc.config.load_file(loader.read_text(cfg_path), loader.name(cfg_path))
        if k.get("crds"):
            raise KustomizeError(f"{kname}: field `crds` is not supported by trainerctl")

        defaults = k.get("generatorOptions") or {}
        for i, gen in enumerate(k.get("configMapGenerator") or []):
            acc.absorb_generated(generators.generate("ConfigMap", gen, loader, defaults, i), kname)
        for i, gen in enumerate(k.get("secretGenerator") or []):
            acc.absorb_generated(generators.generate("Secret", gen, loader, defaults, i), kname)

        for path in k.get("components") or []:
            sub = self._child_loader(loader, path, kname)
            self.build_dir(sub, component_parent=acc)
            acc.kustomization = k

        self._transform(acc, k, loader, kname)
        if k.get("vars"):
            raise KustomizeError(f"{kname}: field `vars` is not supported by trainerctl; use replacements")
        return acc

    def _transform(self, acc: Accumulated, k: dict, loader: Loader, kname: str) -> None:
        res, cfg = acc.resources, acc.config
        if k.get("patchesStrategicMerge"):
            patches.apply_patches_strategic_merge(res, k["patchesStrategicMerge"], loader)
        if k.get("patches"):
            patches.apply_patches(res, k["patches"], loader)
        if k.get("namespace"):
            simple.set_namespace(res, k["namespace"], cfg.specs["namespace"])
        if k.get("namePrefix") or k.get("nameSuffix"):
            specs = cfg.specs["namePrefix"] if k.get("namePrefix") else cfg.specs["nameSuffix"]
            simple.add_affix(res, k.get("namePrefix") or "", k.get("nameSuffix") or "", specs)
        for i, entry in enumerate(k.get("labels") or []):
            where = f"{kname}: labels[{i}]"
            kustfile.check_fields(entry, {"pairs", "includeSelectors", "includeTemplates", "fields"}, where)
            from trainerctl.kustomize.fieldspecs import FieldSpec

            specs = [FieldSpec.parse(f, where) for f in entry.get("fields") or []]
            if entry.get("includeSelectors"):
                specs += cfg.specs["commonLabels"]
            else:
                specs.append(FieldSpec(("metadata", "labels"), create=True))
                if entry.get("includeTemplates"):
                    specs += cfg.specs["templateLabels"]
            simple.set_map_entries(res, entry.get("pairs") or {}, specs, where)
        if k.get("commonLabels"):
            simple.set_map_entries(res, k["commonLabels"], cfg.specs["commonLabels"], f"{kname}: commonLabels")
        if k.get("commonAnnotations"):
            simple.set_map_entries(res, k["commonAnnotations"], cfg.specs["commonAnnotations"],
                                   f"{kname}: commonAnnotations")
        if k.get("patchesJson6902"):
            patches.apply_patches_json6902(res, k["patchesJson6902"], loader)
        if k.get("replicas"):
            simple.set_replicas(res, k["replicas"], cfg.specs["replicas"], kname)
        if k.get("images"):
            simple.set_images(res, k["images"], cfg.specs["images"], kname)
        if k.get("replacements"):
            replacements.apply(res, k["replacements"], loader)

    def _child_loader(self, loader: Loader, path: str, kname: str) -> Loader:
        if remote.is_remote(path):
            top, directory = self.fetcher.clone(path, kname)
            return Loader(directory.resolve(), loader.chain + (loader.root,), top.resolve(),
                          self.fetcher, path)
        candidate = loader.root / path
        if not candidate.is_dir():
            raise KustomizeError(f"{kname}: resource {path!r}: no such file or directory")
        return loader.child(candidate, f"{loader.display}/{path}" if loader.display else str(candidate))

    def _accumulate(self, acc: Accumulated, loader: Loader, path: str, kname: str) -> None:
        if remote.is_remote(path):
            if self.fetcher.looks_like_git(path):
                sub = self._child_loader(loader, path, kname)
                self._merge(acc, self.build_dir(sub), kname)
            else:
                data = self.fetcher.get_file(path, kname)
                for r in _load_file_resources(data.decode("utf-8", "replace"), path):
                    acc.append(r, kname)
            return
        candidate = loader.root / path
        if candidate.is_dir():
            sub = self._child_loader(loader, path, kname)
            self._merge(acc, self.build_dir(sub), kname)
            return
        text = loader.read_text(path)
        for r in _load_file_resources(text, loader.name(path)):
            acc.append(r, loader.name(path))

    @staticmethod
    def _merge(acc: Accumulated, sub: Accumulated, where: str) -> None:
        for r in sub.resources:
            acc.append(r, where)
        acc.config.merge(sub.config)


def _read(path: Path, name: str) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise KustomizeError(f"{name}: cannot read: {exc}") from None
